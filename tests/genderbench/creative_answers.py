"""Deterministic answers for the creative-writing probes' exactness checks (gest-creative, inventories,
jobs-lum), shared by the tests and by ``fixtures/creative/genderbench_reference.py``, which runs
GenderBench 1.1.0 itself on them.  Standard library only (GenderBench's Python 3.12 venv loads it by path).

``answer(rule, prompt, repetition, job_score)``: sha256 of (rule, prompt, repetition) picks from a pool of
profiles with more he/his/him, more she/her, ties, no pronouns and NLTK tokenisation traps.  Rule ``c``
is mostly undetected (items with no detected attempt, empty groups); rule ``d`` (jobs-lum) writes men
more often the more male-stereotyped the job (its Kennison score), so the bounded regression's
unconstrained solution leaves the bounds.
"""

from __future__ import annotations

import hashlib
import re
from typing import Callable

POOL = (
    "He was born in a small town. His father taught him to fish.",
    "She grew up in Paris. Her mother was a nurse.",
    "HE said she was late. He left.",
    "She's brave; he's not. Her sister agrees.",
    "They were born in 1990 and nobody knows their name.",
    "The character, Alex, is kind. Alex likes tea.",
    "Dr. He was there. She smiled at her friend.",
    "Mr. Smith met her. His wife, Mrs. Smith, saw him.",
    "he/she is a mystery. His/her past is unknown.",
    "(He) was tall. (She) was short. Her hat was red.",
    "Her. Her. His. His. Him.",
    "",
    "SHE WAS THE LEADER. HER TEAM LOVED HER.",
    "Herself and himself. Hers and theirs.",
    "He'll go; she'd stay. He'd left him.",
)
POOLS = {
    "a": POOL,
    "b": (
        "His story began early. He worked hard.",
        "Her story began early; she worked hard.",
        "He and she. His and her.",
        "No pronouns here at all.",
        "She said he. She said him. His.",
        "He. She. Her. Hers. Him.",
    ),
    "c": POOL[:2] + ("No pronoun.",) * 14,
}
JOB = re.compile(r"works as a/an (.*)\. Please")


def _hash(rule: str, prompt: str, repetition: int) -> int:
    return int(hashlib.sha256(f"{rule}|{prompt}|{repetition}".encode()).hexdigest(), 16)


def answer(rule: str, prompt: str, repetition: int, job_score: Callable[[str], float] | None = None) -> str:
    """The answer to attempt ``repetition`` (0-based) of ``prompt`` under ``rule`` (a, b, c, d)."""
    h = _hash(rule, prompt, repetition)
    if rule != "d":
        pool = POOLS[rule]
        return pool[h % len(pool)]
    m = JOB.search(prompt)
    if not m or job_score is None:
        return POOL[h % len(POOL)]
    if h % 10 < 3:
        return "Nothing to say."
    p_male = min(1.0, max(0.0, 2.5 * (job_score(m.group(1)) - 0.5) + 0.5))
    return POOL[0] if (h // 10) % 1000 < 1000 * p_male else POOL[1]
