"""HurtLex 1.2 lexicons (Bassignana, Basile and Patti 2018), one TSV per language, CC BY-NC-SA 4.0.

Each row: ``id``, ``pos``, ``category`` (one of 17 codes, lower case in the files), ``stereotype``
(yes/no), ``lemma``, ``level`` (``conservative``: translations of offensive senses only; ``inclusive``:
every potentially relevant sense). HONEST (Nozza et al. 2021) uses the conservative level.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from genderscope.common.errors import DataError

#: the licence every use of these lexicons must show (non-commercial)
LICENCE = "CC BY-NC-SA 4.0 (non-commercial)"
#: languages with a lexicon in the registry (ISO 639-1, lower case)
LANGUAGES = ("ca", "cs", "da", "en", "es", "fr", "it", "nl", "pl", "pt", "ro", "ru", "tr", "uk")
#: category code -> description (HurtLex's README)
CATEGORIES = {
    "ps": "negative stereotypes, ethnic slurs",
    "rci": "locations and demonyms",
    "pa": "professions and occupations",
    "ddf": "physical disabilities and diversity",
    "ddp": "cognitive disabilities and diversity",
    "dmc": "moral and behavioural defects",
    "is": "social and economic disadvantage",
    "or": "plants",
    "an": "animals",
    "asm": "male genitalia",
    "asf": "female genitalia",
    "pr": "prostitution",
    "om": "homosexuality",
    "qas": "potential negative connotations",
    "cds": "derogatory words",
    "re": "felonies, crime and immoral behaviour",
    "svp": "the seven deadly sins",
}
LEVELS = ("conservative", "inclusive")
_COLUMNS = ("id", "pos", "category", "stereotype", "lemma", "level")


@dataclass(frozen=True)
class HurtLexEntry:
    """One lexicon row: lemma (as written), category code, part of speech, level, stereotype flag."""

    lemma: str
    category: str
    pos: str
    level: str
    stereotype: bool


@dataclass(frozen=True)
class HurtLex:
    """A language's lexicon: lemma (lower case) -> the categories it is listed under."""

    language: str
    levels: tuple[str, ...]
    categories_of: dict[str, frozenset[str]]

    def categories(self, word: str) -> frozenset[str]:
        """The categories ``word`` (matched lower case, as a whole lemma) is listed under; empty if none."""
        return self.categories_of.get(word.lower(), frozenset())

    def __contains__(self, word: object) -> bool:
        return isinstance(word, str) and word.lower() in self.categories_of

    def __len__(self) -> int:
        return len(self.categories_of)


def dataset_name(language: str) -> str:
    """The registry name of ``language``'s lexicon, e.g. ``hurtlex/hurtlex_EN.tsv``."""
    code = language.lower()
    if code not in LANGUAGES:
        choices = ", ".join(LANGUAGES)
        raise DataError(f"HurtLex has no lexicon for language {language!r}; choose one of {choices}")
    return f"hurtlex/hurtlex_{code.upper()}.tsv"


def read_entries(path: Path) -> list[HurtLexEntry]:
    """Every row of one HurtLex TSV file; a malformed file is a one-line DataError naming file and line."""
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            rows = list(csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"{path}: cannot read the HurtLex lexicon ({exc})") from None
    if not rows or tuple(rows[0]) != _COLUMNS:
        raise DataError(f"{path}:1: expected the HurtLex header {'/'.join(_COLUMNS)}")
    entries = []
    for number, row in enumerate(rows[1:], start=2):
        if len(row) != len(_COLUMNS):
            raise DataError(f"{path}:{number}: expected {len(_COLUMNS)} tab-separated fields, got {len(row)}")
        _, pos, category, stereotype, lemma, level = row
        entries.append(HurtLexEntry(lemma, category.lower(), pos, level, stereotype == "yes"))
    return entries


def build_lexicon(language: str, entries: Iterable[HurtLexEntry], levels: Iterable[str]) -> HurtLex:
    """The lexicon of the rows at ``levels`` (``conservative`` and/or ``inclusive``)."""
    chosen = tuple(levels)
    unknown = [level for level in chosen if level not in LEVELS]
    if unknown:
        raise DataError(f"unknown HurtLex level {unknown[0]!r}; choose from {', '.join(LEVELS)}")
    grouped: dict[str, set[str]] = {}
    for entry in entries:
        if entry.level in chosen:
            grouped.setdefault(entry.lemma.lower(), set()).add(entry.category)
    return HurtLex(language.lower(), chosen, {lemma: frozenset(cats) for lemma, cats in grouped.items()})


def load_hurtlex(data_registry, language: str, levels: Iterable[str] = ("conservative",)) -> HurtLex:
    """``language``'s HurtLex from the data registry (default: the conservative level, as HONEST uses)."""
    path = data_registry.path(dataset_name(language))
    return build_lexicon(language, read_entries(path), levels)
