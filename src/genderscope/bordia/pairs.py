"""Gender pair lists (column 1 = male, column 2 = female) and the pinned stop-word list. Spec §2.3–2.4."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from genderscope.common.errors import DataError

#: short names of the authors' pair files in the data registry
PAIR_FILES: dict[str, str] = {
    "penn": "bordia_bowman/penn-gender-pairs",
    "wiki": "bordia_bowman/wiki-gender-pairs",
    "dm": "bordia_bowman/dm-gender-pairs",
}
STOPWORDS_FILE = "stopwords/nltk_english.txt"
#: which pair list goes with which dataset
DATASET_PAIRS: dict[str, str] = {"ptb": "penn", "wikitext-2": "wiki", "cnn_dailymail": "dm"}


@dataclass(frozen=True)
class GenderPairs:
    """Ordered (male, female) pairs (duplicates kept) and the sets M, F, G = M ∪ F."""

    pairs: tuple[tuple[str, str], ...]
    name: str
    sha256: str
    fix_wife_husband: bool = False

    @cached_property
    def male(self) -> frozenset[str]:
        return frozenset(m for m, _ in self.pairs)

    @cached_property
    def female(self) -> frozenset[str]:
        return frozenset(f for _, f in self.pairs)

    @cached_property
    def gendered(self) -> frozenset[str]:
        return self.male | self.female

    def describe(self) -> dict[str, object]:
        return {
            "pairs_file": self.name,
            "pairs_sha256": self.sha256,
            "n_pairs": len(self.pairs),
            "fix_wife_husband": self.fix_wife_husband,
        }


def parse_gender_pairs(text: str, name: str = "<pairs>", fix_wife_husband: bool = False) -> GenderPairs:
    """Parse pair-file text: blank lines skipped, exactly two fields per other line (``FILE:LINE`` errors)."""
    pairs: list[tuple[str, str]] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != 2:
            raise DataError(f"{name}:{lineno}: expected 'male female', got {len(fields)} fields")
        m, f = fields
        if fix_wife_husband and m.lower() == "wife" and f.lower() == "husband":
            m, f = f, m
        pairs.append((m, f))
    both = {m for m, _ in pairs} & {f for _, f in pairs}
    if both:
        raise DataError(f"{name}: word(s) listed as both male and female: {', '.join(sorted(both))}")
    if not pairs:
        raise DataError(f"{name}: no gender pairs found")
    sha = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return GenderPairs(tuple(pairs), name, sha, fix_wife_husband)


def load_gender_pairs(spec: str | Path, fix_wife_husband: bool = False) -> GenderPairs:
    """``penn``/``wiki``/``dm`` (the authors' files from the data registry) or a path to a pair file."""
    from genderscope.bordia.text import read_text_file

    if str(spec) in PAIR_FILES:
        from genderscope.data.registry import DataRegistry

        path = DataRegistry().path(PAIR_FILES[str(spec)])
        name = str(spec)
    else:
        path = Path(spec)
        if not path.is_file():
            raise DataError(f"{spec}: no such pair file (or use penn, wiki, dm)")
        name = str(path)
    return parse_gender_pairs(read_text_file(path), name, fix_wife_husband)


def load_stopwords(spec: str | Path | None = "nltk") -> frozenset[str]:
    """``nltk`` (the pinned 178-word list), ``none``/None (no stop words) or a file with one word per line."""
    from genderscope.bordia.text import read_text_file

    if spec is None or str(spec) == "none":
        return frozenset()
    if str(spec) == "nltk":
        from genderscope.data.registry import DataRegistry

        path = DataRegistry().path(STOPWORDS_FILE)
    else:
        path = Path(spec)
    return frozenset(w for line in read_text_file(path).split("\n") for w in line.split())
