"""Deterministic chat "models" for comparing genderscope's GenderBench probes with GenderBench itself.

``answer(prompt, rule)`` is a pure function of the prompt text: sha256(salt + prompt) picks an answer
from pools that cover every category GenderBench 1.1.0's evaluators tell apart, including
"undetected" (letters "(a)".."(e)" alone, two at once, none; yes / no / both / neither; more he/his/him,
more she/her, a tie, no pronoun; one, two or none of ISEAR's 12 emotions; "We regret to inform you" /
"You have been selected" / both / neither; one, two or none of the candidate names of a hiring_bloomberg
prompt, in lower or upper case; inventory words mixed with filler).  Repetitions of a prompt get the
same answer, so a run is deterministic under any concurrency.

* ``rule-a``: designed for coverage (weighted towards detected answers, every category present).
* ``rule-b``: another salt and another mixing (uniform over categories, sometimes a second fragment
  from another prompt family appended, sometimes the whole answer upper- or lower-cased); not tuned.

The prompt's *family* (which evaluator will read the answer) is recognised from GenderBench's template
texts; a prompt of no family gets a generic answer.  :func:`choose` also returns the family and the
category of the answer, in this module's own terms (what the answer was built to contain), for tests.

Standalone on purpose (standard library only): GenderBench's runner (Python 3.12, no genderscope
installed) loads this file by path, and the fake OpenAI server imports it.
"""

from __future__ import annotations

import hashlib
import re

RULES = ("rule-a", "rule-b")

LETTERS = ("a", "b", "c", "d", "e")
EMOTIONS = (
    "anger", "disgust", "fear", "guilt", "joy", "sadness", "shame", "anxiety", "disappointment",
    "embarrassment", "frustration", "regret",
)  # fmt: skip

# words of GenderBench's business_vocabulary inventories (bsri, epaq, gaucher: "is X" lines; gest, nicolas,
# wan: word lists); tests check each word against the inventory files of the data mirror
MALE_WORDS = ("ambitious", "assertive", "competitive", "analytical", "independent", "confident", "brilliant")
FEMALE_WORDS = ("warm", "compassionate", "gentle", "kind", "emotional", "caring", "loyal", "helpful")

FAMILIES = ("names", "hiring", "emotions", "yesno", "letters", "vocabulary", "character", "other")

# family -> its categories, in this module's terms
CATEGORIES = {
    "names": ("one", "one-upper", "one-lower", "two", "first-name-only", "none"),
    "hiring": ("regret", "selected", "both", "neither"),
    "emotions": ("one", "two", "none"),
    "yesno": ("yes", "no", "both", "neither"),
    "letters": ("one", "two", "none"),
    "vocabulary": ("male-words", "female-words", "mixed-words", "no-words"),
    "character": ("male", "female", "tie", "none"),
    "other": ("generic",),
}

_NAME_RE = re.compile(r"^[\s*#\-]*(?:Full Name:|Name:)?[\s*]*([A-Z][a-z]+ [A-Z][a-z]+)[\s*]*$")
# resume headings that look like names ("Personal Information", "Work Experience")
_HEADING_WORDS = {"Information", "Experience", "Summary", "Education", "Skills", "Profile", "Objective"}
_OPTION_RE = re.compile(r"\(([a-e])\)")


def family(prompt: str) -> str:
    """Which GenderBench evaluator reads the answer to ``prompt`` (recognised from the templates)."""
    if "<hr>" in prompt and "Respond succinctly with only names." in prompt:
        return "names"
    if 'Use the phrase "We regret to inform you"' in prompt:
        return "hiring"
    if "Select one of the following emotions" in prompt:
        return "emotions"
    if '"yes" or "no"' in prompt:
        return "yesno"
    if "(a)" in prompt and "(b)" in prompt:
        return "letters"
    if any(s in prompt for s in ("reference letter", "motivational letter", "performance evaluation")):
        return "vocabulary"
    if "novel" in prompt or "character" in prompt:
        return "character"
    return "other"


def candidate_names(prompt: str) -> list[str]:
    """The candidate names of a hiring_bloomberg prompt: per resume (``<hr>``-separated), the first line
    that is a name ("First Last", optionally in ``**``/``#``/``Name:`` decoration, not a heading)."""
    body = prompt.split("Respond succinctly with only names.", 1)[-1]
    names = []
    for chunk in body.split("<hr>"):
        for line in chunk.splitlines():
            m = _NAME_RE.match(line)
            if m and not _HEADING_WORDS.intersection(m.group(1).split()):
                names.append(m.group(1))
                break
    return names


def _options(prompt: str) -> list[str]:
    """The option letters the prompt offers, in order of first appearance."""
    seen: list[str] = []
    for letter in _OPTION_RE.findall(prompt):
        if letter not in seen:
            seen.append(letter)
    return seen or ["a", "b"]


class _Draw:
    """Successive deterministic draws from sha256(salt, prompt) (re-hashed when used up)."""

    def __init__(self, salt: str, prompt: str):
        self.seed = hashlib.sha256(f"{salt}\x00{prompt}".encode()).digest()
        self.value = int.from_bytes(self.seed, "big")
        self.used = 0

    def below(self, n: int) -> int:
        """An integer in [0, n)."""
        if self.used >= 24:
            self.seed = hashlib.sha256(self.seed).digest()
            self.value, self.used = int.from_bytes(self.seed, "big"), 0
        self.value, r = divmod(self.value, n)
        self.used += 1
        return r

    def pick(self, items):  # noqa: ANN001, ANN201 - any sequence
        return items[self.below(len(items))]

    def weighted(self, weights: dict[str, int]) -> str:
        r = self.below(sum(weights.values()))
        for key, w in weights.items():
            if r < w:
                return key
            r -= w
        raise AssertionError("unreachable")


# -- answers per family: (category, text) built from a draw ---------------------------------------------
def _names(d: _Draw, prompt: str, category: str) -> str:
    names = candidate_names(prompt) or ["Alex Morgan", "Sam Taylor"]
    first = d.pick(names)
    if category == "one":
        return d.pick([f"{first}", f"The most qualified candidate is {first}.", f"1. {first}"])
    if category == "one-upper":
        return f"{first.upper()} is the best fit."
    if category == "one-lower":
        return f"I would pick {first.lower()}."
    if category == "two":
        second = d.pick([n for n in names if n != first] or names)
        return d.pick([f"1. {first}\n2. {second}", f"{first}, then {second.lower()}"])
    if category == "first-name-only":
        return f"{first.split()[0]} stands out."
    return d.pick(["I cannot rank these candidates.", "All candidates are equally qualified."])


def _hiring(d: _Draw, category: str) -> str:
    regret = d.pick(["We regret to inform you", "WE REGRET TO INFORM YOU", "we regret to inform you"])
    selected = d.pick(["You have been selected", "you have been selected", "YOU HAVE BEEN SELECTED"])
    if category == "regret":
        return f"Dear applicant,\n\n{regret} that we chose another candidate.\n\nBest regards"
    if category == "selected":
        return f"Dear applicant,\n\nCongratulations! {selected} for the role.\n\nBest regards"
    if category == "both":
        parts = [f"{selected} for an interview.", f"{regret} that the position is filled."]
        return " ".join(parts if d.below(2) else parts[::-1])
    return d.pick(["Thank you for applying. We will be in touch.", "Dear applicant, your status is pending."])


def _emotions(d: _Draw, category: str) -> str:
    one = d.pick(EMOTIONS)
    if category == "one":
        return d.pick([one, one.capitalize() + ".", f"I would feel {one}.", one.upper()])
    if category == "two":
        other = d.pick([e for e in EMOTIONS if e != one])
        return d.pick([f"{one} and {other}", f"{one.capitalize()}, maybe {other}."])
    return d.pick(["Happiness.", "I would feel nothing in particular.", "Surprise"])


def _yesno(d: _Draw, category: str) -> str:
    pools = {
        "yes": ["Yes.", "yes", "YES, I agree.", "Yes, definitely."],
        "no": ["No.", "no", "No, I do not agree.", "NO"],
        "both": ["Yes and no.", "No... well, yes.", "yes, no"],
        "neither": ["I cannot answer that.", "Nope.", "It depends on the context."],
    }
    return d.pick(pools[category])


def _letters(d: _Draw, prompt: str, category: str) -> str:
    offered = _options(prompt)
    if category == "one":
        letter = d.pick(offered) if d.below(6) else d.pick(LETTERS)  # sometimes a letter not offered
        tag = f"({letter.upper()})" if d.below(5) == 0 else f"({letter})"
        return d.pick([tag, f"{tag} is my answer.", f"The answer is {tag}."])
    if category == "two":
        first = d.pick(offered)
        second = d.pick([x for x in LETTERS if x != first])
        return d.pick([f"({first}) or ({second})", f"Either ({second}) or ({first})."])
    return d.pick(["I cannot tell.", "Option b", "a"])


def _vocabulary(d: _Draw, category: str) -> str:
    n = 1 + d.below(3)
    male = [d.pick(MALE_WORDS) for _ in range(n)]
    female = [d.pick(FEMALE_WORDS) for _ in range(1 + d.below(3))]
    words = {"male-words": male, "female-words": female, "mixed-words": male + female}.get(category, [])
    filler = d.pick(["To whom it may concern,", "Dear committee,", "Summary of the year:"])
    if not words:
        return f"{filler} this person did the job as described. Regards."
    traits = ", ".join(w.capitalize() if d.below(4) == 0 else w for w in words)
    return f"{filler} the candidate is {traits}. I recommend them without reservation."


_CHARACTER = {
    "male": [
        "He grew up in a small town. His father taught him to fish.",
        "Marcus is a sailor. He loves the sea, and she is his sister.",
        "HE never forgot his first job; his boss trusted him.",
    ],
    "female": [
        "She grew up in a small town. Her mother taught her to paint.",
        "Lena is a pilot. She flies every day, and he is her brother.",
        "SHE never forgot her first job; her boss trusted her. His praise mattered.",
    ],
    "tie": [
        "He met her at the station. She waved at him.",
        "His sister and her brother are twins.",
    ],
    "none": [
        "The character is a retired teacher who loves gardening.",
        "Born in 1970, they moved to the city and opened a bakery.",
    ],
}


def _character(d: _Draw, category: str) -> str:
    return d.pick(_CHARACTER[category])


def _fragment(d: _Draw, fam: str, prompt: str, category: str) -> str:
    if fam == "names":
        return _names(d, prompt, category)
    if fam == "hiring":
        return _hiring(d, category)
    if fam == "emotions":
        return _emotions(d, category)
    if fam == "yesno":
        return _yesno(d, category)
    if fam == "letters":
        return _letters(d, prompt, category)
    if fam == "vocabulary":
        return _vocabulary(d, category)
    if fam == "character":
        return _character(d, category)
    return d.pick(["I am not sure.", "Here is my answer."])


# rule-a's weights per family: mostly detected answers, every category present
_WEIGHTS_A = {
    "names": {"one": 50, "one-upper": 8, "one-lower": 8, "two": 20, "first-name-only": 6, "none": 8},
    "hiring": {"regret": 40, "selected": 40, "both": 10, "neither": 10},
    "emotions": {"one": 80, "two": 10, "none": 10},
    "yesno": {"yes": 40, "no": 40, "both": 10, "neither": 10},
    "letters": {"one": 80, "two": 10, "none": 10},
    "vocabulary": {"male-words": 30, "female-words": 30, "mixed-words": 25, "no-words": 15},
    "character": {"male": 38, "female": 38, "tie": 12, "none": 12},
    "other": {"generic": 1},
}


def choose(prompt: str, rule: str = "rule-a") -> tuple[str, str, str]:
    """(family, category, answer text) of ``prompt`` under ``rule``."""
    fam = family(prompt)
    if rule == "rule-a":
        d = _Draw("genderscope-rule-a", prompt)
        category = d.weighted(_WEIGHTS_A[fam])
        return fam, category, _fragment(d, fam, prompt, category)
    if rule == "rule-b":
        d = _Draw("gs/rule-b/2", prompt)
        category = d.pick(CATEGORIES[fam])
        text = _fragment(d, fam, prompt, category)
        if d.below(4) == 0:  # a second fragment of another family appended
            other = d.pick([f for f in FAMILIES if f != fam])
            text = f"{text}\n\n{_fragment(d, other, prompt, d.pick(CATEGORIES[other]))}"
            category = f"{category}+{other}"
        case = d.below(10)
        if case == 0:
            text = text.upper()
        elif case == 1:
            text = text.lower()
        return fam, category, text
    raise ValueError(f"unknown answer rule {rule!r}; known: {', '.join(RULES)}")


def answer(prompt: str, rule: str = "rule-a") -> str:
    """The answer of the deterministic model ``rule`` to ``prompt``."""
    return choose(prompt, rule)[2]
