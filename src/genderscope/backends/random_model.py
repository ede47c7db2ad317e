"""``random`` — a seeded null model.

For multiple-choice chat requests (the task passes the answer tags in
``request.hints["choices"]``) it answers one tag uniformly at random.  The draw
depends only on (seed, item id, trial, request), never on the order of the calls,
so runs are reproducible whatever the batching.  Every other primitive kind has a generator
(function(job, u) with u uniform in [0, 1); one handler answers them all from ``_DRAWS``): whitespace
tokens with stable pseudo ids, and log-probabilities uniform in (-5, -1] nats.

``generate`` is a unigram sample: ``max_tokens`` words drawn i.i.d. from the whitespace tokens of the
``--unigram`` corpus (a registry split such as ``ptb:valid``, a file or a folder; ``<eos>`` dropped, as
in ``bordia.null_model``), with ``numpy.random.default_rng([null seed, payload seed])``, so the sample
depends only on the two seeds (not on the prompt, the item or the batching).  Temperature T reweights
the word probabilities p_w to p_w^(1/T) (T = 0: the most frequent word, repeated) and ``top_p`` keeps
the smallest set of most frequent words with that mass.  Without ``--unigram`` the corpus is the one the
request names in ``hints["corpus"]`` (a task's reference corpus, as ``hints["choices"]`` names the
options of a multiple-choice item), else the prompt's own words (an empty prompt gives an empty text,
``finish_reason`` = ``stop``).
"""

from __future__ import annotations

import hashlib
import re
import struct
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from genderscope.core.backend import Backend, Emit, handles
from genderscope.core.options import opt
from genderscope.core.primitives import (
    CHAT,
    FILL_MASK,
    GENERATE,
    KINDS,
    LOGLIKELIHOOD,
    TRANSLATE,
    MASKED_LOGPROBS,
    TOKEN_LOGPROBS,
    TOKENIZE,
)
from genderscope.core.requests import Job, Outcome


@dataclass
class RandomOptions:
    null_seed: int = opt(
        0, "seed of the random null model (also settable as random:SEED)", minimum=0, maximum=2**63 - 1
    )
    unigram: str = opt(
        "",
        "generate: corpus whose unigram distribution is sampled (ptb:valid, a file or a folder; "
        "default: the corpus the request names, else the prompt's words)",
    )


class Unigram:
    """Word types of a token list with their counts (first-occurrence order) and the raw tokens."""

    def __init__(self, tokens: Sequence[str]):
        self.tokens = np.array(tokens, dtype=object)
        types, first, counts = np.unique(self.tokens.astype(str), return_index=True, return_counts=True)
        order = np.argsort(first, kind="stable")
        self.types = types[order].astype(object)
        self.counts = counts[order]

    @classmethod
    def from_corpus(cls, spec: str) -> "Unigram":
        """The tokens of a corpus argument (``str.split()`` tokens, ``<eos>`` dropped)."""
        from genderscope.bordia.text import EOS, read_corpus

        return cls([t for d in read_corpus([spec]) for t in d.text.split() if t != EOS])

    def sample(self, n: int, seed: Sequence[int], temperature: float = 1.0, top_p: float = 1.0) -> list[str]:
        """``n`` words: i.i.d. draws with p_w ∝ count_w^(1/T) within the top-p nucleus."""
        if n == 0 or self.tokens.size == 0:
            return []
        rng = np.random.default_rng(list(seed))
        if temperature == 1.0 and top_p >= 1.0:  # exactly the corpus frequencies: draw token positions
            return list(self.tokens[rng.integers(0, self.tokens.size, size=n)])
        by_freq = np.argsort(-self.counts, kind="stable")
        if temperature == 0:
            return [self.types[by_freq[0]]] * n
        logw = np.log(self.counts[by_freq].astype(np.float64)) / temperature
        w = np.exp(logw - logw.max())
        p = w / w.sum()
        keep = min(int(np.searchsorted(np.cumsum(p), top_p, side="left")) + 1, p.size)
        p = p[:keep] / p[:keep].sum()
        return list(self.types[by_freq[:keep]][rng.choice(keep, size=n, p=p)])


def uniform(seed: int, *parts: Any) -> float:
    """A deterministic uniform number in [0, 1) from the seed and the given parts."""
    h = hashlib.blake2b(repr((seed,) + parts).encode(), digest_size=8).digest()
    return (struct.unpack("<Q", h)[0] >> 11) / float(1 << 53)


def _chat(job: Job, u: float) -> Any:
    choices = job.request.hints.get("choices")
    if choices:
        return choices[int(u * len(choices))]
    return "I cannot tell."


def _translate(job: Job, u: float) -> Any:
    """The null translator: the source text unchanged (it gives no grammatical gender to anyone)."""
    return job.request.payload["text"]


SPECIALS = {
    "mask": "[MASK]",
    "cls": "[CLS]",
    "sep": "[SEP]",
    "bos": None,
    "eos": None,
    "unk": "[UNK]",
    "pad": "[PAD]",
}
_SPECIAL_SET = {v for v in SPECIALS.values() if v}


def token_id(token: str) -> int:
    """A stable pseudo vocabulary id of a whitespace token (specials get 0-4)."""
    if token in _SPECIAL_SET:
        return sorted(_SPECIAL_SET).index(token)
    return 5 + int.from_bytes(hashlib.blake2b(token.encode(), digest_size=3).digest(), "little")


#: the special-token strings stand alone; other tokens are runs of non-space characters
_TOKEN_RE = re.compile(r"\[(?:MASK|CLS|SEP|UNK|PAD)\]|[^\s\[]+|\S")


def _words(text: str) -> list[tuple[str, int, int]]:
    """Tokens of ``text`` with character offsets (the null model's tokenizer, see ``_TOKEN_RE``)."""
    return [(m.group(), m.start(), m.end()) for m in _TOKEN_RE.finditer(text)]


def _tokenize(job: Job, u: float) -> Any:
    p = job.request.payload
    toks = [w for w, _s, _e in _words(p["text"])]
    if p.get("add_special_tokens"):
        toks = ["[CLS]"] + toks + ["[SEP]"]
    return {
        "ids": [token_id(t) for t in toks],
        "tokens": toks,
        "special": [t in _SPECIAL_SET for t in toks],
        "lookup": [token_id(w) for w in p.get("lookup", [])],
        "specials": dict(SPECIALS),
        "unk_id": token_id("[UNK]"),
        "continuation_prefix": "##",
        "dtype": "float32",
    }


def _draws(u: float, n: int) -> list[float]:
    """n log-probabilities in (-5, -1] nats, deterministic in u."""
    return [-1.0 - 4.0 * uniform(int(u * 2**31), i) for i in range(n)]


def _token_logprobs(job: Job, u: float) -> Any:
    words = _words(job.request.payload["text"])
    return {
        "tokens": [w for w, _s, _e in words],
        "offsets": [[s, e] for _w, s, e in words],
        "logprobs": _draws(u, len(words)),
    }


def _loglikelihood(job: Job, u: float) -> Any:
    """Per continuation: its whitespace tokens each drawn in (-5, -1] nats, independently of the others."""
    conts = job.request.payload["continuations"]
    n = [max(1, len(_words(c))) for c in conts]
    lps = [sum(_draws(uniform(int(u * 2**31), k), m)) for k, m in enumerate(n)]
    return {"logprobs": lps, "n_tokens": n, "greedy": [False] * len(conts)}


def _input_ids(p: dict[str, Any]) -> list[int]:
    if "ids" in p:
        return list(p["ids"])
    return [token_id(t) for t in ["[CLS]"] + [w for w, _s, _e in _words(p["text"])] + ["[SEP]"]]


def _fill_mask(job: Job, u: float) -> Any:
    """One random top-1 "token" from ``hints["choices"]`` (the task's plausible answers)."""
    p = job.request.payload
    ids = _input_ids(p)
    mask = token_id("[MASK]")
    pos = int(p["position"]) if "position" in p else (ids.index(mask) if mask in ids else 0)
    choices = job.request.hints.get("choices") or ["[UNK]"]
    w = choices[int(u * len(choices))]
    top = {
        "id": token_id(w),
        "token": w,
        "str": w,
        "text": w,
        "continuation": w.startswith("##"),
        "logprob": 0.0,
    }
    return {"ids": ids, "position": pos, "top": [top]}


def _masked_logprobs(job: Job, u: float) -> Any:
    p = job.request.payload
    ids = _input_ids(p)
    specials = {token_id(t) for t in _SPECIAL_SET}
    positions = list(p.get("positions", [i for i, t in enumerate(ids) if t not in specials]))
    lps = _draws(u, len(positions))
    loss = -sum(lps) / len(lps) if lps else float("nan")
    return {"ids": ids, "positions": positions, "logprobs": lps, "loss": loss}


#: request kind -> its draw ``(job, u) -> answer`` (``generate`` has a handler of its own: its corpus)
_DRAWS: dict[str, Callable[[Job, float], Any]] = {
    CHAT: _chat, TOKENIZE: _tokenize, TOKEN_LOGPROBS: _token_logprobs, LOGLIKELIHOOD: _loglikelihood,
    FILL_MASK: _fill_mask, MASKED_LOGPROBS: _masked_logprobs, TRANSLATE: _translate,
}  # fmt: skip

def _generate(job: Job, u: float, unigram: Unigram | None = None, seed: int = 0) -> Any:
    """A unigram sample (see the module docstring); ``u`` is unused: the payload's seed decides."""
    p = job.request.payload
    source = unigram if unigram is not None else Unigram(p["prompt"].split())
    words = source.sample(
        int(p["max_tokens"]), (seed, int(p["seed"])), p.get("temperature", 1.0), p.get("top_p", 1.0)
    )
    finish = "length" if len(words) == int(p["max_tokens"]) else "stop"
    return {"text": " ".join(words), "n_tokens": len(words), "finish_reason": finish}


class RandomBackend(Backend):
    kind = "random"
    description = "seeded null model: uniform over the task's options (random or random:SEED)"
    Options = RandomOptions
    cacheable = False
    needs_target = False

    def __init__(self, target: str, options: RandomOptions):
        super().__init__(target, options)
        if target:  # random:SEED
            from genderscope.core.validate import whole_number

            self.seed = whole_number("--model random:SEED", target, minimum=None, fix="e.g. --model random:3")
        else:
            self.seed = options.null_seed
        self._unigrams: dict[str, Unigram] = {}

    @property
    def fingerprint(self) -> str:
        return f"random:{self.seed}" + (f":unigram={self.options.unigram}" if self.options.unigram else "")

    def unigram(self, hint: str | None = None) -> Unigram | None:
        """The ``--unigram`` corpus, else the request's ``hint`` corpus (each read once), or None."""
        name = self.options.unigram or hint
        if not name:
            return None
        if name not in self._unigrams:
            self._unigrams[name] = Unigram.from_corpus(name)
        return self._unigrams[name]

    @handles(*_DRAWS)
    def _draw_jobs(self, jobs: list[Job], emit: Emit) -> None:
        """Answer each job with its kind's ``draw(job, u)``, u uniform in [0, 1) from (seed, item, trial,
        kind)."""
        seed = self.seed
        for job in jobs:
            kind = job.request.kind
            emit(job, Outcome(response=_DRAWS[kind](job, uniform(seed, job.item_id, job.trial, kind))))

    @handles(GENERATE)
    def _generate_jobs(self, jobs: list[Job], emit: Emit) -> None:
        for job in jobs:
            try:
                source = self.unigram(job.request.hints.get("corpus"))
            except Exception as exc:  # noqa: BLE001 - an unreadable corpus is this attempt's error
                emit(job, Outcome(error=f"random model: cannot read the unigram corpus: {exc}"))
                continue
            emit(job, Outcome(response=_generate(job, 0.0, source, self.seed)))


assert RandomBackend.request_kinds == set(KINDS), "the null model answers every primitive kind"
