"""Templates mode: prompts with placeholders, filled once per gender.

Placeholders (``{name}`` gives the lower-case word; ``{Name}`` capitalised; ``{NAME}`` upper case):

============================  ==========  ==========  ===============
placeholder                   female      male        neutral
============================  ==========  ==========  ===============
``{name}``                    Mary        James       (none: UsageError)
``{pronoun}`` / ``{subject}``  she         he          they
``{object}``                  her         him         them
``{possessive}``              her         his         their
``{possessive_pronoun}``      hers        his         theirs
``{reflexive}``               herself     himself     themselves
``{person}``                  woman       man         person
``{people}``                  women       men         people
``{child}``                   daughter    son         child
``{parent}``                  mother      father      parent
``{sibling}``                 sister      brother     sibling
``{spouse}``                  wife        husband     spouse
``{title}``                   Ms.         Mr.         Mx.
``{is}`` / ``{was}``          is / was    is / was    are / were
``{has}`` / ``{does}``        has / does  has / does  have / do
============================  ==========  ==========  ===============

Pronouns and terms come from the same rows as the swap engine (HELM's lists); ``{name}`` is the
``index``-th name of the gender's rank-paired list (index 0: the most frequent), so the same ``index``
gives a female and a male name of matching frequency. ``{{`` and ``}}`` are literal braces.
"""

from __future__ import annotations

import string

from genderscope.common.errors import UsageError
from genderscope.swap.lexicon import Lexicon, default_lexicon, name_pairs

GENDERS = {"female": 1, "f": 1, "male": 2, "m": 2, "neutral": 0, "n": 0}
#: placeholder -> (neutral, female, male), for those not read from the pronoun rows
WORDS: dict[str, tuple[str, str, str]] = {
    "person": ("person", "woman", "man"),
    "people": ("people", "women", "men"),
    "child": ("child", "daughter", "son"),
    "parent": ("parent", "mother", "father"),
    "sibling": ("sibling", "sister", "brother"),
    "spouse": ("spouse", "wife", "husband"),
    "title": ("Mx.", "Ms.", "Mr."),
    "is": ("are", "is", "is"),
    "was": ("were", "was", "was"),
    "has": ("have", "has", "has"),
    "does": ("do", "does", "does"),
}
#: placeholder -> row of the pronoun table (subject, object, determiner, possessive, reflexive)
PRONOUN_ROWS = {
    "pronoun": 0,
    "subject": 0,
    "object": 1,
    "possessive": 2,
    "possessive_pronoun": 3,
    "reflexive": 4,
}
PLACEHOLDERS = ("name", *PRONOUN_ROWS, *WORDS)


def _fill(key: str, column: int, lexicon: Lexicon, index: int, template: str) -> str:
    if key in PRONOUN_ROWS:
        return lexicon.pronouns[PRONOUN_ROWS[key]][column]
    if key in WORDS:
        return WORDS[key][column]
    if key == "name":
        if column == 0:
            raise UsageError(
                f"no neutral first names for {{name}} in {template!r:.60}; fill it with male/female"
            )
        pairs = name_pairs(lexicon)
        if not 0 <= index < len(pairs):
            raise UsageError(f"name index {index} out of range 0–{len(pairs) - 1}")
        return pairs[index][0 if column == 2 else 1]
    raise UsageError(
        f"unknown placeholder {{{key}}} in {template!r:.60}; use one of "
        + ", ".join("{" + p + "}" for p in PLACEHOLDERS)
    )


def fill_template(template: str, gender: str, index: int = 0, lexicon: Lexicon | None = None) -> str:
    """``template`` with every placeholder filled for ``gender`` (female/male/neutral; f/m/n).

    The case of the placeholder sets the case of the word: ``{pronoun}`` she, ``{Pronoun}`` She,
    ``{PRONOUN}`` SHE. ``index``: which rank-paired first name ``{name}`` takes (0: the most frequent).
    """
    if gender.lower() not in GENDERS:
        raise UsageError(f"unknown gender {gender!r}; use female, male or neutral")
    column, lex, out = GENDERS[gender.lower()], lexicon or default_lexicon(), []
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as e:
        raise UsageError(
            f"bad template {template!r:.60} ({e}); write literal braces as {{{{ and }}}}"
        ) from None
    for literal, key, spec, conv in parsed:
        out.append(literal)
        if key is None:
            continue
        if spec or conv:
            raise UsageError(f"placeholder {{{key}}} in {template!r:.60} takes no format spec or conversion")
        word = _fill(key.lower(), column, lex, index, template)
        if key.isupper() and len(key) > 1:
            word = word.upper()
        elif key[:1].isupper():
            word = word[:1].upper() + word[1:]
        out.append(word)
    return "".join(out)
