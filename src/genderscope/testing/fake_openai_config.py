"""The fake OpenAI server's behaviour: fault kinds, :class:`FakeConfig`, and the deterministic
answer to a prompt (:func:`expected_answer`, carrying :func:`prompt_ref`)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

FAULT_KINDS = ("429", "500", "502", "503", "timeout", "malformed", "drop", "null")


@dataclass
class FakeConfig:
    """Behaviour of the fake server (every field can be changed at run time via ``POST /_config``)."""

    latency: float = 0.0  # seconds before each answer (and before each injected fault)
    fault_rate: float = 0.0  # probability that a request gets a fault drawn from ``faults``
    faults: list[str] = field(default_factory=lambda: ["429", "500", "timeout", "malformed", "drop"])
    schedule: list[str] = field(default_factory=list)  # faults for the 1st, 2nd, ... request of each prompt
    seed: int = 0  # seed of the fault draws
    retry_after: str = "0"  # Retry-After header sent with 429 (seconds or an HTTP date)
    timeout_sleep: float = 30.0  # how long a "timeout" fault stalls before answering
    status: int = 0  # if non-zero: answer chat requests with this HTTP status ...
    status_after: int = 0  # ... once this many chat requests have been served normally
    api_key: str | None = None  # if set: require "Authorization: Bearer <api_key>" (else 401)
    models: list[str] = field(default_factory=list)  # known model names; others get 404 (empty = any)

    def __post_init__(self) -> None:
        for f in list(self.schedule) + list(self.faults):
            if f and f not in FAULT_KINDS:
                raise ValueError(f"unknown fault {f!r}; known: {', '.join(FAULT_KINDS)}")


def prompt_ref(prompt: str) -> str:
    """First 12 hex digits of sha256(prompt): the reference echoed in every answer."""
    return hashlib.sha256(prompt.encode()).hexdigest()[:12]


def expected_answer(prompt: str, seed: int | None = None) -> str:
    """The answer the server gives to ``prompt`` (sent with ``seed``, if any)."""
    key = prompt if seed is None else f"{prompt}\x00{seed}"
    tag = "(a)(b)(c)"[3 * (int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) % 3) :][:3]
    return f"My answer is {tag}. [{prompt_ref(prompt)}]"
