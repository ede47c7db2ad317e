"""Tokenising generated text the way the reference corpus is tokenised (word level).

Styles (``--normalise``; ``auto`` = ``ptb`` for ``ptb:*``, ``wikitext`` for ``wikitext-2:*``, else ``split``):

* ``split``: whitespace tokens, unchanged (text that is already in corpus form, e.g. a word-level LM's).
* ``ptb`` (Mikolov's PTB): lower-cased; clitics split off (``don't`` → ``do n't``, ``it's`` → ``it 's``);
  every number → ``N``; punctuation dropped unless the vocabulary has it (``$``, ``&``, ``'``);
  words outside the vocabulary → ``<unk>``.
* ``wikitext`` (WikiText-2): case kept; punctuation and clitics split off as tokens (``don't`` →
  ``don 't``, as WikiText writes it); separators inside numbers and hyphens inside words become ``@,@``,
  ``@.@``, ``@-@``, a ``:`` or ``/`` between digits a token of its own (``18 : 05``); tokens outside the
  vocabulary → ``<unk>``.

The vocabulary is the set of whitespace tokens of the corpus the bias is measured on. A whitespace token
that is already in the vocabulary is kept as it is (so corpus text, and a word-level LM's output, pass
through unchanged: normalisation is idempotent on corpus text); ``<eos>`` is always kept. Mapping
out-of-vocabulary words to ``<unk>`` changes no β (such words have no corpus bias), only which words μ
and σ of the generated text are taken over. Work is done once per distinct token (vectorised over tokens).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable, Sequence

import numpy as np

from genderscope.bordia.text import EOS
from genderscope.common.errors import UsageError

UNK = "<unk>"
STYLES = ("auto", "split", "ptb", "wikitext")

#: one piece of a non-vocabulary token: a stem before "n't", a clitic, a number, a word, any other char
_PIECE = re.compile(
    r"[A-Za-z]+(?=n't\b)|n't\b|'(?:s|re|ve|ll|d|m)\b|\d+(?:[.,:/-]\d+)*|[A-Za-z0-9]+(?:[-.&][A-Za-z0-9]+)*|\S",
    re.IGNORECASE,
)
_NUMBER = re.compile(r"\d")
_WIKI_SEP = re.compile(r"(?<=[A-Za-z0-9])([-,.])(?=[A-Za-z0-9])")
#: WikiText writes times and fractions as plain tokens: "18 : 05", "4 / 5"
_WIKI_PLAIN = re.compile(r"(?<=\d)([:/])(?=\d)")


def resolve_style(style: str, corpus: str) -> str:
    """``auto`` -> the style of a registry corpus name (``ptb``/``wikitext``), else ``split``."""
    if style not in STYLES:
        raise UsageError(f"--normalise must be one of {', '.join(STYLES)}, got {style!r}")
    if style != "auto":
        return style
    name = str(corpus).partition(":")[0]
    return {"ptb": "ptb", "wikitext-2": "wikitext"}.get(name, "split")


@dataclass
class Normaliser:
    """Maps whitespace tokens to corpus tokens (zero or more each) for one style and vocabulary."""

    style: str
    vocab: frozenset[str] = frozenset()
    _cache: dict[str, tuple[str, ...]] = field(default_factory=dict, repr=False)

    @property
    def maps_unknown(self) -> bool:
        return self.style != "split" and UNK in self.vocab

    def token(self, tok: str) -> tuple[str, ...]:
        """The corpus tokens of one whitespace token."""
        got = self._cache.get(tok)
        if got is None:
            got = self._cache[tok] = self._convert(tok)
        return got

    def _convert(self, tok: str) -> tuple[str, ...]:
        if self.style == "split" or tok == EOS or tok in self.vocab:
            return (tok,)
        if self.style == "ptb":
            low = tok.lower()
            if low in self.vocab:
                return (low,)
            out = []
            for p in _PIECE.findall(low):
                if _NUMBER.search(p):
                    out.append("N")
                elif not any(c.isalnum() for c in p):
                    if p in self.vocab:
                        out.append(p)
                else:
                    out.append(self._known(p))
            return tuple(out)
        pieces: list[str] = []
        for p in _PIECE.findall(tok):
            if p.lower() == "n't" and pieces:  # WikiText splits "don't" as "don 't", not PTB's "do n't"
                pieces[-1] += p[0]
                p = p[1:]
            pieces.append(p)
        out = []
        for p in pieces:
            for q in _WIKI_SEP.sub(r" @\1@ ", _WIKI_PLAIN.sub(r" \1 ", p)).split():
                out.append(q if q.startswith("@") and q.endswith("@") else self._known(q))
        return tuple(out)

    def _known(self, word: str) -> str:
        return word if not self.maps_unknown or word in self.vocab else UNK

    def text(self, text: str) -> list[str]:
        """Corpus tokens of a text."""
        return [p for t in text.split() for p in self.token(t)]

    def describe(self) -> dict[str, object]:
        return {"style": self.style, "vocabulary_size": len(self.vocab), "maps_unknown": self.maps_unknown}


def vocabulary(texts: Iterable[str]) -> frozenset[str]:
    """Whitespace token types of the corpus texts."""
    vocab: set[str] = set()
    for t in texts:
        vocab.update(t.split())
    return frozenset(vocab)


#: joins the texts into one string for a single ``str.split`` (never a token: texts holding it are split
#: one by one)
_SEPARATOR = "\x00"


def _whitespace_tokens(texts: Sequence[str]) -> tuple[list[str], np.ndarray | None]:
    """All whitespace tokens and, per token, the index of its text; None when the texts were joined by
    separator tokens (then a token's text is the number of separators before it)."""
    if len(texts) > 1 and not any(_SEPARATOR in t for t in texts):
        return f" {_SEPARATOR} ".join(texts).split(), None
    per_text = [t.split() for t in texts]
    lengths = np.fromiter(map(len, per_text), dtype=np.int64, count=len(per_text))
    return [w for ws in per_text for w in ws], np.repeat(np.arange(len(texts), dtype=np.int64), lengths)


def normalised_codes(texts: Sequence[str], norm: Normaliser) -> tuple[list[str], np.ndarray, np.ndarray]:
    """(types in first-occurrence order, ids, tokens per text) of the normalised texts: each distinct
    whitespace token is normalised once, then the pieces are laid out with array operations."""
    import pandas as pd

    flat, text_of_tok = _whitespace_tokens(texts)
    empty = ([], np.zeros(0, np.int64), np.zeros(len(texts), np.int64))
    if not flat:
        return empty
    codes, uniques = pd.factorize(np.array(flat, dtype=object))
    del flat
    if text_of_tok is None:
        sep = uniques.tolist().index(_SEPARATOR)
        text_of_tok = np.cumsum(codes == sep)
    pieces = [() if u == _SEPARATOR else norm.token(u) for u in uniques]
    n_pieces = np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces))
    if not n_pieces.any():
        return empty
    piece_codes, piece_types = pd.factorize(np.array([p for ps in pieces for p in ps], dtype=object))
    per_tok = n_pieces[codes]
    if (n_pieces == 1).all():  # every token is one piece (e.g. text in corpus form): no layout needed
        ids = piece_codes[codes]
    else:
        starts = np.zeros(len(pieces), np.int64)
        np.cumsum(n_pieces[:-1], out=starts[1:])
        total = int(per_tok.sum())
        # token i contributes pieces starts[code_i] … starts[code_i] + n_i − 1
        offs = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(per_tok) - per_tok, per_tok)
        ids = piece_codes[np.repeat(starts[codes], per_tok) + offs]
    out_lengths = np.bincount(text_of_tok, weights=per_tok, minlength=len(texts)).astype(np.int64)
    return list(piece_types), ids.astype(np.int64), out_lengths
