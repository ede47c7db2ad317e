"""The morphology packages of the detection rules, loaded once, offline, on first use.

* cs, sk, sl, hr, sr: ``simplemma`` 2.x, the lemma of a word form (dictionary lookup); MIT, code and data;
* ru, uk: ``pymorphy3`` + ``pymorphy3-dicts-ru`` / ``-uk``: part of speech, tense, number, gender, case;
  MIT, dictionaries from OpenCorpora / LanguageTool-uk;
* pl: ``morfeusz2`` (ships the SGJP dictionary): tags such as ``praet:sg:f:perf``, ``aglt:sg:pri``;
  licence: http://morfeusz.sgjp.pl/doc/license/.

All are the optional extra ``translation`` (``pip install 'genderscope[translation]'``); a missing one is a
one-line :class:`~genderscope.common.errors.UsageError` naming it.  Each lookup is cached per word.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from genderscope.common.errors import UsageError

EXTRA = "pip install 'genderscope[translation]'"

#: simplemma's language code for each language the lemma rules read
LEMMA_LANG = {"cs": "cs", "sk": "sk", "sl": "sl", "hr": "hbs", "sr": "hbs"}


def _missing(language: str, package: str) -> UsageError:
    return UsageError(f"gest-translation: detecting {language} needs the package {package!r}: {EXTRA}")


def require(language: str) -> None:
    """Fail with one line naming the extra unless the morphology of ``language`` is installed."""
    if language in LEMMA_LANG:
        _simplemma(language)
    elif language in ("ru", "uk"):
        _pymorphy(language)
    elif language == "pl":
        _morfeusz()


def _simplemma(language: str) -> Any:
    try:
        import simplemma
    except ImportError:
        raise _missing(language, "simplemma") from None
    return simplemma


@lru_cache(maxsize=None)
def _pymorphy(language: str) -> Any:
    try:
        import pymorphy3
    except ImportError:
        raise _missing(language, "pymorphy3") from None
    try:
        return pymorphy3.MorphAnalyzer(lang=language)
    except (ValueError, ImportError, OSError):  # the language's dictionary package is absent
        raise _missing(language, f"pymorphy3-dicts-{language}") from None


@lru_cache(maxsize=1)
def _morfeusz() -> Any:
    try:
        import morfeusz2
    except ImportError:
        raise _missing("pl", "morfeusz2") from None
    return morfeusz2.Morfeusz()


@lru_cache(maxsize=None)
def lemma(word: str, language: str) -> str:
    """simplemma's lemma of a lower-cased ``word`` (the word itself when the dictionary lacks it)."""
    return str(_simplemma(language).lemmatize(word, lang=LEMMA_LANG[language])).lower()


@lru_cache(maxsize=None)
def known(word: str, language: str) -> bool:
    """Whether simplemma's dictionary of ``language`` holds the form ``word``."""
    return bool(_simplemma(language).is_known(word, lang=LEMMA_LANG[language]))


@lru_cache(maxsize=None)
def pymorphy_tags(word: str, language: str) -> tuple[Any, ...]:
    """pymorphy3's tags of ``word`` (every parse, most probable first)."""
    return tuple(p.tag for p in _pymorphy(language).parse(word))


@lru_cache(maxsize=None)
def morfeusz_tags(word: str) -> tuple[tuple[int, int, str, str], ...]:
    """Morfeusz 2's segments of ``word``: (start node, end node, lemma, tag) per analysis path edge."""
    return tuple((i, j, str(a[1]), str(a[2])) for i, j, a in _morfeusz().analyse(word))
