"""Russian and Ukrainian: the past tense has a gender but no person (ru ``я была``, uk ``я була``), so a
clause speaks of the speaker when it has the pronoun ``я`` (nominative ``I``).

Per clause (:mod:`.detect`), on pymorphy3's parses of each word (every parse, not only the most probable:
a word is a clue when all its parses of the kind agree on one gender):

* **marker**: the word ``я``;
* **tier 1, past tense**: a verb parse in the past tense, singular (not ``plur``), masculine or feminine
  (ru ``сделал``/``сделала``, uk ``зробив``/``зробила``), the one nearest to ``я``;
* **tier 2, predicative adjective or participle** within two words of ``я``: a short adjective or short
  participle (ru ``рад``/``рада``, ``уверен``/``уверена``; ``ADJS``, ``PRTS``), or a full adjective or
  participle in the nominative singular after ``я`` with only adverbs or particles between (uk ``я
  щаслива``, ``я дуже впевнений``; ``ADJF``, ``PRTF``; not uk ``я маю гарний дім``, where a verb stands
  between);
  ``сам``/``сама`` in the nominative anywhere in the clause.

A clause without ``я`` is no evidence, even when its verb is in the past tense: ru ``когда был ковид``
speaks of someone else, and a dropped pronoun cannot be told from a third person.
"""

from __future__ import annotations

from typing import Any, Sequence

from genderscope.tasks.gest_translation import morph
from genderscope.tasks.gest_translation.detect import FEMALE, MALE, Clue, gender_of, nearest

ADJECTIVE_WINDOW = 2
PRONOUN = "я"
_GENDERS = {"masc": MALE, "femn": FEMALE}
_ALONE = {"ru": ("сам", "сама"), "uk": ("сам", "сама")}


def _tag_gender(tag: Any) -> str | None:
    return None if "plur" in tag.grammemes else _GENDERS.get(str(tag.gender))


def past_gender(word: str, language: str) -> str | None:
    """The gender of ``word`` as a singular past-tense verb (all such parses agreeing), else None."""
    tags = morph.pymorphy_tags(word, language)
    return gender_of({_tag_gender(t) for t in tags if t.POS == "VERB" and "past" in t.grammemes})


def predicative_gender(word: str, language: str, after_pronoun: bool) -> str | None:
    """The gender of ``word`` as a short adjective/participle, or (``after_pronoun``: it follows ``я``
    with only adverbs and particles between) as a nominative full one; else None."""
    tags = morph.pymorphy_tags(word, language)
    full = ("ADJF", "PRTF") if after_pronoun else ()
    return gender_of(
        {
            _tag_gender(t)
            for t in tags
            if t.POS in ("ADJS", "PRTS")
            or (t.POS in full and "nomn" in t.grammemes and "Apro" not in t.grammemes)
        }
    )


def _only_adverbs(words: Sequence[str], language: str) -> bool:
    """Whether every word is an adverb or a particle in its most probable parse (``очень``, ``не``)."""
    return all(morph.pymorphy_tags(w, language)[0].POS in ("ADVB", "PRCL") for w in words)


def clause_clues(language: str, words: Sequence[str]) -> list[Clue]:
    """The clues of one Russian or Ukrainian clause (lower-cased words)."""
    marks = [i for i, w in enumerate(words) if w == PRONOUN]
    if not marks:
        return []
    alone_m, alone_f = _ALONE[language]
    out = []
    for i, w in enumerate(words):
        if i in marks:
            continue
        d = nearest(i, marks)
        if (g := past_gender(w, language)) is not None:
            out.append(Clue(g, w, f"{language}:past", 1, d))
        elif w in (alone_m, alone_f):
            out.append(Clue(MALE if w == alone_m else FEMALE, w, f"{language}:sam", 2, d))
        elif d <= ADJECTIVE_WINDOW:
            after = i - d in marks and _only_adverbs(words[i - d + 1 : i], language)
            if (g := predicative_gender(w, language, after)) is not None:
                out.append(Clue(g, w, f"{language}:predicative", 2, d))
    return out
