"""NLTK's ``word_tokenize`` with the Punkt model read from the data registry (never downloaded).

GenderBench's evaluators call ``nltk.word_tokenize(text)``: Punkt (``punkt_tab``, English) splits
sentences, then NLTK's Treebank-style word tokenizer splits each sentence.  This module builds the same
two pieces from the registry's ``nltk/punkt_tab/english/*`` files, so the tokens are identical and no
``nltk.download`` happens.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import sqlite3
from functools import lru_cache
from pathlib import Path
from typing import Any

from genderscope.common.home import home

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


#: bump when :meth:`WordTokenizer._tokenize` changes what it returns (part of the token cache's key)
TOKENS_VERSION = 1
#: the kept tokens, under $GENDERSCOPE_HOME (one table per tokenizer key: nltk version, Punkt files)
TOKENS_CACHE = "cache/word-tokens.sqlite"


class WordTokenizer:
    """``nltk.word_tokenize`` (English, ``preserve_line=False``) on registry data; results cached in
    memory and, with ``cache`` (a SQLite file), across runs: a rerun over the same answers neither
    tokenizes again nor imports NLTK (whose import pulls in ``scipy.stats``).  The kept tokens of a text
    are keyed by the installed NLTK version, the sha256 of the four Punkt files and
    :data:`TOKENS_VERSION`: what decides them."""

    def __init__(self, data: Any, cache: Path | None = None):
        self._data = data
        self._nltk: tuple[Any, Any] | None = None
        self._kept = _TokenCache(cache, _tokenizer_key(data)) if cache is not None else None
        self.tokenize = lru_cache(maxsize=1 << 16)(self._lookup)

    def _lookup(self, text: str) -> tuple[str, ...]:
        if self._kept is None:
            return self._tokenize(text)
        found = self._kept.get(text)
        if found is None:
            found = self._tokenize(text)
            self._kept.add(text, found)
        return found

    def _tokenize(self, text: str) -> tuple[str, ...]:
        if self._nltk is None:
            from nltk.tokenize import NLTKWordTokenizer
            from nltk.tokenize.punkt import PunktSentenceTokenizer

            self._nltk = (PunktSentenceTokenizer(punkt_parameters(self._data)), NLTKWordTokenizer())
        sentences, words = self._nltk
        return tuple(tok for sent in sentences.tokenize(text) for tok in words.tokenize(sent))

    def __call__(self, text: str) -> tuple[str, ...]:
        return self.tokenize(text)

    def flush(self) -> None:
        """Write the tokens of new texts to the cache (also done at exit)."""
        if self._kept is not None:
            self._kept.flush()


def _tokenizer_key(data: Any) -> str:
    """sha256 of what decides the tokens: NLTK's version, the Punkt files' sha256, :data:`TOKENS_VERSION`."""
    from importlib.metadata import version

    parts = [f"v{TOKENS_VERSION}", f"nltk {version('nltk')}"] + [data.sha256(n) for n in PUNKT]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


class _TokenCache:
    """Tokens of texts in a SQLite file: (tokenizer key, sha256 of the text) -> the tokens as JSON.  New
    entries are written in batches; a file that cannot be read or written only costs the caching."""

    def __init__(self, path: Path, key: str):
        self.path, self.key = path, key
        self._new: list[tuple[str, str, str]] = []
        self._db: sqlite3.Connection | None = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(str(path), timeout=30.0, isolation_level=None, check_same_thread=False)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute(
                "CREATE TABLE IF NOT EXISTS tokens (key TEXT, text TEXT, tokens TEXT, "
                "PRIMARY KEY (key, text)) WITHOUT ROWID"
            )
            self._db = db
            atexit.register(self.flush)
        except (OSError, sqlite3.Error):
            self._db = None

    def get(self, text: str) -> tuple[str, ...] | None:
        if self._db is None:
            return None
        try:
            row = self._db.execute(
                "SELECT tokens FROM tokens WHERE key = ? AND text = ?", (self.key, _digest(text))
            ).fetchone()
        except sqlite3.Error:
            return None
        return tuple(json.loads(row[0])) if row else None

    def add(self, text: str, tokens: tuple[str, ...]) -> None:
        if self._db is not None:
            self._new.append((self.key, _digest(text), json.dumps(tokens, ensure_ascii=False)))
            if len(self._new) >= 5000:
                self.flush()

    def flush(self) -> None:
        rows, self._new = self._new, []
        if not rows or self._db is None:
            return
        try:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.executemany("INSERT OR IGNORE INTO tokens VALUES (?,?,?)", rows)
            self._db.execute("COMMIT")
        except (sqlite3.Error, UnicodeError):  # e.g. locked beyond the timeout: these stay uncached
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


_TOKENIZERS: dict[int, WordTokenizer] = {}


def word_tokenizer(data: Any) -> WordTokenizer:
    """The tokenizer for a data registry (built once per registry object; tokens kept across runs in
    :data:`TOKENS_CACHE` under $GENDERSCOPE_HOME)."""
    key = id(data)
    if key not in _TOKENIZERS:
        _TOKENIZERS[key] = WordTokenizer(data, home() / TOKENS_CACHE)
    return _TOKENIZERS[key]
