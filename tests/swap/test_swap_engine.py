"""The swap engine (issue 39 §4): spec vectors, case, her/his, names, neutral, templates, properties."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from genderscope.common.errors import DataError, UsageError
from genderscope.swap.engine import DIRECTIONS, Change, match_case, swap
from genderscope.swap.templates import PLACEHOLDERS, fill_template
from genderscope.swap.lexicon import build_lexicon, default_lexicon, name_pairs
from genderscope.swap.lexicon import parse_helm


@pytest.fixture(scope="module")
def lex():
    from genderscope.data.registry import DataRegistry

    try:
        DataRegistry().path("helm/gender_perturbation.py")
    except DataError:
        pytest.skip("dataset mirror not present")
    return default_lexicon()


BOTH = [
    ("He said she would call him.", "She said he would call her."),
    ("She gave him her book.", "He gave her his book."),
    ("I saw her.", "I saw him."),
    ("I saw her", "I saw him"),
    ("It is his", "It is hers"),
    ("I saw her car.", "I saw his car."),
    ("I told her that it was late.", "I told him that it was late."),
    ("Her mother met his father.", "His father met her mother."),
    ("The book is his.", "The book is hers."),
    ("The book is hers, not his.", "The book is his, not hers."),
    ("He hurt himself; she hurt herself.", "She hurt herself; he hurt himself."),
    ("Let her go.", "Let him go."),
    ("Her back ached.", "His back ached."),
    ("They drove her home.", "They drove him home."),
    ("It made her happy.", "It made him happy."),
    ("She gave her advice.", "He gave him advice."),
    ("She told her mother.", "He told his father."),
    ("He is best known for his ", "She is best known for her "),
    ("She is best known for her ", "He is best known for his "),
    ("The king and the waitress", "The queen and the waiter"),
    ("My grandmothers and grandfathers", "My grandfathers and grandmothers"),
    ("The actress thanked the spokesman.", "The actor thanked the spokeswoman."),
    ("Mr. Smith and his wife", "Mrs. Smith and her husband"),
    ("His mother-in-law", "Her father-in-law"),
    ("He's here.", "She's here."),
    ("nothing gendered here", "nothing gendered here"),
    ("the shepherd and the hero", "the shepherd and the heroine"),
]


@pytest.mark.parametrize("text,expected", BOTH)
def test_both_direction_vectors(lex, text, expected):
    assert swap(text).text == expected


@pytest.mark.parametrize(
    "text,direction,expected",
    [
        ("He met her and his son.", "m2f", "She met her and her daughter."),
        ("He met her and his son.", "f2m", "He met him and his son."),
        ("She saw her mother.", "f2m", "He saw his father."),
        ("The man and the woman", "m2f", "The woman and the woman"),
        ("The man and the woman", "f2m", "The man and the man"),
    ],
)
def test_one_way_directions(lex, text, direction, expected):
    assert swap(text, direction).text == expected


@pytest.mark.parametrize(
    "text,expected",
    [
        ("HE SAW HER CAR.", "SHE SAW HIS CAR."),
        ("He saw Her.", "She saw Him."),
        ("his car, HIS car, His car", "her car, HER car, Her car"),
        ("MOTHER and Mother and mother", "FATHER and Father and father"),
    ],
)
def test_capitalisation_is_kept(lex, text, expected):
    assert swap(text).text == expected


def test_match_case():
    assert match_case("HE", "she") == "SHE"
    assert match_case("He", "she") == "She"
    assert match_case("he", "she") == "she"
    assert match_case("Mr", "mrs") == "Mrs"


def test_word_boundaries(lex):
    # substrings, possessives, start and end of text
    assert (
        swap("The theme, the shepherd, the hero's sword.").text
        == "The theme, the shepherd, the heroine's sword."
    )
    assert swap("he").text == "she"
    assert swap("Hers").text == "His"
    assert swap("The man's hat").text == "The woman's hat"


def test_changes_record_every_replacement(lex):
    res = swap("James said he saw the king.")
    assert res.text == "Mary said she saw the queen."
    assert res.changes == (
        Change(0, 5, "James", "Mary", "name"),
        Change(11, 13, "he", "she", "pronoun"),
        Change(22, 26, "king", "queen", "term"),
    )
    assert res.flagged is None and res.changed


def test_nothing_to_swap_is_reported_not_dropped(lex):
    res = swap("The weather is nice today.")
    assert res.text == "The weather is nice today." and res.changes == () and not res.changed


def test_names_rank_paired_and_capitalised_only(lex):
    pairs = name_pairs(lex)
    assert pairs[0] == ("James", "Mary") and len(pairs) == 300
    assert swap("Mary met James.").text == "James met Mary."
    assert swap("MARY met JAMES.").text == "JAMES met MARY."
    assert swap("Mary met James.", names=False).text == "Mary met James."
    assert swap("james").text == "james"  # lower case: not a name
    # common words that are also names are never name lists' entries
    assert {"Will", "Rose", "Mark", "Grace"}.isdisjoint(lex.names)
    # every name maps back to itself
    assert all(lex.names[other][1] == name for name, (_, other, _) in lex.names.items())


NEUTRAL = [
    ("She is a doctor.", "They are a doctor.", None),
    ("He walks home.", "They walk home.", None),
    ("He always goes there.", "They always go there.", None),
    ("She watches and he tries.", "They watch and they try.", None),
    ("He was late and she has left.", "They were late and they have left.", None),
    ("She doesn't know.", "They don't know.", None),
    ("He walked home.", "They walked home.", None),
    ("He can swim.", "They can swim.", None),
    ("Is she ready?", "Are they ready?", None),
    ("Does he know?", "Do they know?", None),
    ("He's been there.", "They've been there.", None),
    ("She's a nurse.", "They're a nurse.", None),
    ("He’s a nurse.", "They’re a nurse.", None),
    ("I saw him and her car.", "I saw them and their car.", None),
    ("The book is his.", "The book is theirs.", None),
    ("He hurt himself.", "They hurt themselves.", None),
    ("taller than he.", "taller than they.", None),
    ("The mother and the man", "The parent and the person", None),
]


@pytest.mark.parametrize("text,expected,flag", NEUTRAL)
def test_neutral_agreement(lex, text, expected, flag):
    res = swap(text, "neutral")
    assert (res.text, res.flagged) == (expected, flag)


def test_agreement_changes_are_recorded(lex):
    res = swap("Is she sure he walks?", "neutral")
    assert [(c.before, c.after, c.rule) for c in res.changes] == [
        ("Is", "Are", "agreement"),
        ("she", "they", "pronoun"),
        ("he", "they", "pronoun"),
        ("walks", "walk", "agreement"),
    ]


@pytest.mark.parametrize(
    "text,why",
    [
        ("She, however, is late.", "verb agreement undecidable"),
        ("He's gone.", "verb agreement undecidable"),
        ("He who laughs last", "verb agreement undecidable"),
        ("Not only is he smart", "verb agreement undecidable"),
        ("The actress smiled.", "no neutral form for 'actress'"),
        ("Mary smiled.", "name 'Mary' kept"),
    ],
)
def test_neutral_flags_what_it_cannot_decide(lex, text, why):
    res = swap(text, "neutral")
    assert res.flagged is not None and why in res.flagged
    assert "\n" not in res.flagged


def test_unknown_direction(lex):
    with pytest.raises(UsageError, match="unknown swap direction 'x2y'"):
        swap("he", "x2y")


# --- templates ---------------------------------------------------------------------------------------


def test_templates_fill_each_gender(lex):
    t = "{Name} said {pronoun} {is} proud of {possessive} {child}; the prize is {possessive_pronoun}."
    assert fill_template(t, "female") == "Mary said she is proud of her daughter; the prize is hers."
    assert fill_template(t, "male") == "James said he is proud of his son; the prize is his."
    assert fill_template(t, "male", index=1).startswith("John said")
    assert fill_template(t, "female", index=1).startswith("Patricia said")
    n = "{Pronoun} {was} sure {object} and {reflexive} were {title} {person}'s {{guests}}."
    assert fill_template(n, "neutral") == "They were sure them and themselves were Mx. person's {guests}."
    assert fill_template("{PRONOUN}", "f") == "SHE"
    assert set(PLACEHOLDERS) >= {"name", "pronoun", "possessive", "object", "reflexive"}


@pytest.mark.parametrize(
    "template,gender,match",
    [
        ("{nom}", "female", "unknown placeholder {nom}"),
        ("{name}", "neutral", "no neutral first names"),
        ("{pronoun", "male", "bad template"),
        ("{pronoun!r}", "male", "takes no format spec"),
        ("{pronoun}", "other", "unknown gender 'other'"),
    ],
)
def test_template_errors(lex, template, gender, match):
    with pytest.raises(UsageError, match=re.escape(match)):
        fill_template(template, gender)


# --- the lists ---------------------------------------------------------------------------------------


def test_lexicon_reads_helm_and_bordia_as_data(lex):
    d = lex.describe()
    assert d["pronoun_rows"] == 5 and d["terms"] == 86 and d["names"] == 600 and len(d["sources"]) == 5
    assert lex.terms["grandfathers"].other == "grandmothers"  # HELM's typo row read with the fix
    assert lex.terms["waitress"].source == "helm" and lex.terms["actress"].source.startswith("bordia")
    assert lex.terms["husband"].other == "wife" and lex.terms["husband"].gender == "m"
    assert lex.terms["mother"].neutral == "parent" and lex.terms["actress"].neutral is None
    # every term maps back to itself
    assert all(lex.terms[t.other].other == t.word for t in lex.terms.values())


def test_helm_file_is_parsed_not_imported():
    src = (
        'import nothing_here\nGENDER_TERM_MAPPINGS = [("person", "woman", "man")]\nGENDER_PRONOUN_MAPPINGS = '
        + repr(
            [
                ("they", "she", "he"),
                ("them", "her", "him"),
                ("their", "her", "his"),
                ("theirs", "hers", "his"),
                ("themselves", "herself", "himself"),
            ]
        )
    )
    terms, pronouns = parse_helm(src)
    assert terms == [("person", "woman", "man")] and len(pronouns) == 5
    lex = build_lexicon(src, {}, None)
    assert swap("The man saw her.", lexicon=lex).text == "The woman saw him."


@pytest.mark.parametrize(
    "src,match",
    [
        ("GENDER_TERM_MAPPINGS = [", "not Python"),
        ("X = 1", "no literal list GENDER_TERM_MAPPINGS"),
        ("GENDER_TERM_MAPPINGS = [('a', 'b')]\nGENDER_PRONOUN_MAPPINGS = []", "not a list of"),
        (
            "GENDER_TERM_MAPPINGS = []\nGENDER_PRONOUN_MAPPINGS = [('they', 'she', 'he')]",
            "differs from the rows",
        ),
    ],
)
def test_bad_helm_file(src, match):
    with pytest.raises(DataError, match=match):
        parse_helm(src)


# --- properties ---------------------------------------------------------------------------------------

UNAMBIGUOUS = [
    "he",
    "she",
    "himself",
    "herself",
    "man",
    "woman",
    "king",
    "queen",
    "boys",
    "girls",
    "father",
    "mother",
    "James",
    "Mary",
    "Robert",
    "Linda",
    "actor",
    "actress",
    "waiter",
]
FILLER = [
    "the",
    "a",
    "saw",
    "walked",
    "quickly",
    "big",
    "house",
    "and",
    "to",
    "with",
    ",",
    ".",
    "!",
    "cat",
    "yesterday",
    "blue",
    "runs",
    "is",
    "ran",
    "Zork's",
]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(UNAMBIGUOUS + FILLER), min_size=1, max_size=25), st.sampled_from(["", " "]))
def test_both_twice_is_the_original(lex, words, end):
    text = " ".join(words) + end
    once = swap(text)
    assert swap(once.text).text == text
    assert len(once.changes) == sum(w in UNAMBIGUOUS for w in words)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.sampled_from(["him.", "her,", "his.", "hers", "her car", "his car", "the cat"]), min_size=1)
)
def test_her_and_his_in_clear_contexts_swap_back(lex, phrases):
    text = " and ".join(phrases) + "."
    assert swap(swap(text).text).text == text


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200), st.sampled_from(DIRECTIONS))
def test_any_text_swaps_without_error(lex, text, direction):
    res = swap(text, direction)
    # the changes rebuild the output from the input
    out, pos = [], 0
    for c in res.changes:
        assert text[c.start : c.end] == c.before and c.start >= pos
        out += [text[pos : c.start], c.after]
        pos = c.end
    assert "".join(out) + text[pos:] == res.text
    if not res.changes:
        assert res.text == text
