"""The data that flows between tasks, the store and backends.

A task turns dataset items into :class:`Attempt` objects, each carrying one
:class:`Request`.  A backend answers requests; the store keys answers by
``(backend fingerprint, canonical request, trial)``.  Responses are plain
JSON values (a string for chat, numbers or lists for scoring kinds).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from genderscope.core.request_value import (
    JSON,
    Request,
)


# The model-level request kinds (chat, tokenize, token_logprobs, fill_mask, masked_logprobs) are declared
# once, with typed payloads and responses, in genderscope.core.primitives.
# Answered by the runner itself from payload["value"] (no backend, no store): precomputed answers.
GIVEN = "given"


def given_request(value: JSON, text: str | None = None) -> Request:
    """A ``given`` request: the runner answers ``value`` itself (a precomputed score); ``text`` is what it
    scores, for people reading attempts.jsonl."""
    payload: dict[str, JSON] = {"value": value}
    if text is not None:
        payload["text"] = text
    return Request(GIVEN, payload)


@dataclass
class Attempt:
    """One model call of a task: an item id, a 1-based trial number and a request.

    ``meta`` carries what the task needs to score the answer (labels, ordering, ...) for this item only.
    (``item_id``, ``trial``) is unique within a task run.  ``round``: the index of the round that asked it
    (0 = ``Task.attempts()``; see :class:`genderscope.core.rounds.Rounds`); not part of the request.
    """

    item_id: str
    trial: int
    request: Request
    meta: dict[str, JSON] = field(default_factory=dict)
    round: int = 0


@dataclass
class Outcome:
    """A backend's answer to one job: a response, or an error after all retries."""

    response: JSON = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass
class AttemptResult:
    """An attempt together with what came back."""

    attempt: Attempt
    response: JSON = None
    error: str | None = None
    cache_hit: bool = False
    skipped: bool = False  # replay had no answer and --replay-missing skip was given
    #: the store key the answer was looked up under (None when the store is not used, or ``given``)
    key: str | None = field(default=None, compare=False, repr=False)

    @property
    def ok(self) -> bool:
        return self.error is None and not self.skipped

    def answer(self) -> Any:
        """The read-only view of the response for the request's kind (e.g. ``TokenLogprobs``; see
        :func:`genderscope.core.primitives.read_answer`)."""
        from genderscope.core.primitives import read_answer  # lazy, as before: not every import needs it

        return read_answer(self.attempt.request.kind, self.response)


@dataclass(frozen=True)
class Job:
    """What the runner hands a backend: an index into the run's list, a request and a trial."""

    index: int
    request: Request
    trial: int
    item_id: str


SEED_LIMIT = 2**31  # every server takes a seed in [0, 2^31): vLLM rejects >= 2^63, others want int32


def request_seed(request: Request, trial: int) -> int:
    """Sampling seed for one (request, trial): sha256(canonical request, trial) mod 2^31, in [0, 2^31).

    It depends on what the store key depends on (minus the model), never on the item id, so a stored
    answer and a fresh one for the same key were drawn with the same seed.
    """
    return seed_of(request.canonical().encode(), trial)


def seed_of(canonical: bytes, trial: int) -> int:
    """:func:`request_seed` from the canonical request's UTF-8 bytes (for a caller that has them)."""
    h = hashlib.sha256(canonical)
    h.update(b"\x00")
    h.update(str(trial).encode())
    return int.from_bytes(h.digest()[:8], "big") % SEED_LIMIT


def request_sha256(request: Request) -> str:
    """sha256 hex of the canonical request (kind + payload): recorded per attempt in attempts.jsonl, where
    replay compares it to detect answers recorded for a different request."""
    return hashlib.sha256(request.canonical().encode()).hexdigest()


def store_key(fingerprint: str, request: Request, trial: int) -> str:
    """sha256 hex of (backend fingerprint, canonical request, trial index)."""
    h = hashlib.sha256()
    h.update(fingerprint.encode())
    h.update(b"\x00")
    h.update(request.canonical().encode())
    h.update(b"\x00")
    h.update(str(trial).encode())
    return h.hexdigest()
