"""MBBQ's Gender_identity rows (Neplenbroek et al. 2024) in English, Spanish, Dutch and Turkish, with their
control sets, as the task asks them: each row with its options, the right answer, the unknown answer and
the stereotyped (target) answer as MBBQ's ``get_samples`` finds it.

The target answer: the option whose group tag (``answer_info``, second entry; F/M read as woman/man) is
one of the stereotyped groups (``additional_metadata.stereotyped_groups``; ["F"] and ["M"] read as MBBQ's
lists of gendered words in the four languages, ``mbbq_detection.json``).  A row where no option or two
options are the target (16 of 544 in en, nl and tr, 28 in es: e.g. "boy" vs "man" with stereotyped group
F) has none: it counts for accuracy, not for the bias scores.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from genderscope.tasks.mbbq.detect import tables
from genderscope.tasks.scored.jsonl_rows import each_row

SETS = ("mbbq", "control")


def data_file(lang: str, which: str) -> str:
    """The registry name of a language's MBBQ (``which`` = mbbq) or control file."""
    return f"mbbq/Gender_identity{'_control' if which == 'control' else ''}_{lang}.jsonl"


@dataclass(frozen=True)
class Row:
    """One row: ``options`` (ans0..ans2), ``label`` (the right option), ``unknown`` (the unknown option),
    ``target`` (the stereotyped option, None when not exactly one), ``disamb``, ``template``
    (``question_index``: the resampling unit, shared by languages and sets)."""

    lang: str
    which: str
    example_id: int
    template: str
    disamb: bool
    label: int
    unknown: int
    target: int | None
    context: str
    question: str
    options: tuple[str, str, str]

    @property
    def key(self) -> str:
        return f"{self.lang}/{self.which}/{self.example_id}"


def _tag(info: Any) -> str:
    tag = info[1]
    return tables()["group_tags"].get(tag, tag)


def row_of(lang: str, which: str, raw: dict[str, Any]) -> Row:
    """A data row (KeyError/ValueError/TypeError/IndexError for a bad one)."""
    groups = raw["additional_metadata"]["stereotyped_groups"]
    words = tables()["stereotyped_words"]
    if groups in (["F"], ["M"]):
        groups = words[groups[0]]
    tags = [_tag(raw["answer_info"][f"ans{k}"]) for k in range(3)]
    unknown = [k for k, t in enumerate(tags) if t == "unknown"]
    targets = [k for k, t in enumerate(tags) if t in groups]
    label = int(raw["label"])
    if len(unknown) != 1 or label not in (0, 1, 2):
        raise ValueError(f"row {raw.get('example_id')}: needs one unknown answer and a label 0-2")
    return Row(
        lang, which, int(raw["example_id"]), str(raw["question_index"]),
        raw["context_condition"] == "disambig", label, unknown[0],
        targets[0] if len(targets) == 1 else None, str(raw["context"]), str(raw["question"]),
        (str(raw["ans0"]), str(raw["ans1"]), str(raw["ans2"])),
    )  # fmt: skip


def load_rows(registry: Any, lang: str, which: str, limit: int | None) -> list[Row]:
    """The first ``limit`` rows (all: None) of a language's MBBQ or control file, in file order."""
    rows = each_row(registry.path(data_file(lang, which)), lambda _n, r: row_of(lang, which, r))
    return rows if limit is None else rows[:limit]


def prompt_text(row: Row, prompt: int) -> str:
    """MBBQ's prompt ``prompt`` (1-5) in the row's language, filled with its context, question and options
    (``get_samples``: the template stripped, then ``str.format``)."""
    template = tables()["prompts"][row.lang][prompt - 1].strip()
    return template.format(row.context, row.question, *row.options)
