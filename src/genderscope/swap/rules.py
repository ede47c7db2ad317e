"""Context rules of the swap engine: which "her"/"his" is meant, and verb agreement for they/them.

No part-of-speech tagger: the rules read the next word (and, for "her", the previous one). They are the
same for "her" and "his", so swapping twice gives the text back.

- "her" is an object ("him", "them") when the next token is punctuation, a word of
  :data:`NOT_NOUN_START` (determiners, prepositions, conjunctions, pronouns, auxiliaries, a few adverbs),
  an adverb in -ly followed by punctuation or such a word ("told her quickly that"), or a bare verb of
  :data:`BARE_VERBS` after a verb of :data:`CAUSATIVE` ("let her go"); otherwise it is a possessive
  determiner ("his", "their"). A few more rules (:func:`her_is_object`): "her back/home" before
  punctuation or a preposition, a predicative adjective before punctuation ("made her happy."), a bare
  noun after a verb of giving ("gave her advice", but "gave her life", "told her mother") are objects.
- "his" is a possessive pronoun ("hers", "theirs") when the next token is punctuation or a word of
  :data:`NOT_NOUN_START` ("the book is his and ..."); otherwise a determiner ("her", "their").
- At the end of the text: before trailing spaces (a continuation prompt cut before its noun, "best known
  for her ") both are possessive determiners; with nothing after them, "her" is an object and "his" a
  possessive pronoun ("I saw her", "the book is his").
- They/them (``neutral``): the verb after "he"/"she" agrees when it can be found: adverbs of
  :data:`ADVERBS` (and -ly words) are skipped; "is/was/has/does" (and their negations) have fixed plurals;
  a lower-case word ending in -s loses it (goes → go, watches → watch, tries → try, walks → walk); a past
  form, a modal, "and"/"or", punctuation that ends the sentence, or the end of the text need nothing.
  "he's" becomes "they've" before "been/got/gotten/had", "they're" before other words, except before an
  -ed word or an irregular participle (is or has?). A question with the verb before the pronoun ("Is she
  …?") has that verb made plural. Everything else (a comma or a dash after the pronoun, "who", an
  inverted verb outside a question) is undecidable, and the prompt is flagged.
"""

from __future__ import annotations

import re

WORD = r"[^\W\d_](?:[\w]|['’](?=\w))*"
#: the next token after a position: a word, or one non-space character, or nothing (end of text)
NEXT_TOKEN = re.compile(rf"\s*({WORD}|\d[\d,.]*\d|\d|['’][^\W\d_]+|\S)?")
#: the last word before a position
PREV_WORD = re.compile(rf"({WORD})\s*$")

NOT_NOUN_START = frozenset(
    """
    a an the this that these those some any each every no all both either neither such what which whose
    to at in on of for with from by about into onto upon over under after before around through across
    against along among behind beside between beyond during except near off out up down away toward
    towards without within like as than since until till via per
    and or but nor so yet if because while when whenever where though although unless whether once
    i me you he him she her it we us they them myself yourself himself herself itself ourselves themselves
    his hers theirs mine yours ours someone something anyone anything everyone everything nobody nothing
    is was are were be been being am has have had do does did can could will would shall should may might
    must not isn't wasn't aren't weren't don't doesn't didn't can't couldn't won't wouldn't
    again too also now then there here today tomorrow yesterday tonight already still just even ever
    never always often soon later anyway instead alone well much more less enough together apart anymore
    please directly immediately how why who whom anywhere anyway anyways everywhere somewhere
    """.split()
)
#: nouns that are also particles: "her back ached" (possessive) but "brought her back." (object)
PARTICLE_NOUNS = frozenset({"back", "home"})
#: prepositions that end "brought her back to …", "drove her home after …"
PREPOSITIONS = frozenset(
    "to at in on of for with from by about into after before around through across over under".split()
)
PARTICLE_ENDS = PREPOSITIONS | frozenset("every each again later now soon today tonight tomorrow".split())
#: verbs of giving, whose "her" before a bare noun is the indirect object ("gave her advice")
GIVE_VERBS = frozenset(
    "give gives gave given giving offer offers offered offering wish wishes wished charge charges charged "
    "show shows showed shown grant grants granted owe owes owed lend lends lent hand hands handed teach "
    "teaches taught promise promises promised".split()
)
#: nouns that are still possessed after a verb of giving ("gave her life", "showed her work")
POSSESSED = frozenset(
    "own life lives friend friends family work time best first last heart love word".split()
)
#: predicative adjectives: "made her happy." (object)
PREDICATE_ADJECTIVES = frozenset(
    "happy sad angry mad safe right wrong satisfied upset bad good comfortable uncomfortable nervous sick "
    "better worse proud free alone alive dead crazy late busy calm warm quiet sorry ready responsible "
    "guilty innocent welcome".split()
)
CAUSATIVE = frozenset(
    "let lets letting make makes made making help helps helped helping watch watches watched watching "
    "see sees saw seeing seen hear hears heard hearing have has had having bid feel feels felt notice "
    "noticed".split()
)
BARE_VERBS = frozenset(
    "be go do get make know think take come want look use find give tell work call try ask leave stay cry "
    "win sleep walk speak talk play eat stop read sit stand run fall die live learn change move pay meet "
    "lead believe bring begin keep hold write sing dance laugh smile wait drive fly swim open close decide "
    "understand feel say enter enjoy settle identify fix finish buy sell build carry clean cook drink join "
    "lift pass pick prepare pull push put reach relax remember rest return ride save search send serve "
    "share sign solve start teach travel turn visit wash wear escape apply answer avoid".split()
)
#: -ly words that are adjectives or nouns, not adverbs ("her lovely voice", "her family")
LY_NOT_ADVERB = frozenset(
    "family lovely lonely friendly elderly early daily weekly monthly yearly ugly holy silly curly belly "
    "ally jelly lily only supply reply rally assembly folly bully melancholy likely lively costly deadly "
    "orderly kindly".split()
)
ADVERBS = frozenset(
    """
    also always never often usually sometimes still just really only then now even rarely seldom already
    probably certainly simply actually not never ever frequently generally typically soon thus perhaps
    nevertheless besides therefore once twice finally suddenly quickly slowly
    """.split()
)
#: singular -> plural forms of the verbs that do not follow the -s rule
IRREGULAR = {
    "is": "are",
    "was": "were",
    "has": "have",
    "does": "do",
    "isn't": "aren't",
    "wasn't": "weren't",
    "hasn't": "haven't",
    "doesn't": "don't",
    "isn’t": "aren’t",
    "wasn’t": "weren’t",
    "hasn’t": "haven’t",
    "doesn’t": "don’t",
    "focuses": "focus",
    "biases": "bias",
    "aches": "ache",
    "caches": "cache",
}
#: inverted verbs of a question ("Is she …?", "Does he …?")
INVERTED = frozenset(IRREGULAR)
#: participles that make "'s" ambiguous (is or has?)
IRREGULAR_PARTICIPLES = frozenset(
    "gone done seen taken given written made left won lost known shown grown drawn driven eaten fallen "
    "forgotten hidden ridden risen spoken stolen sworn thrown woken worn broken chosen frozen begun sung "
    "swum run come become put set cut hit hurt let shut read told sold found held kept slept met paid said "
    "sent spent built felt brought bought caught taught thought fought sought".split()
)
#: after "'s": has (→ 've)
HAS_NEXT = frozenset("been got gotten had".split())
#: tokens that end a clause with no verb to agree with ("… than he.", "said she")
SENTENCE_END = frozenset(".!?;:\"'”’)]")
#: ends of words whose -s is not the third-person singular -s
NOT_S_VERB_ENDS = ("ss", "us", "is", "'s", "’s")


def next_token(text: str, pos: int) -> tuple[str | None, int, int]:
    """The token after ``pos`` (a word or a punctuation character; None at the end) and its span."""
    m = NEXT_TOKEN.match(text, pos)
    if m is None or m.group(1) is None:
        return None, len(text), len(text)
    return m.group(1), m.start(1), m.end(1)


def prev_word(text: str, pos: int) -> str | None:
    """The word just before ``pos`` (spaces between allowed), or None."""
    m = PREV_WORD.search(text, max(0, pos - 40), pos)
    return m.group(1) if m else None


def is_word(token: str | None) -> bool:
    """A word or a number (not punctuation, not the end of the text)."""
    return token is not None and token[0].isalnum()


def _ends_phrase(text: str, pos: int, words: frozenset[str] = NOT_NOUN_START) -> bool:
    """Whether the token after ``pos`` is punctuation, the end, or one of ``words``."""
    after, _, _ = next_token(text, pos)
    return not is_word(after) or after.lower() in words


def her_is_object(text: str, start: int, end: int, nouns: frozenset[str] = frozenset()) -> bool:
    """Whether "her" at ``text[start:end]`` is an object pronoun (else a possessive determiner).

    ``nouns``: gendered nouns (mother, husband …), always possessed after a verb of giving.
    """
    nxt, _, nend = next_token(text, end)
    if nxt is None:  # "I saw her" (object); "She is best known for her " (a prompt cut before the noun)
        return end == len(text)
    if not is_word(nxt):
        return True
    low = nxt.lower()
    if low in NOT_NOUN_START:
        return True
    if low.endswith("ly") and low not in LY_NOT_ADVERB:
        return _ends_phrase(text, nend)
    prev = (prev_word(text, start) or "").lower()
    if low in PARTICLE_NOUNS:
        return prev not in PREPOSITIONS and _ends_phrase(text, nend, PARTICLE_ENDS)
    if low in PREDICATE_ADJECTIVES and _ends_phrase(text, nend):
        return True
    if prev in CAUSATIVE and low in BARE_VERBS:
        return True
    return prev in GIVE_VERBS and low not in POSSESSED and low not in nouns


def his_is_possessive(text: str, end: int) -> bool:
    """Whether "his" ending at ``end`` stands alone ("hers") rather than before a noun ("her")."""
    nxt, _, _ = next_token(text, end)
    if nxt is None:  # "the book is his" (possessive); "He is best known for his " (cut before the noun)
        return end == len(text)
    return not is_word(nxt) or nxt.lower() in NOT_NOUN_START


def plural_verb(word: str) -> str | None:
    """The plural of a third-person singular present verb (``walks`` → ``walk``), or None if not one."""
    low = word.lower()
    if low in IRREGULAR:
        return IRREGULAR[low]
    if not word.islower() or not low.endswith("s") or low.endswith(NOT_S_VERB_ENDS) or len(low) < 3:
        return None
    if low.endswith("ies") and len(low) > 4:
        return low[:-3] + "y"
    if low.endswith(("sses", "shes", "ches", "xes", "zzes", "oes")):
        return low[:-2]
    return low[:-1]
