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


def _fill_mask(job: Job, u: float) -> Any:
    """One random top-1 "token" from ``hints["choices"]`` (GenDa Lens tasks)."""
    p = job.request.payload
    choices = job.request.hints.get("choices") or ["[UNK]"]
    w = choices[int(u * len(choices))]
    return {
        "input": p.get("left", "") + "[MASK]" + p.get("right", ""),
        "top": [
            {"id": -1, "token": w, "str": w, "text": w, "continuation": w.startswith("##"), "logprob": 0.0}
        ],
    }


def _text_score(text: str, u: float) -> dict[str, Any]:
    n = max(1, len(text.split()))
    return {"loglik": -n * (1.0 + 4.0 * u), "n_scored": n, "n_tokens": n, "first_token_unscored": False}


def _loglik(job: Job, u: float) -> Any:
    """Random sentence log-likelihood / PLL: -(1 + 4u) nats per whitespace word."""
    return _text_score(job.request.payload["text"], u)


def _candidates(job: Job, u: float) -> Any:
    p = job.request.payload
    got = {w: _text_score(p["left"] + w + p["right"], uniform(int(u * 2**31), w)) for w in p["candidates"]}
    return {
        "loglik": {w: r["loglik"] for w, r in got.items()},
        "n_scored": {w: r["n_scored"] for w, r in got.items()},
    }


def _cross_entropy(job: Job, u: float) -> Any:
    """Random mean cross-entropies (1 + 4u' nats) for the text and each replacement variant."""
    p = job.request.payload
    toks = p["text"].split()
    find = p.get("find") or []
    k = next((i for i, t in enumerate(toks) if t in find), None)
    reps = p.get("replacements") or []
    return {
        "tokens": toks,
        "index": k,
        "n_tokens": len(toks),
        "unk": [False] * len(reps),
        "ce": [1.0 + 4.0 * uniform(int(u * 2**31), i) for i in range(1 + len(reps))],
    }


def _tokenize(job: Job, u: float) -> Any:
    return {"tokens": job.request.payload["text"].split(), "continuation_prefix": None}


def _masked_pair(job: Job, u: float) -> Any:
    """Random mean log-probabilities in (-5, -1] nats for both texts (gest-likelihood null model)."""
    return [-1.0 - 4.0 * uniform(int(u * 2**31), i) for i in range(2)]


def _continuations(job: Job, u: float) -> Any:
    """Random log-probabilities in (-5, -1] nats per continuation, one token each."""
    conts = job.request.payload["continuations"]
    return {
        "logprobs": [-1.0 - 4.0 * uniform(int(u * 2**31), i) for i in range(len(conts))],
        "n_tokens": [1] * len(conts),
    }


HANDLERS: dict[str, Callable[[Job, float], Any]] = {
    CHAT: _chat,
    "fill_mask": _fill_mask,
    "pll": _loglik,
    "loglik": _loglik,
    "candidates": _candidates,
    "cross_entropy": _cross_entropy,
    "tokenize": _tokenize,
    "masked_pair_logprob": _masked_pair,
    "continuation_logprobs": _continuations,
}


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
