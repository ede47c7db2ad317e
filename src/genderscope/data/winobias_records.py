"""WinoBias records: a parsed line (:class:`WinoBiasLine`, its :class:`Mention`s), pro/anti pairs,
an evaluated set, the parse error, and the occupation lists (:data:`OCCUPATIONS`)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from genderscope.common.errors import DataError
from genderscope.data.winobias_tables import FEMALE_OCCUPATIONS, MALE_OCCUPATIONS, MISSPELLINGS


class WinoBiasParseError(DataError):
    """One or more WinoBias lines failed the checks of spec §2.4 (every failure is listed)."""

    def __init__(self, failures: list[str]):
        self.failures = failures
        head = (
            f"{len(failures)} WinoBias line(s) cannot be parsed (pass --on-parse-error exclude to drop "
            "their pairs): "
        )
        super().__init__(head + "; ".join(failures[:20]) + (" ..." if len(failures) > 20 else ""))


class _LineError(Exception):
    pass


@dataclass(frozen=True)
class Mention:
    """A located mention in the normalised sentence: name at [start, end), optional determiner."""

    occupation: str  # canonical name
    start: int
    end: int
    det_start: int | None  # offset of "the"/"a"/"an" before it, or None
    det: str | None  # the determiner as written


@dataclass(frozen=True)
class WinoBiasLine:
    """One parsed sentence (spec §2.4).  Offsets refer to ``sentence``."""

    release: str
    file: str  # e.g. "pro_stereotyped_type1.txt.dev"
    line: int  # 1-based position
    label: str  # "pro" | "anti" (from the file name)
    raw: str  # the line as stored (after the 2018-03-authors edits), without the number prefix
    sentence: str  # normalised sentence, brackets removed (§3.4)
    entity1: str
    entity2: str
    referent: str
    other: str
    referent_gender: str  # stereotype gender of the referent: "male" | "female"
    pronoun_spans: tuple[str, ...]
    pronoun: str  # text of the last span
    pronoun_gender: str
    mention1: Mention
    mention2: Mention
    pronoun_ranges: tuple[tuple[int, int], ...]
    flags: tuple[str, ...] = ()

    @property
    def entities(self) -> tuple[str, str]:
        return (self.entity1, self.entity2)

    @property
    def female_first(self) -> bool:
        return OCCUPATIONS.gender(self.entity1) == "female"

    def masked(self) -> str:
        """The sentence with pronoun spans replaced by a placeholder (for pro/anti text comparison)."""
        out, last = [], 0
        for s, e in self.pronoun_ranges:
            out.append(self.sentence[last:s])
            out.append("\x00")
            last = e
        out.append(self.sentence[last:])
        return "".join(out)


@dataclass(frozen=True)
class WinoBiasPair:
    """Pro line N and anti line N; ``flags`` = union of both lines' flags and the pair-level flags."""

    line: int
    pro: WinoBiasLine
    anti: WinoBiasLine
    flags: tuple[str, ...] = ()


@dataclass
class WinoBiasSet:
    """The evaluated pairs of one (release, type, split) plus what was excluded and why."""

    release: str
    wb_type: int
    split: str
    pairs: list[WinoBiasPair]
    excluded: list[dict[str, Any]] = field(default_factory=list)
    flag_counts: dict[str, int] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)  # logical names read

    @property
    def n_female_first(self) -> int:
        return sum(p.pro.female_first for p in self.pairs)


class _Occupations:
    """The 40 occupation names (``winobias/male_occupations.txt``, ``female_occupations.txt``)."""

    def __init__(self) -> None:
        self.male: tuple[str, ...] = MALE_OCCUPATIONS
        self.female: tuple[str, ...] = FEMALE_OCCUPATIONS
        self._gender = {n: "male" for n in self.male} | {n: "female" for n in self.female}
        self._regex: dict[bool, re.Pattern[str]] = {}
        self._checked = False

    def load(self, data: Any) -> None:
        """Check the occupation files of ``head`` against the built-in lists (sha256-verified files)."""
        if self._checked:
            return
        for g, expected in (("male", self.male), ("female", self.female)):
            name = f"winobias/{g}_occupations.txt"
            text = data.path(name).read_text(encoding="utf-8")
            names = tuple(w.strip().lower() for w in text.split("\n") if w.strip())
            if names != expected:
                raise DataError(f"{name}: occupation list differs from the built-in one ({len(names)} names)")
        self._checked = True

    def gender(self, canonical: str) -> str:
        return self._gender[canonical]

    @property
    def all(self) -> tuple[str, ...]:
        return self.male + self.female

    def regex(self, misspellings: bool) -> re.Pattern[str]:
        if misspellings not in self._regex:
            forms = list(self.all) + (list(MISSPELLINGS) if misspellings else [])
            forms.sort(key=len, reverse=True)
            alt = "|".join(re.escape(f).replace(r"\ ", " ") for f in forms)
            self._regex[misspellings] = re.compile(rf"(?<![^\W_])({alt})(?![^\W_])", re.IGNORECASE)
        return self._regex[misspellings]


OCCUPATIONS = _Occupations()
