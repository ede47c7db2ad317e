"""``loglikelihood`` for ``hf-causal``: lm-evaluation-harness's scores, the shared context computed once.

For one request (context c, continuations x¹…x^K), encoded as lm-eval encodes them
(:func:`~genderscope.backends.continuations.encode_pairs`; a non-empty context with the tokenizer's own
special tokens, as lm-eval 0.4.13's HFLM, so a Llama-style tokenizer puts its BOS first), the answer per
continuation is Σ_t ln p(x_t | c, x_<t) (log-softmax in float32, summed in float64) and ``greedy`` = every
x_t is the arg-max of its prediction.  Two routes give the same numbers up to float rounding:

* **shared context** (K ≥ 2 and a context of at least ``SHARE_MIN`` tokens): one forward pass over c,
  its KV cache repeated for the K continuations, then one right-padded forward over x^k_<last with
  explicit positions after c; the first continuation token is scored from c's last logits.  Cost ≈
  |c| + Σ|x^k| tokens instead of K·|c| + Σ|x^k|.
* **whole sequences** (otherwise): the rows c + x^k[:-1] of all jobs, length-sorted and packed under the
  token budget as ``token_logprobs`` does, each scored on its last |x^k| positions.
"""

from __future__ import annotations

from typing import Any

from genderscope.backends.continuations import encode_pairs
from genderscope.backends.hf_generate import _repeat_rows
from genderscope.core.backend import Emit
from genderscope.core.primitives import LoglikelihoodJson
from genderscope.core.requests import Job, Outcome

#: contexts shorter than this (tokens) are scored as whole sequences (sharing saves too little)
SHARE_MIN = 8


def _encode(backend: Any, text: str) -> list[int]:
    return list(backend.tok(text, add_special_tokens=False)["input_ids"])


def _encode_context(backend: Any, text: str) -> list[int]:
    """A non-empty context (and context + continuation) as lm-eval 0.4.13's HFLM encodes it: with the
    tokenizer's own special tokens (a BOS where it adds one), unless the text already starts with the
    start token's text."""
    start = backend.tok.decode([backend.prefix_id]) if backend.prefix_id is not None else ""
    special = not (start and text.startswith(start))
    return list(backend.tok(text, add_special_tokens=special)["input_ids"])


def _scores(logits: Any, targets: list[int]) -> tuple[float, bool]:
    """(Σ ln p of ``targets`` under ``logits`` rows, all arg-max) — rows aligned with targets."""
    import torch

    lp = torch.log_softmax(logits.float(), -1)
    tgt = torch.tensor(targets, dtype=torch.long, device=lp.device)
    picked = lp.gather(1, tgt[:, None])[:, 0].double()
    greedy = bool((lp.argmax(-1) == tgt).all())
    return float(picked.sum()), greedy


def answer(backend: Any, jobs: list[Job], emit: Emit) -> None:
    """Answer ``loglikelihood`` jobs (see the module docstring), each emitted as soon as it is scored."""
    whole: list[tuple[Job, list[int], list[list[int]]]] = []
    for job in jobs:
        p = job.request.payload
        try:
            ctx, conts = encode_pairs(
                lambda t: _encode(backend, t),
                p["context"],
                p["continuations"],
                backend.prefix_id,
                lambda t: _encode_context(backend, t),
            )
        except ValueError as exc:
            emit(job, Outcome(error=str(exc)))
            continue
        if any(not c for c in conts):
            emit(job, Outcome(error="a continuation encodes to no tokens after its context"))
            continue
        if len(conts) >= 2 and len(ctx) >= SHARE_MIN:
            emit(job, Outcome(response=_shared(backend, ctx, conts)))
        else:
            whole.append((job, ctx, conts))
    if whole:
        _whole(backend, whole, emit)


def _shared(backend: Any, ctx: list[int], conts: list[list[int]]) -> LoglikelihoodJson:
    """One context forward, its cache repeated for the continuations (the shared-context route)."""
    import torch

    dev, k = backend.device, len(conts)
    with torch.inference_mode():
        out = backend.model(input_ids=torch.tensor([ctx], device=dev), use_cache=True)
        backend.count_forward(1)
        last = out.logits[0, -1:]
        rests = [c[:-1] for c in conts]
        width = max(len(r) for r in rests)
        res: list[tuple[float, bool]] = []
        if width == 0:
            res = [_scores(last, c) for c in conts]
        else:
            ids, mask = backend.pad([r or [backend.pad_id] for r in rests])
            for i, r in enumerate(rests):
                if not r:
                    mask[i, 0] = 0
            attn = torch.cat([torch.ones((k, len(ctx)), dtype=mask.dtype, device=mask.device), mask], dim=1)
            pos = (len(ctx) + torch.arange(ids.shape[1], device=ids.device))[None].expand(k, -1)
            past = _repeat_rows(out.past_key_values, k)
            logits = backend.model(
                input_ids=ids, attention_mask=attn, position_ids=pos, past_key_values=past, use_cache=True
            ).logits
            backend.count_forward(k)
            for i, c in enumerate(conts):
                rows = torch.cat([last, logits[i, : len(c) - 1]], dim=0)
                res.append(_scores(rows, c))
    backend.counters["context_tokens_shared"] = backend.counters.get("context_tokens_shared", 0) + len(
        ctx
    ) * (k - 1)
    return {
        "logprobs": [r[0] for r in res],
        "n_tokens": [len(c) for c in conts],
        "greedy": [r[1] for r in res],
    }


def _whole(backend: Any, items: list[tuple[Job, list[int], list[list[int]]]], emit: Emit) -> None:
    """Score c + x^k as whole rows across jobs, packed by length; emit each job when its rows are done."""
    rows: list[tuple[int, int, list[int], int]] = []  # (job index, continuation index, input ids, |x|)
    for j, (_job, ctx, conts) in enumerate(items):
        for k, c in enumerate(conts):
            rows.append((j, k, (ctx + c)[:-1], len(c)))
    got: list[dict[int, tuple[float, bool]]] = [{} for _ in items]
    conts_of = [len(c) for _j, _c, c in items]

    def run(batch: list[int]) -> None:
        ids, mask = backend.pad([rows[i][2] for i in batch])
        backend.count_forward(len(batch))
        logits = backend.model(input_ids=ids, attention_mask=mask).logits
        for r, i in enumerate(batch):
            j, k, inp, n = rows[i]
            full = items[j][1] + items[j][2][k]
            got[j][k] = _scores(logits[r, len(inp) - n : len(inp)], full[-n:])
            if len(got[j]) == conts_of[j]:
                res = [got[j][x] for x in range(conts_of[j])]
                out: LoglikelihoodJson = {
                    "logprobs": [x[0] for x in res],
                    "n_tokens": [len(c) for c in items[j][2]],
                    "greedy": [x[1] for x in res],
                }
                emit(items[j][0], Outcome(response=out))

    backend.batched([len(r[2]) for r in rows], run, backend.full_logits_budget())
