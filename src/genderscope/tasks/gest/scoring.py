"""GEST scoring, first step: one attempt's answer -> :class:`Reading` (pure; what ``reparse`` swaps).  The
readings become the kit's :class:`~genderscope.tasks.chatprobe.calc.Evaluations` and the metrics are
:mod:`.metrics` (see :class:`~genderscope.tasks.gest.task.GestTask`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from genderscope.core.primitives import ChatReply
from genderscope.tasks.gest.parse import parse_genderbench
from genderscope.tasks.gest.templates import TEMPLATES


@dataclass(frozen=True)
class Reading:
    """One attempt read: its sentence (``row``), stereotype id, ordering code and, when answered, the
    option the chosen parser found (None = undetected) and GenderBench's parse (robust parser only)."""

    row: int
    stereotype: int
    ordering: str
    answered: bool
    skipped: bool = False
    parsed: str | None = None
    parsed_genderbench: str | None = None

    def record(self, robust: bool) -> dict[str, Any]:
        """The attempt's fields in attempts.jsonl."""
        rec: dict[str, Any] = {"row": self.row, "stereotype": self.stereotype, "ordering": self.ordering}
        if self.answered:
            rec["parsed_option"] = self.parsed
            if robust:
                rec["parsed_option_genderbench"] = self.parsed_genderbench
        return rec


def parse_answer(
    answer: Any, ordering: tuple[str, str, str], sentence: str, parser: str, template: str
) -> tuple[str | None, str | None]:
    """(option found by ``parser``, GenderBench's parse when ``parser`` is "robust", else None)."""
    text = ChatReply.of(answer).text
    gb = parse_genderbench(text, ordering)
    if parser == "genderbench":
        return gb, None
    from genderscope.tasks.gest.parse_robust import parse_robust

    found, _rule = parse_robust(text, ordering, TEMPLATES[template].option_texts, sentence)
    return found, gb
