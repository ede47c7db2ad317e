"""Czech, Slovak, Slovene, Croatian and Serbian: the past tense is an l-participle plus a first-person
auxiliary (cs ``byla jsem``, sk ``bola som``, sl ``bila sem``, hr/sr ``bila sam``), and the participle
agrees with the speaker.

Per clause (:mod:`.detect`):

* **markers** (first person singular): the language's auxiliaries and pronoun (:attr:`AuxLanguage.markers`:
  cs ``jsem``, ``bych``, ``abych``, ``kdybych``, ``já``; sk ``som``, ``ja``; sl ``sem``, ``bom``, ``jaz``;
  hr/sr ``sam``, ``bih``, ``ja``), and any verb form ending in ``-m`` (cs also ``-u``: ``nesu``) whose
  lemma is a verb (cs ``dělám``, sk ``robím``, sl ``delam``, hr ``radim``: the first person singular of
  the present tense);
* **tier 1, l-participle**: a word whose ending is the masculine or feminine participle ending
  (cs/sk/sl ``-l`` / ``-la``; hr/sr ``-o`` (not ``-lo``, the neuter) / ``-la``) and whose lemma is a verb
  (ends in an infinitive ending: cs ``-t``/``-ci``, sk ``-ť``/``-cť``, sl ``-ti``/``-či``, hr/sr
  ``-ti``/``-ći``); a masculine form whose own lemma is not a verb counts when its feminine form's is
  (sr ``video`` is also the noun *video*: ``videla`` → ``videti``), and so does one whose stem plus an
  infinitive ending is a dictionary lemma (hr ``zamolio`` → ``zamoliti``); a word the dictionary lacks
  altogether with a participle ending counts within two words of an auxiliary (cs ``jsem osmažila``);
* **tier 2, predicative adjective** within three words of an auxiliary or pronoun marker, of a
  first-person form of a copula verb (cs ``cítím se špinavá``) or of its infinitive (cs ``chci být
  silná``), but not of other verbs (cs ``mám dobrý plán`` is no clue): cs/sk the long forms (lemma
  ``-ý``/``-y``: masc = the lemma, fem = ``-á``/``-a``) and cs short forms (``přesvědčen``/
  ``přesvědčena``); sl/hr/sr masc = a lemma whose feminine (``-a``, with the fleeting vowel dropped:
  ``sretan``/``sretna``) and neuter (``-o``) are known forms of it, fem = that feminine;
* **tier 2, word pairs** anywhere in the clause: cs ``rád``/``ráda``, ``nerad``/``nerada``,
  ``sám``/``sama``; sk ``rád``/``rada``, ``nerád``/``nerada``, ``sám``/``sama``; sl ``rad``/``rada``,
  ``sam``/``sama`` (hr/sr ``sam`` is also the auxiliary, so ``sam``/``sama`` is not a clue there).

Serbian in Cyrillic is transliterated to Latin first (one letter table, :data:`SR_LATIN`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from genderscope.tasks.gest_translation import morph
from genderscope.tasks.gest_translation.detect import FEMALE, MALE, Clue, nearest

#: Serbian Cyrillic -> Latin (lower case)
SR_LATIN = str.maketrans(
    {
        "а": "a", "б": "b", "в": "v", "г": "g", "д": "d", "ђ": "đ", "е": "e", "ж": "ž", "з": "z",
        "и": "i", "ј": "j", "к": "k", "л": "l", "љ": "lj", "м": "m", "н": "n", "њ": "nj", "о": "o",
        "п": "p", "р": "r", "с": "s", "т": "t", "ћ": "ć", "у": "u", "ф": "f", "х": "h", "ц": "c",
        "ч": "č", "џ": "dž", "ш": "š",
    }
)  # fmt: skip
#: how far (in words) from a marker a predicative adjective may stand
ADJECTIVE_WINDOW = 3
#: how far (in words) from an auxiliary a word unknown to the dictionary with a participle ending may stand
UNKNOWN_WINDOW = 2


@dataclass(frozen=True)
class AuxLanguage:
    """The rules of one l-participle language (see the module docstring)."""

    code: str
    markers: frozenset[str]
    infinitive: tuple[str, ...]
    #: participle ending -> gender (None: an ending that rules a word out, e.g. the neuter ``-lo``)
    participle: tuple[tuple[str, str | None], ...]
    pairs: dict[str, str] = field(default_factory=dict)
    #: lemmas of verbs that take a predicative adjective (be, feel, become, stay)
    copulas: frozenset[str] = frozenset()
    #: endings of first-person singular present forms (with a verb lemma)
    present: tuple[str, ...] = ("m",)
    #: adjective forms: "long" (cs/sk lemma -ý/-y) or "fleeting" (sl/hr/sr consonant-final lemma)
    adjectives: str = "long"
    cyrillic: bool = False

    def is_verb(self, word: str) -> bool:
        return morph.lemma(word, self.code).endswith(self.infinitive)

    def participle_gender(self, word: str) -> str | None:
        """The gender of an l-participle ``word``, else None."""
        for ending, gender in self.participle:
            if word.endswith(ending) and len(word) > len(ending):
                return gender if gender is not None and self._verbal(word, ending, gender) else None
        return None

    def _verbal(self, word: str, ending: str, gender: str) -> bool:
        """Whether ``word`` is a verb form: its lemma is a verb, or the infinitive made from its stem is a
        dictionary lemma (hr ``zamolio`` -> ``zamoliti``), or (masculine) its feminine's lemma is a verb
        (sr ``video``, also the noun *video*: ``videla`` -> ``videti``)."""
        if self.is_verb(word):
            return True
        stem = word[: -len(ending)]
        if any(
            morph.known(stem + i, self.code) and morph.lemma(stem + i, self.code) == stem + i
            for i in self.infinitive
        ):
            return True
        if gender != MALE:
            return False
        forms = (word + "a",) if ending == "l" else (stem + "la", word[:-2] + "la")
        return any(morph.known(f, self.code) and self.is_verb(f) for f in forms)

    def adjective_gender(self, word: str) -> str | None:
        """The gender of a predicative adjective ``word``, else None."""
        lem = morph.lemma(word, self.code)
        if self.adjectives == "long":
            return _long_adjective(word, lem)
        return _fleeting_adjective(word, lem, self.code)

    def is_marker(self, word: str) -> bool:
        return word in self.markers or (word.endswith(self.present) and len(word) > 2 and self.is_verb(word))

    def is_copula(self, word: str, marker: bool) -> bool:
        """An auxiliary or pronoun marker, or a first-person or infinitive form of a copula verb."""
        if word in self.markers:
            return True
        lem = morph.lemma(word, self.code)
        return lem in self.copulas and (marker or word == lem)

    def unknown_participle(self, word: str) -> str | None:
        """The gender of a word the dictionary lacks by its participle ending alone (cs ``osmažila``)."""
        if morph.known(word, self.code) or len(word) < 4:
            return None
        for ending, gender in self.participle:
            if word.endswith(ending):
                return gender
        return None


def _long_adjective(word: str, lem: str) -> str | None:
    """cs/sk: masc = the lemma (``šťastný``) or its short form (``přesvědčen``); fem = ``-á``/``-a``."""
    if not lem.endswith(("ý", "y")) or len(lem) < 3:
        return None
    stem = lem[:-1]
    if word == lem or word == stem:
        return MALE
    if word in (stem + "á", stem + "a"):
        return FEMALE
    return None


def _fleeting_adjective(word: str, lem: str, language: str) -> str | None:
    """sl/hr/sr: an adjective lemma (consonant-final) whose feminine and neuter are known forms of it
    (``vesel``: ``vesela``, ``veselo``; with the fleeting vowel dropped, ``sretan``: ``sretna``, ``sretno``;
    a noun such as ``kot`` has a genitive ``kota`` but no form ``koto``); masc = the lemma, fem = its
    feminine."""
    if lem.endswith(("a", "e", "i", "o", "u")) or len(lem) < 3:
        return None
    for stem in _stems(lem):
        fem, neuter = stem + "a", stem + "o"
        if morph.known(fem, language) and morph.lemma(fem, language) == lem and morph.known(neuter, language):
            return MALE if word == lem else FEMALE if word == fem else None
    return None


def _stems(lem: str) -> tuple[str, ...]:
    """The stems a lemma's feminine and neuter may take: the lemma, and without a fleeting ``a``/``e``."""
    if len(lem) > 3 and lem[-2] in "ae":
        return (lem, lem[:-2] + lem[-1])
    return (lem,)


def clause_clues(lang: AuxLanguage, words: Sequence[str]) -> list[Clue]:
    """The clues of one clause (lower-cased words), none unless it has a first-person marker."""
    if lang.cyrillic:
        words = [w.translate(SR_LATIN) for w in words]
    marks = [i for i, w in enumerate(words) if lang.is_marker(w)]
    if not marks:
        return []
    copulas = [i for i, w in enumerate(words) if lang.is_copula(w, i in marks)]
    auxiliaries = [i for i in marks if words[i] in lang.markers]
    out = []
    for i, w in enumerate(words):
        d = nearest(i, marks)
        if (g := lang.participle_gender(w)) is not None:
            out.append(Clue(g, w, f"{lang.code}:l-participle", 1, d))
        elif (
            auxiliaries
            and 0 < (da := nearest(i, auxiliaries)) <= UNKNOWN_WINDOW
            and (g := lang.unknown_participle(w))
        ):
            out.append(Clue(g, w, f"{lang.code}:unknown-participle", 1, da))
        elif w in lang.pairs:
            out.append(Clue(lang.pairs[w], w, f"{lang.code}:pair", 2, d))
        elif copulas and 0 < (dc := nearest(i, copulas)) <= ADJECTIVE_WINDOW:
            if (g := lang.adjective_gender(w)) is not None:
                out.append(Clue(g, w, f"{lang.code}:adjective", 2, dc))
    return out


def _pairs(*pairs: tuple[str, str]) -> dict[str, str]:
    return {w: g for m, f in pairs for w, g in ((m, MALE), (f, FEMALE))}


_SLAVIC_L = (("la", FEMALE), ("lo", None), ("l", MALE))
_HBS_L = (("la", FEMALE), ("lo", None), ("o", MALE))
_HBS_COPULAS = frozenset({"biti", "osjećati", "osećati", "postati", "ostati"})

LANGUAGES: dict[str, AuxLanguage] = {
    "cs": AuxLanguage(
        "cs",
        frozenset({"jsem", "nejsem", "bych", "abych", "kdybych", "nebych", "já"}),
        ("t", "ci"),
        _SLAVIC_L,
        _pairs(("rád", "ráda"), ("nerad", "nerada"), ("sám", "sama")),
        frozenset({"být", "cítit", "stát", "zůstat", "připadat"}),
        ("m", "u"),
    ),
    "sk": AuxLanguage(
        "sk",
        frozenset({"som", "ja"}),
        ("ť", "cť"),
        _SLAVIC_L,
        _pairs(("rád", "rada"), ("nerád", "nerada"), ("sám", "sama")),
        frozenset({"byť", "cítiť", "stať", "zostať"}),
    ),
    "sl": AuxLanguage(
        "sl",
        frozenset({"sem", "nisem", "bom", "jaz"}),
        ("ti", "či"),
        _SLAVIC_L,
        _pairs(("rad", "rada"), ("sam", "sama")),
        frozenset({"biti", "počutiti", "postati", "ostati"}),
        adjectives="fleeting",
    ),
    "hr": AuxLanguage(
        "hr",
        frozenset({"sam", "nisam", "bih", "ja", "jesam"}),
        ("ti", "ći"),
        _HBS_L,
        copulas=_HBS_COPULAS,
        adjectives="fleeting",
    ),
    "sr": AuxLanguage(
        "sr",
        frozenset({"sam", "nisam", "bih", "ja", "jesam"}),
        ("ti", "ći"),
        _HBS_L,
        copulas=_HBS_COPULAS,
        adjectives="fleeting",
        cyrillic=True,
    ),
}
