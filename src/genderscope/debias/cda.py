"""Counterfactual data augmentation (Zmigrod et al. 2019; Webster et al. 2020; bias-bench's ``cda``):
every gendered word of a (male, female) pair list swapped for its counterpart, both directions at once.

* case is kept: ``He`` -> ``She``, ``HIS`` -> ``HER``, ``he`` -> ``she``;
* possessive and contracted forms keep their suffix: ``king's`` -> ``queen's``, ``he's`` -> ``she's``;
* a word listed with several counterparts takes the first pair's (``her`` -> ``his`` when the list has
  (his, her) before (him, her): the object reading ``him`` is not recovered, as in bias-bench);
* two-sided: a text yields itself and its swapped copy (:func:`augment`), so the data stay balanced.
"""

from __future__ import annotations

import re
from typing import Iterable, Sequence

_WORD = re.compile(r"[A-Za-z]+")


def swap_table(pairs: Sequence[tuple[str, str]]) -> dict[str, str]:
    """Lower-case word -> its counterpart, both directions; the first pair that names a word wins."""
    table: dict[str, str] = {}
    for m, f in pairs:
        m, f = m.lower(), f.lower()
        table.setdefault(m, f)
        table.setdefault(f, m)
    return table


def _cased(word: str, like: str) -> str:
    if like.isupper() and len(like) > 1:
        return word.upper()
    if like[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


def swap_gender(text: str, table: dict[str, str]) -> str:
    """``text`` with every listed word replaced by its counterpart (case kept, suffixes untouched)."""

    def one(m: re.Match[str]) -> str:
        w = m.group(0)
        other = table.get(w.lower())
        return _cased(other, w) if other is not None else w

    return _WORD.sub(one, text)


def augment(texts: Iterable[str], table: dict[str, str]) -> list[str]:
    """Two-sided CDA: each text followed by its swapped copy when the swap changes it."""
    out: list[str] = []
    for t in texts:
        out.append(t)
        s = swap_gender(t, table)
        if s != t:
            out.append(s)
    return out
