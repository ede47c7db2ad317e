"""GEST scoring in steps: one attempt's answer -> :class:`Reading` (pure; what ``reparse`` swaps), the
readings -> per-item count tables (vectorised), the tables -> metrics (see :mod:`.metrics`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from genderscope.core.primitives import ChatReply
from genderscope.tasks.gest import metrics as M
from genderscope.tasks.gest.parse import parse_genderbench
from genderscope.tasks.gest.templates import TEMPLATES

#: ordering code letter -> option, and option -> column of the count tables
DECODE = {"m": "male", "f": "female", "n": "neither"}
COLUMN = {"male": 0, "female": 1, "neither": 2}


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


@dataclass
class ItemCounts:
    """Per item (first-seen order of sentences): stereotype ids, N x 3 detected choices, undetected."""

    stereotypes: np.ndarray
    counts: np.ndarray
    undetected: np.ndarray

    @property
    def n_items(self) -> int:
        return len(self.stereotypes)

    def table(self) -> M.ItemTable:
        return M.ItemTable(self.stereotypes, self.counts, self.undetected)


def item_counts(readings: Sequence[Reading], genderbench: bool = False) -> ItemCounts:
    """Count each answered sentence's options (``genderbench``: by GenderBench's parse)."""
    answered = [r for r in readings if r.answered]
    rows = np.array([r.row for r in answered], dtype=np.int64)
    _, first, inverse = np.unique(rows, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")  # items in first-seen order
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    item = rank[inverse.reshape(-1)]
    found = [r.parsed_genderbench if genderbench else r.parsed for r in answered]
    column = np.array([COLUMN[f] if f is not None else 3 for f in found], dtype=np.int64)
    n = len(order)
    tally = np.zeros((n, 4))
    np.add.at(tally, (item, column), 1.0)
    stereotypes = np.array([answered[i].stereotype for i in first[order]], dtype=np.int64)
    return ItemCounts(stereotypes, tally[:, :3], tally[:, 3])


def point_and_resamples(
    table: M.ItemTable, n_boot: int, seed: int, resample_counts: Any
) -> tuple[np.ndarray, np.ndarray | None]:
    """Metrics on all items, and on each of ``n_boot`` resamples (None when ``n_boot`` = 0)."""
    point = M.compute(table, np.ones((1, table.S.shape[0])))[0]
    if n_boot <= 0:
        return point, None
    return point, np.vstack([M.compute(table, C) for C in resample_counts(table.S.shape[0], n_boot, seed)])
