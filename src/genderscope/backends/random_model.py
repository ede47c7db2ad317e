"""``random`` — a seeded null model.

For multiple-choice chat requests (the task passes the answer tags in
``request.hints["choices"]``) it answers one tag uniformly at random.  The draw
depends only on (seed, item id, trial, request), never on the order of the calls,
so runs are reproducible whatever the batching.  Other request kinds get
handlers registered in ``HANDLERS`` (kind -> function(job, u) with u uniform in [0, 1)).
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from genderscope.core.backend import Backend, Emit
from genderscope.core.options import opt
from genderscope.core.requests import CHAT, Job, Outcome


@dataclass
class RandomOptions:
    null_seed: int = opt(0, "seed of the random null model (also settable as random:SEED)")


def uniform(seed: int, *parts: Any) -> float:
    """A deterministic uniform number in [0, 1) from the seed and the given parts."""
    h = hashlib.blake2b(repr((seed,) + parts).encode(), digest_size=8).digest()
    return (struct.unpack("<Q", h)[0] >> 11) / float(1 << 53)


def _chat(job: Job, u: float) -> Any:
    choices = job.request.hints.get("choices")
    if choices:
        return choices[int(u * len(choices))]
    return "I cannot tell."


HANDLERS: dict[str, Callable[[Job, float], Any]] = {CHAT: _chat}


class RandomBackend(Backend):
    kind = "random"
    description = "seeded null model: uniform over the task's options (random or random:SEED)"
    Options = RandomOptions
    request_kinds = frozenset(HANDLERS)
    cacheable = False
    needs_target = False

    def __init__(self, target: str, options: RandomOptions):
        super().__init__(target, options)
        self.seed = int(target) if target else options.null_seed

    @property
    def fingerprint(self) -> str:
        return f"random:{self.seed}"

    def answer(self, jobs: Sequence[Job], emit: Emit) -> None:
        seed = self.seed
        for job in jobs:
            handler = HANDLERS.get(job.request.kind)
            if handler is None:
                emit(job, Outcome(error=f"random model cannot answer {job.request.kind!r} requests"))
                continue
            emit(job, Outcome(response=handler(job, uniform(seed, job.item_id, job.trial, job.request.kind))))
