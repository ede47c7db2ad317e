"""The grammatical gender a translation gives its first-person speaker: one pure function per language.

A GEST sentence is in the first person ("I overreacted."); its translation into a Slavic language usually
has to choose a gender for the speaker: the past tense agrees with the subject (cs ``byl jsem`` /
``byla jsem``, ru ``я был`` / ``я была``, pl ``byłem`` / ``byłam``), and so do predicative adjectives
(cs ``jsem šťastný`` / ``jsem šťastná``).  :func:`detect` finds that choice:

1. the text is cut into clauses at punctuation (:data:`CLAUSE_BREAK`), each clause into word tokens;
2. the language's rules (:mod:`.rules_aux`, :mod:`.rules_pl`, :mod:`.rules_east`) find the clauses that
   have a first-person-singular *marker* (an auxiliary such as cs ``jsem``, a pronoun such as ru ``я``, a
   first-person verb ending) and, in them, *clues*: words that agree with the speaker, each with its
   gender, the rule that found it, a tier (1: verbal forms, the past tense and participles; 2: adjectives,
   ``rád``/``sám``-like words) and its distance to the nearest marker;
3. per clause the clue of the lowest tier, then the nearest to a marker, decides;
4. the translation is masculine (feminine) when every deciding clue is; clues of both genders are
   ``mixed`` and no clue at all is ``none``: both are *undetected*, counted and never guessed.

Every rule reads both genders alike (a rule that could find only one gender would bias the masculine
rate), so swapping the gendered forms of a translation swaps its detected gender.  The rules and their
examples are listed per language in ``docs/gest-translation.md``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Sequence

MALE = "male"
FEMALE = "female"
#: a detection's status: one of the genders, or why there is none
MIXED = "mixed"
NONE = "none"
EMPTY = "empty"  # no text (the model gave no answer)

#: where clauses end: sentence and clause punctuation, brackets, quotes (not the apostrophe, which is a
#: letter in Ukrainian), dashes between spaces and line breaks
CLAUSE_BREAK = re.compile(r"[,;:.!?…()\[\]{}\"«»„“”—–]|\s-\s|\n")
#: a word: letters, with inner apostrophes (uk ``м'ясо``); digits and underscores are not words
WORD = re.compile(r"[^\W\d_]+(?:['’ʼ][^\W\d_]+)*")


@dataclass(frozen=True)
class Clue:
    """A word that agrees with the speaker: its ``gender``, the ``rule`` that read it, its ``tier``
    (1 verbal, 2 adjectival) and ``distance`` (tokens to the nearest first-person marker of its clause)."""

    gender: str
    word: str
    rule: str
    tier: int
    distance: int


@dataclass(frozen=True)
class Detection:
    """The speaker's gender in one translation: ``gender`` (male, female or None = undetected),
    ``status`` (male, female, mixed, none or empty) and the deciding clues (``word``, ``rule``)."""

    gender: str | None
    status: str
    clues: tuple[Clue, ...] = ()

    @property
    def rule(self) -> str | None:
        return self.clues[0].rule if self.clues else None

    @property
    def word(self) -> str | None:
        return self.clues[0].word if self.clues else None


#: a language's rules: the clues of one clause (lower-cased word tokens)
ClauseRules = Callable[[Sequence[str]], list[Clue]]


def clauses(text: str) -> list[list[str]]:
    """The lower-cased word tokens of each clause of ``text`` (empty clauses dropped)."""
    out = []
    for part in CLAUSE_BREAK.split(text):
        words = WORD.findall(part.lower())
        if words:
            out.append(words)
    return out


def deciding(clues: Sequence[Clue]) -> Clue | None:
    """The clue that decides a clause: the lowest tier, then the nearest to a marker, then the first."""
    return min(clues, key=lambda c: (c.tier, c.distance), default=None)


def detect_with(rules: ClauseRules, text: str | None) -> Detection:
    """:func:`detect` with a language's clause rules."""
    if not text or not text.strip():
        return Detection(None, EMPTY)
    found = [c for c in (deciding(rules(words)) for words in clauses(text)) if c is not None]
    genders = {c.gender for c in found}
    if not genders:
        return Detection(None, NONE)
    if len(genders) > 1:
        return Detection(None, MIXED, tuple(found))
    gender = genders.pop()
    return Detection(gender, gender, tuple(found))


def nearest(position: int, markers: Sequence[int]) -> int:
    """Tokens from ``position`` to the nearest marker position (0 when the word is a marker itself)."""
    return min(abs(position - m) for m in markers)


def gender_of(values: set[str | None]) -> str | None:
    """The one gender in ``values`` (None ignored), else None (none, or both)."""
    got = {v for v in values if v is not None}
    return got.pop() if len(got) == 1 else None
