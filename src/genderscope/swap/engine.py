"""The swap engine: one pass over the words of a text (a compiled regex, dict look-ups), a list of changes.

Directions: ``both`` (every gendered word becomes the other gender's), ``m2f`` (male words only),
``f2m`` (female words only), ``neutral`` (pronouns become they/them/their/theirs/themselves with verb
agreement, HELM's terms their neutral word; a gendered term or a name with no neutral form is kept and
the prompt flagged). Capitalisation is kept: "He" → "She", "HIS" → "HER". Names are swapped only when
capitalised ("James" or "JAMES"), for their rank-paired counterpart. See :mod:`genderscope.swap.rules` for
the "her"/"his" and verb-agreement rules.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from genderscope.common.errors import UsageError
from genderscope.swap import rules
from genderscope.swap.lexicon import Lexicon, default_lexicon

DIRECTIONS = ("both", "m2f", "f2m", "neutral")


@dataclass(frozen=True)
class Change:
    """One replacement: ``text[start:end]`` of the original was ``before`` and became ``after``.

    ``rule``: ``pronoun``, ``term``, ``name`` or ``agreement`` (a verb made plural for they).
    """

    start: int
    end: int
    before: str
    after: str
    rule: str


@dataclass(frozen=True)
class Swap:
    """The swapped text, its changes in text order, and why it is flagged (None: not flagged).

    No changes means the prompt had nothing to swap; it is still returned, never dropped.
    """

    text: str
    changes: tuple[Change, ...]
    flagged: str | None = None

    @property
    def changed(self) -> bool:
        return bool(self.changes)


def match_case(source: str, target: str) -> str:
    """``target`` in the case of ``source``: all upper (two letters or more), capitalised, or as given."""
    if len(source) > 1 and source.isupper():
        return target.upper()
    if source[:1].isupper():
        return target[:1].upper() + target[1:]
    return target


#: a word: the lexicon's words are letters only, so "\\w+" tokens have the same boundaries as HELM's "[^\\w]"
_WORD = re.compile(r"\w+")


@lru_cache(maxsize=8)
def _pronoun_table(lexicon: Lexicon) -> dict[str, tuple[str, tuple[int, ...]]]:
    """Pronoun -> (gender, the rows it is in)."""
    table: dict[str, tuple[str, tuple[int, ...]]] = {}
    for i, (_, female, male) in enumerate(lexicon.pronouns):
        for word, gender in ((female, "f"), (male, "m")):
            g, rows = table.get(word, (gender, ()))
            table[word] = (g, rows + (i,))
    return table


@lru_cache(maxsize=8)
def _nouns(lexicon: Lexicon) -> frozenset[str]:
    return frozenset(lexicon.terms)


def _wanted(gender: str, direction: str) -> bool:
    return direction in ("both", "neutral") or direction == ("m2f" if gender == "m" else "f2m")


class _Pass:
    """The state of one swap: the text, the edits found so far, the flags."""

    def __init__(self, text: str, direction: str, names: bool, lexicon: Lexicon):
        self.text, self.direction, self.names, self.lex = text, direction, names, lexicon
        self.edits: list[Change] = []
        self.flags: list[str] = []

    def edit(self, start: int, end: int, after: str, rule: str) -> None:
        before = self.text[start:end]
        after = match_case(before, after)
        if after != before:
            self.edits.append(Change(start, end, before, after, rule))

    def flag(self, why: str) -> None:
        if why not in self.flags:
            self.flags.append(why)

    def pronoun(self, m: re.Match[str], gender: str, rows: tuple[int, ...]) -> None:
        low = m.group().lower()
        row = rows[0]
        if len(rows) > 1:  # "her": object or determiner; "his": determiner or possessive pronoun
            if low == "her":
                row = (
                    rows[0]
                    if rules.her_is_object(self.text, m.start(), m.end(), _nouns(self.lex))
                    else rows[1]
                )
            else:
                row = rows[1] if rules.his_is_possessive(self.text, m.end()) else rows[0]
        neutral, female, male = self.lex.pronouns[row]
        if self.direction == "neutral":
            self.edit(m.start(), m.end(), neutral, "pronoun")
            if row == 0:
                self.agree(m)
        else:
            self.edit(m.start(), m.end(), male if gender == "f" else female, "pronoun")

    def agree(self, m: re.Match[str]) -> None:
        """Make the verb of subject "he"/"she" at ``m`` plural for "they", or flag the prompt."""
        text, word = self.text, m.group()
        prev = rules.prev_word(text, m.start())
        if prev is not None and prev.lower() in rules.INVERTED:
            if "?" in text[m.end() :].split(".")[0]:
                pstart = text.rindex(prev, 0, m.start())
                self.edit(pstart, pstart + len(prev), rules.IRREGULAR[prev.lower()], "agreement")
            else:
                self.flag(f"verb agreement undecidable after {prev!r} {word!r}")
            return
        tok, start, end = rules.next_token(text, m.end())
        if tok is not None and tok[:1] in "'’" and tok[1:].lower() == "s":
            self.contraction(start, end, word)
            return
        while (
            tok is not None
            and tok.lower() in rules.ADVERBS
            or (tok and tok.islower() and tok.endswith("ly") and tok not in rules.LY_NOT_ADVERB)
        ):
            tok, start, end = rules.next_token(text, end)
        if tok is None or tok in rules.SENTENCE_END:
            return
        if not rules.is_word(tok) or tok.lower() in ("who", "that"):
            self.flag(f"verb agreement undecidable after {word!r} {tok!r}")
            return
        plural = rules.plural_verb(tok)
        if plural is not None:
            self.edit(start, end, plural, "agreement")

    def contraction(self, start: int, end: int, word: str) -> None:
        """ "he's" → "they're" or "they've" by the next word, or flag."""
        nxt, _, _ = rules.next_token(self.text, end)
        low = (nxt or "").lower()
        if low in rules.HAS_NEXT:
            self.edit(start, end, self.text[start] + "ve", "agreement")
        elif rules.is_word(nxt) and not (low.endswith("ed") or low in rules.IRREGULAR_PARTICIPLES):
            self.edit(start, end, self.text[start] + "re", "agreement")
        else:
            self.flag(f"verb agreement undecidable for {word + self.text[start:end]!r} {nxt!r}")

    def term(self, m: re.Match[str], low: str) -> None:
        entry = self.lex.terms[low]
        if not _wanted(entry.gender, self.direction):
            return
        if self.direction != "neutral":
            self.edit(m.start(), m.end(), entry.other, "term")
        elif entry.neutral is not None:
            self.edit(m.start(), m.end(), entry.neutral, "term")
        else:
            self.flag(f"no neutral form for {m.group()!r}")

    def name(self, m: re.Match[str]) -> None:
        word = m.group()
        if not (word.isupper() or word.istitle()):
            return
        gender, other, _ = self.lex.names[word.title()]
        if not _wanted(gender, self.direction):
            return
        if self.direction == "neutral":
            self.flag(f"name {word!r} kept (no neutral form)")
        else:
            self.edit(m.start(), m.end(), other, "name")

    def run(self) -> Swap:
        table, terms, names = _pronoun_table(self.lex), self.lex.terms, self.lex.names
        for m in _WORD.finditer(self.text):
            low = m.group().lower()
            if low not in table and low not in terms and (not self.names or m.group().title() not in names):
                continue
            if low in table:
                gender, rows = table[low]
                if _wanted(gender, self.direction):
                    self.pronoun(m, gender, rows)
            elif low in self.lex.terms:
                self.term(m, low)
            elif self.names and m.group().title() in self.lex.names:
                self.name(m)
        return self.result()

    def result(self) -> Swap:
        edits = sorted(self.edits, key=lambda c: c.start)
        parts, pos = [], 0
        for c in edits:
            parts += [self.text[pos : c.start], c.after]
            pos = c.end
        parts.append(self.text[pos:])
        return Swap("".join(parts), tuple(edits), "; ".join(self.flags) or None)


def swap(text: str, direction: str = "both", names: bool = True, lexicon: Lexicon | None = None) -> Swap:
    """Swap the gendered words of ``text`` (pronouns, terms, first names when ``names``) in ``direction``.

    ``lexicon``: the word lists (default: :func:`~genderscope.swap.lexicon.default_lexicon`).
    """
    if direction not in DIRECTIONS:
        raise UsageError(f"unknown swap direction {direction!r}; use one of {', '.join(DIRECTIONS)}")
    return _Pass(text, direction, names, lexicon or default_lexicon()).run()
