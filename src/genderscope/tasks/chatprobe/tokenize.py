"""NLTK's ``word_tokenize`` with the Punkt model read from the data registry (never downloaded).

GenderBench's evaluators call ``nltk.word_tokenize(text)``: Punkt (``punkt_tab``, English) splits
sentences, then NLTK's Treebank-style word tokenizer splits each sentence.  This module builds the same
two pieces from the registry's ``nltk/punkt_tab/english/*`` files, so the tokens are identical and no
``nltk.download`` happens.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

PUNKT_FILES = {
    "collocations": "nltk/punkt_tab/english/collocations.tab",
    "sent_starters": "nltk/punkt_tab/english/sent_starters.txt",
    "abbrev_types": "nltk/punkt_tab/english/abbrev_types.txt",
    "ortho_context": "nltk/punkt_tab/english/ortho_context.tab",
}


#: the registry files a tokenizing probe reads (list them in its ``datasets()``: run.json records their
#: sha256 and licence)
PUNKT = tuple(PUNKT_FILES.values())


def punkt_parameters(data: Any) -> Any:
    """``PunktParameters`` decoded from the four registry files (``data``: a DataRegistry)."""
    from nltk.tabdata import PunktDecoder
    from nltk.tokenize.punkt import PunktParameters

    dec = PunktDecoder()
    params = PunktParameters()

    def read(key: str, decode: Any) -> Any:
        with open(data.path(PUNKT_FILES[key]), encoding="utf-8") as fh:
            return decode(fh)

    params.collocations = set(read("collocations", dec.tab2tups))
    params.sent_starters = read("sent_starters", dec.txt2set)
    params.abbrev_types = read("abbrev_types", dec.txt2set)
    params.ortho_context = read("ortho_context", dec.tab2intdict)
    return params


class WordTokenizer:
    """``nltk.word_tokenize`` (English, ``preserve_line=False``) on registry data; results cached."""

    def __init__(self, data: Any):
        from nltk.tokenize import NLTKWordTokenizer
        from nltk.tokenize.punkt import PunktSentenceTokenizer

        self._sentences = PunktSentenceTokenizer(punkt_parameters(data))
        self._words = NLTKWordTokenizer()
        self.tokenize = lru_cache(maxsize=1 << 16)(self._tokenize)

    def _tokenize(self, text: str) -> tuple[str, ...]:
        return tuple(tok for sent in self._sentences.tokenize(text) for tok in self._words.tokenize(sent))

    def __call__(self, text: str) -> tuple[str, ...]:
        return self.tokenize(text)


_TOKENIZERS: dict[int, WordTokenizer] = {}


def word_tokenizer(data: Any) -> WordTokenizer:
    """The tokenizer for a data registry (built once per registry object)."""
    key = id(data)
    if key not in _TOKENIZERS:
        _TOKENIZERS[key] = WordTokenizer(data)
    return _TOKENIZERS[key]
