"""Context rules of the swap engine: which "her"/"his" is meant, and verb agreement for they/them.

No part-of-speech tagger: the rules read the next word (and, for "her", the previous one). They are the
same for "her" and "his", so swapping twice gives the text back.

- "her" is an object ("him", "them") when the next token is punctuation or the end of the text, a word of
  :data:`NOT_NOUN_START` (determiners, prepositions, conjunctions, pronouns, auxiliaries, a few adverbs),
  an adverb in -ly followed by punctuation or such a word ("told her quickly that"), or a bare verb of
  :data:`BARE_VERBS` after a verb of :data:`CAUSATIVE` ("let her go"); otherwise it is a possessive
  determiner ("his", "their").
- "his" is a possessive pronoun ("hers", "theirs") when the next token is punctuation, the end, or a word
  of :data:`NOT_NOUN_START` ("the book is his and ..."); otherwise a determiner ("her", "their").
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
NEXT_TOKEN = re.compile(rf"\s*({WORD}|['’][^\W\d_]+|\S)?")
#: the last word before a position
PREV_WORD = re.compile(rf"({WORD})\s*$")

NOT_NOUN_START = frozenset(
    """
    a an the this that these those some any each every no all both either neither such what which whose
    to at in on of for with from by about into onto upon over under after before around through across
    against along among behind beside between beyond during except near off out up down away back toward
    towards without within like as than since until till via per
    and or but nor so yet if because while when whenever where though although unless whether once
    i me you he him she her it we us they them myself yourself himself herself itself ourselves themselves
    his hers theirs mine yours ours someone something anyone anything everyone everything nobody nothing
    is was are were be been being am has have had do does did can could will would shall should may might
    must not isn't wasn't aren't weren't don't doesn't didn't can't couldn't won't wouldn't
    again too also now then there here today tomorrow yesterday tonight already still just even ever
    never always often soon later anyway instead alone well much more less enough together apart anymore
    please directly immediately how why who whom
    """.split()
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
    "understand feel say".split()
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
    "is": "are", "was": "were", "has": "have", "does": "do", "isn't": "aren't", "wasn't": "weren't",
    "hasn't": "haven't", "doesn't": "don't", "isn’t": "aren’t", "wasn’t": "weren’t", "hasn’t": "haven’t",
    "doesn’t": "don’t",
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
    return token is not None and (token[0].isalpha())


def her_is_object(text: str, start: int, end: int) -> bool:
    """Whether "her" at ``text[start:end]`` is an object pronoun (else a possessive determiner)."""
    nxt, _, nend = next_token(text, end)
    if not is_word(nxt):
        return True
    low = nxt.lower()
    if low in NOT_NOUN_START:
        return True
    if low.endswith("ly") and low not in LY_NOT_ADVERB:
        after, _, _ = next_token(text, nend)
        return not is_word(after) or after.lower() in NOT_NOUN_START
    prev = prev_word(text, start)
    return prev is not None and prev.lower() in CAUSATIVE and low in BARE_VERBS


def his_is_possessive(text: str, end: int) -> bool:
    """Whether "his" ending at ``end`` stands alone ("hers") rather than before a noun ("her")."""
    nxt, _, _ = next_token(text, end)
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
