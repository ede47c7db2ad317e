"""Polish: Morfeusz 2 splits a past-tense form into the l-participle and the person ending
(``zrobiłam`` = ``praet:sg:f`` + ``aglt:sg:pri``), so the first person is in the word itself.

Per clause (:mod:`.detect`), on Morfeusz's analyses of each word:

* **markers**: a word with the first-person singular ending ``aglt:sg:pri`` (``zrobiłem``, ``gdybym``,
  ``żebym``, ``bym``), a first-person singular present or future verb (``fin:sg:pri``: ``jestem``,
  ``czuję``; ``bedzie:sg:pri``: ``będę``) and the pronoun ``ja``;
* **tier 1, past tense**: a word that is ``praet:sg`` *and* ``aglt:sg:pri`` in one (``zrobiłem`` masc,
  ``zrobiłam`` fem, ``mogłabym`` fem); and a ``praet:sg`` word in a clause whose marker is a detached
  first-person ending or ``będę`` (``gdybym nie była``, ``będę robił``);
* **tier 2, predicative adjective or passive participle** (``adj`` / ``ppas``, singular, nominative or
  instrumental) within two words of a first-person form of a copula (:data:`COPULAS`: ``jestem
  szczęśliwa``, ``czuję się zmęczony``; not ``mam dobry plan``) or of a detached ending;
  ``sam``/``sama`` (lemma ``sam``, nominative) anywhere in the clause.

Genders: Morfeusz's ``m1``, ``m2``, ``m3`` are masculine, ``f`` feminine, ``n`` (neuter) is not a clue.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from genderscope.tasks.gest_translation import morph
from genderscope.tasks.gest_translation.detect import FEMALE, MALE, Clue, gender_of, nearest

ADJECTIVE_WINDOW = 2
#: verbs whose first person takes a predicative adjective (``jestem``, ``czuję się``, ``zostałam``)
COPULAS = frozenset({"być", "czuć", "stać", "zostać", "pozostać", "wydawać", "wyglądać"})


def _gender(field: str) -> str | None:
    """The gender of a Morfeusz gender field (``m1.m2.m3``, ``f``, ``n1.n2``, ``m1.f``): one, else None."""
    parts = set(field.split("."))
    if parts <= {"m1", "m2", "m3"}:
        return MALE
    return FEMALE if parts == {"f"} else None


@dataclass(frozen=True)
class Word:
    """What the Polish rules read from Morfeusz's analyses of one word."""

    first_person: bool  # has aglt:sg:pri, fin:sg:pri or bedzie:sg:pri (or is ``ja``)
    detached: bool  # a first-person ending without a verb (``gdybym``, ``bym``) or ``będę``
    copula: bool  # a form of a verb of :data:`COPULAS`: finite, future, or the infinitive (``być``)
    past: str | None  # gender of a praet:sg analysis
    past_first: str | None  # gender of praet:sg within a word that also has aglt:sg:pri
    predicative: str | None  # gender of an adj/ppas sg nom/inst analysis
    alone: str | None  # sam / sama


def read_word(word: str) -> Word:
    """The Polish rules' reading of ``word`` (lower-cased)."""
    tags = [(lemma.split(":")[0], tag.split(":")) for _, _, lemma, tag in morph.morfeusz_tags(word)]
    aglt = any(t[0] == "aglt" and t[1:3] == ["sg", "pri"] for _, t in tags)
    future = any(t[0] == "bedzie" and t[1:3] == ["sg", "pri"] for _, t in tags)
    fin = future or any(t[0] == "fin" and t[1:3] == ["sg", "pri"] for _, t in tags)
    past = gender_of({_gender(t[2]) for _, t in tags if t[0] == "praet" and t[1] == "sg"})
    predicative = {
        _gender(t[3])
        for _, t in tags
        if t[0] in ("adj", "ppas") and t[1] == "sg" and {"nom", "inst"} & set(t[2].split("."))
    }
    alone = {_gender(t[3]) for lem, t in tags if lem == "sam" and t[0] == "adj" and "nom" in t[2]}
    return Word(
        first_person=aglt or fin or word == "ja",
        detached=(aglt and past is None) or future,
        copula=any(lem in COPULAS and t[0] in ("fin", "bedzie", "inf") for lem, t in tags),
        past=past,
        past_first=past if aglt else None,
        predicative=gender_of(predicative),
        alone=gender_of(alone),
    )


def clause_clues(words: Sequence[str]) -> list[Clue]:
    """The clues of one Polish clause (lower-cased words)."""
    read = [read_word(w) for w in words]
    marks = [i for i, r in enumerate(read) if r.first_person]
    if not marks:
        return []
    detached = any(read[i].detached for i in marks)
    copulas = [i for i, r in enumerate(read) if r.copula or r.detached or r.past_first is not None]
    out = []
    for i, (w, r) in enumerate(zip(words, read)):
        d = nearest(i, marks)
        if r.past_first is not None:
            out.append(Clue(r.past_first, w, "pl:past-first-person", 1, 0))
        elif r.past is not None and detached:
            out.append(Clue(r.past, w, "pl:past-with-marker", 1, d))
        elif r.alone is not None:
            out.append(Clue(r.alone, w, "pl:sam", 2, d))
        elif r.predicative is not None and copulas and 0 < (dc := nearest(i, copulas)) <= ADJECTIVE_WINDOW:
            out.append(Clue(r.predicative, w, "pl:predicative", 2, dc))
    return out
