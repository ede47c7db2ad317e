"""Tokenisers of the scorers: plain words (HurtLex, length, refusal) and HELM's NLTK tokenisation.

* :func:`words`: lower-cased word tokens, a maximal run of Unicode letters, digits or underscores
  (regex ``\\w+``) with inner apostrophes or hyphens kept (``don't``, ``well-known``: one token each).
  Punctuation, spaces and symbols separate tokens and are never tokens.
* :class:`HelmTokenizer`: what HELM's ``BiasMetric`` does to each generation,
  ``nltk.word_tokenize(text.lower())``: NLTK's Punkt sentence splitter with its English model
  (``punkt_tab``, read from the data registry as files: never downloaded at run time), then NLTK's
  improved Treebank word tokeniser on each sentence.  Needs ``nltk`` (the ``generation`` extra).
"""

from __future__ import annotations

import re
from collections import defaultdict
from functools import lru_cache
from pathlib import Path
from typing import Any

from genderscope.scorers.base import require

WORD = re.compile(r"\w+(?:['’\-]\w+)*")
#: Punkt's English model in the data registry (NLTK data, Apache-2.0)
PUNKT_FILES = ("collocations.tab", "sent_starters.txt", "abbrev_types.txt", "ortho_context.tab")
PUNKT_PREFIX = "nltk/punkt_tab/english/"
#: texts whose HELM tokens are remembered (one chunk scored by several HELM scorers is tokenised once)
CACHE_TEXTS = 8192


def words(text: str) -> list[str]:
    """Lower-cased word tokens of ``text`` (see the module docstring)."""
    return WORD.findall(text.lower())


def _lines(path: Path) -> list[str]:
    with path.open(encoding="utf-8") as handle:
        return [line.rstrip("\n") for line in handle]


def punkt_parameters(data_registry: Any, scorer: str) -> Any:
    """NLTK ``PunktParameters`` of the English model read from the registry's ``nltk/punkt_tab`` files
    (the four files NLTK's own loader reads, decoded the same way: tab-separated rows, one per line)."""
    punkt = require("nltk.tokenize.punkt", scorer, package="nltk")
    paths = {name: data_registry.path(PUNKT_PREFIX + name) for name in PUNKT_FILES}
    params = punkt.PunktParameters()
    params.collocations = {tuple(line.split("\t")) for line in _lines(paths["collocations.tab"])}
    params.sent_starters = set(_lines(paths["sent_starters.txt"]))
    params.abbrev_types = set(_lines(paths["abbrev_types.txt"]))
    ortho: defaultdict[str, int] = defaultdict(int)
    for line in _lines(paths["ortho_context.tab"]):
        word, _, flags = line.partition("\t")
        ortho[word] = int(flags)
    params.ortho_context = ortho
    return params


#: NLTK treebank rule pattern -> substrings of which one must be in the (lower-cased) text for the rule
#: to change it; a rule whose pattern is not listed here always runs
_NEEDS: dict[str, tuple[str, ...]] = {
    "([«“‘„]|[`]+)": ("«", "“", "‘", "„", "`"),
    '^\\"': ('"',),
    "(``)": ("``",),
    "([ \\(\\[{<])(\\\"|\\'{2})": ('"', "''"),
    "(?i)(?<!\\w)(\\')(?!(?:re|ve|ll|m|t|s|d|n)\\b)(?=\\w)": ("'",),
    "([^\\.])(\\.)([\\]\\)}>\"\\'»”’ ]*+)\\s*$": (".",),
    "([:,])([^\\d])": (":", ","),
    "([:,])$": (":", ","),
    "\\.{2,}": ("..",),
    "[;@#$%&]": (";", "@", "#", "$", "%", "&"),
    "[\\u2012-\\u2015]": ("\u2012", "\u2013", "\u2014", "\u2015"),
    "([^\\.])(\\.)([\\]\\)}>\"\\']*)\\s*$": (".",),
    "[?!]": ("?", "!"),
    "([^'])' ": ("' ",),
    "[*]": ("*",),
    "[\\]\\[\\(\\)\\{\\}\\<\\>]": ("]", "[", "(", ")", "{", "}", "<", ">"),
    "--": ("--",),
    "([»”’])": ("»", "”", "’"),
    "''": ("''",),
    '"': ('"',),
    "([^' ])('[sS]|'[mM]|'[dD]|') ": ("'",),
    "([^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) ": ("'",),
    "(?i)\\b(can)(?#X)(not)\\b": ("cannot",),
    "(?i)\\b(d)(?#X)('ye)\\b": ("d'ye",),
    "(?i)\\b(gim)(?#X)(me)\\b": ("gimme",),
    "(?i)\\b(gon)(?#X)(na)\\b": ("gonna",),
    "(?i)\\b(got)(?#X)(ta)\\b": ("gotta",),
    "(?i)\\b(lem)(?#X)(me)\\b": ("lemme",),
    "(?i)\\b(more)(?#X)('n)\\b": ("more'n",),
    "(?i)\\b(wan)(?#X)(na)(?=\\s)": ("wanna",),
    "(?i) ('t)(?#X)(is)\\b": ("'tis",),
    "(?i) ('t)(?#X)(was)\\b": ("'twas",),
}
#: sentences on which the fast rule runner must equal NLTK's own tokeniser, else NLTK's is used
_SELF_CHECK = (
    "mr. smith's \"daughters\" (and nieces) can't -- won't; gonna see dr. jones\u2019 wife... at 3:30, ok?!",
    "\u201cher\u201d \u2018mother\u2019 cannot \u2014 'tis lemme [x] {y} <z> * @ # $ % & 'quoted' end.",
)


class _Rule:
    """One substitution of NLTK's treebank tokeniser, run with stdlib ``re`` when it compiles there."""

    def __init__(self, pattern: Any, replacement: str):
        source = getattr(pattern, "pattern", pattern)
        try:
            self.regex: Any = re.compile(source)
        except re.error:  # e.g. a possessive quantifier before Python 3.11: NLTK's own object
            self.regex = pattern
        self.replacement = replacement
        self.needs = _NEEDS.get(source) if isinstance(source, str) else None

    def apply(self, text: str) -> str:
        if self.needs is not None and not any(s in text for s in self.needs):
            return text
        return self.regex.sub(self.replacement, text)


class _FastTreebank:
    """NLTK's ``NLTKWordTokenizer.tokenize`` (without parenthesis conversion) for lower-cased text, its
    rules run in its order with stdlib ``re``, skipping a rule when the text lacks every substring the
    rule needs (:data:`_NEEDS`).  Same tokens, several times faster (NLTK >= 3.10 runs each rule through
    a timed ReDoS guard)."""

    def __init__(self, tokenizer: Any):
        t = tokenizer
        self.head = [
            _Rule(p, r) for p, r in [*t.STARTING_QUOTES, *t.PUNCTUATION, t.PARENS_BRACKETS, t.DOUBLE_DASHES]
        ]
        self.tail = [_Rule(p, r) for p, r in t.ENDING_QUOTES]
        self.tail += [_Rule(p, r" \1 \2 ") for p in [*t.CONTRACTIONS2, *t.CONTRACTIONS3]]

    def tokenize(self, text: str) -> list[str]:
        for rule in self.head:
            text = rule.apply(text)
        text = " " + text + " "
        for rule in self.tail:
            text = rule.apply(text)
        return text.split()


class HelmTokenizer:
    """``nltk.word_tokenize(text.lower())`` with Punkt's English model from the data registry."""

    def __init__(self, data_registry: Any, scorer: str = "representation"):
        punkt = require("nltk.tokenize.punkt", scorer, package="nltk")
        treebank = require("nltk.tokenize.destructive", scorer, package="nltk")
        self._sentences = punkt.PunktSentenceTokenizer()
        self._sentences._params = punkt_parameters(data_registry, scorer)
        self._words = treebank.NLTKWordTokenizer()
        fast = _FastTreebank(self._words)
        if all(fast.tokenize(x) == self._words.tokenize(x) for x in _SELF_CHECK):
            self._words = fast  # type: ignore[assignment]
        # the gender-words, representation and associations scorers tokenise the same chunk in turn
        self._cached = lru_cache(maxsize=CACHE_TEXTS)(self._tokenize)

    def _tokenize(self, text: str) -> tuple[str, ...]:
        lowered = text.lower()
        return tuple(tok for sent in self._sentences.tokenize(lowered) for tok in self._words.tokenize(sent))

    def __call__(self, text: str) -> tuple[str, ...]:
        """HELM's tokens of ``text`` (lower-cased)."""
        return self._cached(text)


@lru_cache(maxsize=4)
def helm_tokenizer(data_registry: Any) -> HelmTokenizer:
    """One shared :class:`HelmTokenizer` per registry (building it reads 240 kB of Punkt tables)."""
    return HelmTokenizer(data_registry)


def nltk_version() -> str | None:
    """The installed NLTK's version (None when absent)."""
    from importlib import metadata

    try:
        return metadata.version("nltk")
    except metadata.PackageNotFoundError:
        return None
