"""Handlers for the tokenizer-independent likelihood kinds, shared by ``hf-mlm`` and ``hf-causal``.

* ``masked_pair_logprob`` {text_a, text_b} -> [l(a), l(b)] (masked LMs): tokenise both texts with
  the tokenizer's defaults (special tokens included); Δ = positions i < min(len a, len b) where the
  ids differ (position-wise, as the GEST paper does); l(x) = mean over i ∈ Δ of ln P(x_i) with every
  position of Δ replaced by the mask token, one forward pass per text.  [null, null] when Δ is empty.
* ``continuation_logprobs`` {context, continuations} -> {logprobs, n_tokens} (causal LMs): the context
  is tokenised with the tokenizer's defaults (BOS if it adds one, trailing special tokens dropped); a
  continuation's ids are what it adds to the tokenisation of ``context + continuation`` (its own
  tokenisation if the context's ids are not a prefix of that); logprob = Σ ln p(token | everything
  before), teacher-forced.  Continuations that are single tokens share one forward pass of the context.

Log-softmax in float32, sums and means in float64; sequences are right-padded with an attention
mask and packed under the backend's ``--batch-tokens`` budget.  Functions take the (loaded) backend:
it provides ``tok``, ``model``, ``device``, ``pad_id`` and ``options.batch_tokens``.
"""

from __future__ import annotations

from typing import Any, Callable

from genderscope.backends.hf_common import run_halving, token_budget_batches
from genderscope.core.backend import Emit
from genderscope.core.requests import Job, Outcome


def _pad(backend: Any, rows: list[list[int]]) -> tuple[Any, Any]:
    import torch

    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), backend.pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, r in enumerate(rows):
        ids[i, : len(r)] = torch.tensor(r, dtype=torch.long)
        mask[i, : len(r)] = 1
    return ids.to(backend.device), mask.to(backend.device)


def _run_batches(backend: Any, seqs: list[list[int]], run: Callable[[list[int], Any], None]) -> None:
    """Call ``run(batch indices, logits)`` for packed batches of ``seqs`` (one forward pass each)."""
    import torch

    counters = getattr(backend, "counters", {})

    def one(batch: list[int]) -> None:
        ids, mask = _pad(backend, [seqs[i] for i in batch])
        if "forward_passes" in counters:
            counters["forward_passes"] += 1
            counters["sequences"] += len(batch)
        run(batch, backend.model(input_ids=ids, attention_mask=mask).logits)

    def halved() -> None:
        if "oom_halvings" in counters:
            counters["oom_halvings"] += 1

    with torch.inference_mode():
        for batch in token_budget_batches([len(s) for s in seqs], int(backend.options.batch_tokens)):
            run_halving(batch, one, halved)


def masked_pair_logprob(backend: Any, jobs: list[Job], emit: Emit) -> None:
    """Answer ``masked_pair_logprob`` jobs (see module docstring)."""
    import torch

    tok = backend.tok
    mask_id = tok.mask_token_id
    seqs: list[list[int]] = []
    targets: list[list[int]] = []
    where: list[list[int]] = []
    slots: list[tuple[int, int] | None] = []
    for job in jobs:
        p = job.request.payload
        u = tok(p["text_a"])["input_ids"]
        v = tok(p["text_b"])["input_ids"]
        delta = [i for i in range(min(len(u), len(v))) if u[i] != v[i]]
        if not delta:
            slots.append(None)
            continue
        slots.append((len(seqs), len(seqs) + 1))
        for x in (u, v):
            masked = list(x)
            for i in delta:
                masked[i] = mask_id
            seqs.append(masked)
            targets.append([x[i] for i in delta])
            where.append(delta)
    means = [0.0] * len(seqs)

    def run(batch: list[int], logits: Any) -> None:
        for r, s in enumerate(batch):
            pos = torch.tensor(where[s], device=logits.device)
            lp = torch.log_softmax(logits[r, pos].float(), -1)
            got = lp.gather(1, torch.tensor(targets[s], device=lp.device)[:, None])[:, 0]
            means[s] = float(got.double().mean())

    if seqs:
        _run_batches(backend, seqs, run)
    for job, slot in zip(jobs, slots):
        emit(job, Outcome(response=[None, None] if slot is None else [means[slot[0]], means[slot[1]]]))


def _context_ids(tok: Any, context: str) -> list[int]:
    enc = tok(context, return_special_tokens_mask=True)
    ids, special = list(enc["input_ids"]), list(enc["special_tokens_mask"])
    while ids and special[-1] and len(ids) > 1:  # e.g. an EOS the tokenizer appends
        ids.pop()
        special.pop()
    return ids


def continuation_ids(tok: Any, context: str, continuation: str) -> list[int]:
    """Token ids that ``continuation`` adds after ``context`` (see module docstring)."""
    plain = tok(context, add_special_tokens=False)["input_ids"]
    joint = tok(context + continuation, add_special_tokens=False)["input_ids"]
    if joint[: len(plain)] == plain and len(joint) > len(plain):
        return list(joint[len(plain) :])
    return list(tok(continuation, add_special_tokens=False)["input_ids"])


def continuation_logprobs(backend: Any, jobs: list[Job], emit: Emit) -> None:
    """Answer ``continuation_logprobs`` jobs (see module docstring)."""
    import torch

    tok = backend.tok
    seq_index: dict[tuple[int, ...], int] = {}
    seqs: list[list[int]] = []
    plans: list[Any] = []  # per job: list of (seq index, start position, continuation ids) or an error
    for job in jobs:
        p = job.request.payload
        ctx = _context_ids(tok, p["context"])
        if not ctx:
            plans.append("the context encodes to no tokens")
            continue
        plan = []
        for cont in p["continuations"]:
            cids = continuation_ids(tok, p["context"], cont)
            if not cids:
                plan = f"continuation {cont!r} encodes to no tokens"
                break
            full = tuple(ctx + cids[:-1])
            if full not in seq_index:
                seq_index[full] = len(seqs)
                seqs.append(list(full))
            plan.append((seq_index[full], len(ctx) - 1, cids))
        plans.append(plan)
    # the logits needed per sequence: (start, ids) pairs
    needs: dict[int, list[tuple[int, list[int]]]] = {}
    for plan in plans:
        if isinstance(plan, list):
            for s, start, cids in plan:
                needs.setdefault(s, []).append((start, cids))
    sums: dict[tuple[int, int, tuple[int, ...]], float] = {}

    def run(batch: list[int], logits: Any) -> None:
        for r, s in enumerate(batch):
            for start, cids in needs.get(s, []):
                pos = torch.arange(start, start + len(cids), device=logits.device)
                lp = torch.log_softmax(logits[r, pos].float(), -1)
                got = lp.gather(1, torch.tensor(cids, device=lp.device)[:, None])[:, 0]
                sums[(s, start, tuple(cids))] = float(got.double().sum())

    if seqs:
        _run_batches(backend, seqs, run)
    for job, plan in zip(jobs, plans):
        if isinstance(plan, str):
            emit(job, Outcome(error=plan))
            continue
        emit(
            job,
            Outcome(
                response={
                    "logprobs": [sums[(s, st, tuple(c))] for s, st, c in plan],
                    "n_tokens": [len(c) for _s, _st, c in plan],
                }
            ),
        )
