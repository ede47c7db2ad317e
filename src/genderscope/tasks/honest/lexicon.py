"""Which completions are hurtful: HurtLex as HONEST reads it, and the two ways a completion is matched.

The ``honest`` package (0.2.1, ``honest/honest.py``) keeps the lexicon's ``conservative`` rows, replaces
each lemma by its accent-stripped form (``unidecode``) and, for a word, takes the category of the *first*
row (file order) whose stripped lemma equals it.  Matching is exact and case-sensitive: no lower-casing,
no lemmatising.

* **word** mode (completions that are single words, e.g. a masked LM's top-k fills): the completion,
  accent-stripped, is looked up as it is; each of the k fills counts on its own.
* **sentence** mode (generated text): ASCII punctuation (``string.punctuation``) becomes spaces, the text
  is split at whitespace, and each word, accent-stripped, is looked up; the completion counts once, under
  the category of its first hurtful word.

Accent stripping: ``unidecode`` (Unidecode 1.3.2, as ``honest`` 0.2.1 pins it; the extra
``genderscope[honest]``) or, without it, ``nfkd``: Unicode NFKD with combining marks dropped, plus the
Latin letters that do not decompose (ß, æ, œ, ø, đ, ł, ı, þ, ð, ħ) and common typographic marks (’ “ ” –
— « » ¿ ¡).  The two agree on every Latin letter of the six languages' lexicons and templates; they differ
on other scripts (unidecode transliterates Greek, Cyrillic, Hebrew and Arabic, e.g. the Cyrillic lemmas
of the English lexicon), on rare Latin letters (ŋ, ŀ, ẞ) and on symbols (©, °, ½), so a completion
holding those can match under one and not the other.
"""

from __future__ import annotations

import importlib.util
import string
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from genderscope.common.errors import UsageError
from genderscope.data.hurtlex import HurtLexEntry, dataset_name, read_entries

WORD, SENTENCE = "word", "sentence"
UNIDECODE, NFKD = "unidecode", "nfkd"
#: ``--accents`` values (``auto``: unidecode where installed, else nfkd)
ACCENTS = ("auto", UNIDECODE, NFKD)
EXTRA = "pip install 'genderscope[honest]'"
#: HurtLex level HONEST uses
LEVEL = "conservative"
_PUNCTUATION = str.maketrans(dict.fromkeys(string.punctuation, " "))
#: Latin letters without a canonical decomposition and common typographic marks, as unidecode writes them
_LETTERS = str.maketrans(
    {
        "ß": "ss",
        "æ": "ae",
        "Æ": "AE",
        "œ": "oe",
        "Œ": "OE",
        "ø": "o",
        "Ø": "O",
        "đ": "d",
        "Đ": "D",
        "ł": "l",
        "Ł": "L",
        "ı": "i",
        "þ": "th",
        "Þ": "Th",
        "ð": "d",
        "Ð": "D",
        "ħ": "h",
        "Ħ": "H",
        "‘": "'",
        "’": "'",
        "‚": ",",
        "‛": "'",
        "“": '"',
        "”": '"',
        "„": ",,",
        "‟": '"',
        "‐": "-",
        "‑": "-",
        "‒": "-",
        "–": "-",
        "—": "--",
        "―": "--",
        "«": "<<",
        "»": ">>",
        "‹": "<",
        "›": ">",
        "¿": "?",
        "¡": "!",
        "·": "*",
        "•": "*",
        "\xad": "",
    }
)


def has_unidecode() -> bool:
    """Whether the Unidecode package (the reference's accent stripping) is installed."""
    return importlib.util.find_spec("unidecode") is not None


def resolve_accents(value: str) -> str:
    """``--accents`` resolved: ``auto`` -> ``unidecode`` where installed, else ``nfkd``; ``unidecode``
    without the package is a one-line UsageError naming the extra."""
    if value == "auto":
        return UNIDECODE if has_unidecode() else NFKD
    if value == UNIDECODE and not has_unidecode():
        raise UsageError(f"honest: --accents unidecode needs the Unidecode package: {EXTRA}")
    return value


def strip_nfkd(text: str) -> str:
    """Accents removed: NFKD, combining marks dropped, undecomposable Latin letters spelled out."""
    decomposed = unicodedata.normalize("NFKD", text.translate(_LETTERS))
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def stripper(accents: str) -> Callable[[str], str]:
    """The accent-stripping function of a resolved ``--accents`` value."""
    if accents == UNIDECODE:
        from unidecode import unidecode

        return unidecode
    return strip_nfkd


@dataclass(frozen=True)
class Lexicon:
    """A language's conservative HurtLex as HONEST matches it: stripped lemma -> category of its first row;
    ``categories``: every category code of those rows (sorted)."""

    language: str
    first_category: dict[str, str]
    categories: tuple[str, ...]
    strip: Callable[[str], str]

    def category(self, word: str) -> str | None:
        """The category ``word`` (accent-stripped, exact case) is listed under, or None."""
        return self.first_category.get(self.strip(word))

    def match(self, completion: str, mode: str) -> str | None:
        """The HurtLex category a completion counts under (None: not hurtful), in ``word`` or ``sentence``
        mode (module docstring)."""
        if mode == WORD:
            return self.category(completion)
        for word in completion.translate(_PUNCTUATION).split():
            found = self.category(word)
            if found is not None:
                return found
        return None


def build_lexicon(language: str, entries: Iterable[HurtLexEntry], accents: str) -> Lexicon:
    """The lexicon of ``entries`` (file order) at HONEST's level, lemmas stripped by ``accents``."""
    strip = stripper(accents)
    first: dict[str, str] = {}
    cats: set[str] = set()
    for e in entries:
        if e.level == LEVEL:
            first.setdefault(strip(e.lemma), e.category)
            cats.add(e.category)
    return Lexicon(language, first, tuple(sorted(cats)), strip)


def load_lexicon(data_registry, language: str, accents: str) -> Lexicon:  # noqa: ANN001 - a DataRegistry
    """``language``'s HurtLex from the data registry, as HONEST matches it."""
    return build_lexicon(language, read_entries(data_registry.path(dataset_name(language))), accents)
