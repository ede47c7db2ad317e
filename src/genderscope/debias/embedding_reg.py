"""Bordia & Bowman's regulariser λ‖Ê[N] B‖²_F on a transformer's input embeddings.

The word-level version (:class:`genderscope.bordia.lm.regularizer.BiasRegularizer`) indexes a dictionary
of words; a transformer has sub-word tokens.  Here a pair word counts when it is ONE token of the
tokenizer, spelled as it appears inside a sentence (``" he"``: with the leading space for byte-level BPE
and SentencePiece) and at a sentence start (``"He"``), each spelling giving its own defining pair (both
words must be single tokens in that spelling); N = every vocabulary token that decodes to an alphabetic
word of at least two letters that is not a listed gender word (special tokens left out).  B, κ and the
normalisation are the word-level code's.
"""

from __future__ import annotations

from typing import Any, Sequence

from genderscope.bordia.lm.regularizer import BiasRegularizer
from genderscope.common.errors import UsageError

SPELLINGS = (" {w}", "{w}", " {W}", "{W}")


def _single_id(tok: Any, text: str) -> int | None:
    ids = tok(text, add_special_tokens=False)["input_ids"]
    return ids[0] if len(ids) == 1 else None


def defining_ids(tok: Any, pairs: Sequence[tuple[str, str]]) -> list[tuple[int, int]]:
    """(male id, female id) for every pair and spelling where both words are single tokens (distinct)."""
    out: list[tuple[int, int]] = []
    seen: set[tuple[int, int]] = set()
    for m, f in pairs:
        for form in SPELLINGS:
            a = _single_id(tok, form.format(w=m, W=m.capitalize()))
            b = _single_id(tok, form.format(w=f, W=f.capitalize()))
            if a is not None and b is not None and a != b and (a, b) not in seen:
                seen.add((a, b))
                out.append((a, b))
    return out


def neutral_ids(tok: Any, gendered: set[str]) -> list[int]:
    """Vocabulary ids of alphabetic word tokens (≥ 2 letters, not special, not a gender word)."""
    special = set(tok.all_special_ids)
    out = []
    for i in range(len(tok)):
        if i in special:
            continue
        w = tok.decode([i]).strip()
        if len(w) >= 2 and w.isalpha() and w.lower() not in gendered:
            out.append(i)
    return out


def token_regularizer(
    tok: Any,
    pairs: Sequence[tuple[str, str]],
    lam: float,
    kappa: str | int = "variance",
    var_ratio: float = 0.5,
) -> BiasRegularizer:
    """The regulariser over the tokenizer's vocabulary (see the module docstring)."""
    defining = defining_ids(tok, pairs)
    if not defining:
        raise UsageError("none of the gender pairs is a single token in both words for this tokenizer")
    gendered = {w.lower() for p in pairs for w in p}
    return BiasRegularizer.from_ids(defining, neutral_ids(tok, gendered), lam, kappa, var_ratio)
