"""HONEST's templates (MilaNLProc/honest ``resources/``, MIT): one TSV per language and identity set.

Each row: ``template_masked`` (the sentence, ``[M]`` where the completion goes, always ``… [M].`` at the
end), ``raw`` (the sentence frame, ``[I]`` for the identity term), ``identity``, ``number``,
``category`` (the identity group: ``female``/``male``, or one of the eight queer/non-queer groups) and
``type`` (occupation, descriptive adjective or verb).

The ``honest`` package keys its templates by ``template_masked`` (``read_csv(index_col=0).T.to_dict()``),
so a sentence listed twice is one template, in the place of its first row, with the fields of its last
row (e.g. English "the child …" is listed female and male and counts as male). :func:`load_templates` does
the same, so that scores are over the same templates as the reference's.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from genderscope.common.errors import DataError

#: template languages (ISO 639-1), in the paper's order of the binary sets
LANGUAGES = ("en", "es", "fr", "it", "pt", "ro")
BINARY, QUEER = "binary", "queer_nonqueer"
#: identity sets and the languages each has templates for
SETS = {BINARY: LANGUAGES, QUEER: ("en",)}
_COLUMNS = ("template_masked", "raw", "identity", "number", "category", "type")
MASK = "[M]"
#: the ending every template has: the completion slot and a full stop
ENDING = " [M]."


@dataclass(frozen=True)
class Template:
    """One HONEST template: ``text`` (``template_masked``), its ``frame`` (``raw``), ``identity`` term,
    identity ``group`` (the file's ``category``), ``number`` and ``kind`` (the file's ``type``)."""

    text: str
    frame: str
    identity: str
    group: str
    number: str
    kind: str

    @property
    def prompt(self) -> str:
        """The text before the slot, for causal LMs: ``text`` without its final `` [M].``."""
        return self.text[: -len(ENDING)] if self.text.endswith(ENDING) else self.text.split(MASK)[0].rstrip()

    def masked(self, mask_token: str) -> str:
        """``text`` with ``[M]`` replaced by the masked LM's mask token."""
        return self.text.replace(MASK, mask_token)


def dataset_name(identity_set: str, language: str) -> str:
    """Registry name of a template file, e.g. ``honest/binary/en_template.tsv``."""
    return f"honest/{identity_set}/{language}_template.tsv"


def read_templates(path: Path) -> list[Template]:
    """The file's templates, one per distinct ``template_masked`` (first row's place, last row's fields); a
    malformed file is a one-line DataError naming file and line."""
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            rows = list(csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"{path}: cannot read the HONEST templates ({exc})") from None
    if not rows or set(rows[0]) != set(_COLUMNS) or len(rows[0]) != len(_COLUMNS):
        raise DataError(f"{path}:1: expected the HONEST header columns {', '.join(_COLUMNS)}")
    where = {name: rows[0].index(name) for name in _COLUMNS}
    by_text: dict[str, Template] = {}
    for number, row in enumerate(rows[1:], start=2):
        if len(row) != len(_COLUMNS):
            raise DataError(
                f"{path}:{number}: expected {len(_COLUMNS)} tab-separated fields, found {len(row)}"
            )
        field = {name: row[i] for name, i in where.items()}
        if MASK not in field["template_masked"]:
            raise DataError(f"{path}:{number}: template_masked has no {MASK} slot")
        t = Template(
            field["template_masked"],
            field["raw"],
            field["identity"],
            field["category"],
            field["number"],
            field["type"],
        )
        by_text[t.text] = t  # a repeated sentence keeps its first place and takes the later row's fields
    return list(by_text.values())


def load_templates(data_registry, identity_set: str, language: str) -> list[Template]:  # noqa: ANN001
    """The templates of one set and language from the data registry (:func:`read_templates`)."""
    return read_templates(data_registry.path(dataset_name(identity_set, language)))


def first_frames(templates: list[Template], n: int) -> list[Template]:
    """The templates of the first ``n`` distinct sentence frames (``raw``, in order of first appearance),
    every identity term of each: a ``--limit`` that keeps the identity groups balanced (the files list
    one identity's templates after another, so the first ``n`` rows would hold one group only)."""
    kept: dict[str, None] = {}
    for t in templates:
        if len(kept) >= n:
            break
        kept.setdefault(t.frame)
    return [t for t in templates if t.frame in kept]


def queer_side(group: str) -> str:
    """``queer`` or ``nonqueer`` for a group of the queer/non-queer set (``queer_gender`` -> ``queer``)."""
    return "nonqueer" if group.startswith("nonqueer") else "queer"
