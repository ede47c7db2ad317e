"""``loglikelihood`` for ``hf-causal``: lm-evaluation-harness's scores, the shared context computed once.

For one request (context c, continuations x¹…x^K), encoded as lm-eval encodes them
(:func:`~genderscope.backends.continuations.encode_pairs`), the answer per continuation is
Σ_t ln p(x_t | c, x_<t) (log-softmax in float32, summed in float64) and ``greedy`` = every x_t is the
arg-max of its prediction.  Four routes give the same numbers up to float rounding:

* **shared context** (when it saves at least ``SHARE_MIN_SAVED`` tokens and the token-tree route does not
  take the request: with a split head the tree route is preferred up to ``TREE_OVER_SHARED_ROW`` nodes): one
  forward pass over c,
  its KV cache repeated for the K continuations, then one right-padded forward over x^k_<last with
  explicit positions after c; the first continuation token is scored from c's last logits.  Cost ≈
  |c| + Σ|x^k| tokens instead of K·|c| + Σ|x^k|.
* **single-token continuations** (yes/Yes/no/No): each context's last prediction scores all of them; with a
  split head and a model that takes a custom 4-D mask, contexts of up to ``FOREST_MAX_ROW`` tokens are merged
  into prefix trees across requests (:func:`~genderscope.backends.hf.tree.context_forest`: WinoGender's
  pronoun variants of one sentence share their opening), the others go in left-padded, length-sorted
  batches with explicit positions, one logits row kept each;
* **token tree** (when the continuations' prefix tree saves ≥ 30 % of the tokens and the model takes a
  custom 4-D mask): :mod:`genderscope.backends.hf.tree`, every shared prefix once, many requests a batch;
* **whole sequences** (otherwise): the rows c + x^k[:-1] of all jobs, length-sorted and packed under the
  token budget as ``token_logprobs`` does, each scored on its last |x^k| positions.
"""

from __future__ import annotations

from typing import Any

from genderscope.backends.hf import tree as hf_tree
from genderscope.backends.continuations import encode_pairs
from genderscope.backends.hf.tensors import (
    cache_keyword,
    forward_last,
    left_pad,
    repeat_cache_rows,
    returned_cache,
    score_positions,
)
from genderscope.core.backend import Emit
from genderscope.core.primitives import LoglikelihoodJson
from genderscope.core.requests import Job, Outcome

#: a context is computed once for its continuations when that saves at least this many forward tokens,
#: len(context) × (K − 1); below it the whole-sequence route's length-sorted batches are faster (one
#: batch-1 forward per item costs more than the tokens it saves on a CPU)
SHARE_MIN_SAVED = 256
#: a request goes the token-tree route (:mod:`genderscope.backends.hf.tree`) when its tree has at most this
#: share of the whole-sequence route's input tokens
TREE_MAX_SHARE = 0.7
#: the same with a split head (no logits beyond the scored nodes, big batches): any real saving pays
#: (CrowS-Pairs: 0.97 instead of 0.7 routes 5 % more of its tokens through trees, 7 % less CPU)
TREE_MAX_SHARE_SPLIT = 0.97
#: single-token requests' contexts are merged into prefix trees of at most this many nodes (longer rows
#: spend more on attention than the shared prefixes save)
FOREST_MAX_ROW = 64
#: with a split head, a request the shared-context route would take goes the token-tree route instead when
#: its tree has at most this many nodes: many requests share one forward there (BBQ's 12 answers after a
#: ~60-token context: 64 % less CPU than one context forward and one continuation forward per request)
TREE_OVER_SHARED_ROW = 512


def lm_eval_encode(backend: Any, text: str, special: bool) -> list[int]:
    """lm-eval's ``tok_encode``: the tokenizer's default special tokens unless ``special`` is False or the
    text already starts with the start token's text."""
    tok = backend.tok
    if special and backend.prefix_id is not None and text.startswith(tok.decode([backend.prefix_id])):
        special = False
    return list(tok(text, add_special_tokens=special)["input_ids"])


def _scores(logits: Any, targets: list[int]) -> tuple[float, bool]:
    """(Σ ln p of ``targets`` under ``logits`` rows, all arg-max) — rows aligned with targets."""
    import torch

    lp = torch.log_softmax(logits.float(), -1)
    tgt = torch.tensor(targets, dtype=torch.long, device=lp.device)
    picked = lp.gather(1, tgt[:, None])[:, 0].double()
    greedy = bool((lp.max(-1).indices == tgt).all())
    return float(picked.sum()), greedy


def answer(backend: Any, jobs: list[Job], emit: Emit) -> None:
    """Answer ``loglikelihood`` jobs (see the module docstring), each emitted as soon as it is scored."""
    whole: list[tuple[Job, list[int], list[list[int]]]] = []
    last: list[tuple[Job, list[int], list[list[int]]]] = []
    trees: list[tuple[list[tuple[Job, int]], hf_tree.TokenTree, int]] = []
    use_trees, row_cap = hf_tree.fits(backend), hf_tree.max_row(backend)
    for job in jobs:
        p = job.request.payload
        try:
            ctx, conts = encode_pairs(
                lambda t, sp: lm_eval_encode(backend, t, sp),
                p["context"],
                p["continuations"],
                backend.prefix_id,
            )
        except ValueError as exc:
            emit(job, Outcome(error=str(exc)))
            continue
        if any(not c for c in conts):
            emit(job, Outcome(error="a continuation encodes to no tokens after its context"))
            continue
        share = len(ctx) * (len(conts) - 1) >= SHARE_MIN_SAVED
        if all(len(c) == 1 for c in conts) and len(conts) > 1:
            last.append((job, ctx, conts))
        elif (
            use_trees
            and (not share or backend.head is not None)
            and _worth_a_tree(
                tree := hf_tree.build_tree(ctx, conts),
                flat := hf_tree.flat_tokens(ctx, conts),
                min(row_cap, TREE_OVER_SHARED_ROW) if share else row_cap,
                TREE_MAX_SHARE if backend.head is None else TREE_MAX_SHARE_SPLIT,
            )
        ):
            trees.append(([(job, len(conts))], tree, flat))
        elif share:
            emit(job, Outcome(response=_shared(backend, ctx, conts)))
        else:
            whole.append((job, ctx, conts))
    if last and use_trees and backend.head is not None:
        last = _single_token_forest(backend, last, emit, min(row_cap, FOREST_MAX_ROW))
    if last:
        _single_tokens(backend, last, emit)
    if trees:
        hf_tree.answer_trees(backend, trees, emit)
    if whole:
        _whole(backend, whole, emit)


def _worth_a_tree(tree: hf_tree.TokenTree, flat: int, row_cap: float, max_share: float) -> bool:
    """The tree route for a request: it saves enough tokens and its row fits the model's attention window."""
    return tree.size <= max_share * flat and tree.size <= row_cap


def _shared(backend: Any, ctx: list[int], conts: list[list[int]]) -> LoglikelihoodJson:
    """One context forward, its cache repeated for the continuations (the shared-context route)."""
    import torch

    dev, k = backend.device, len(conts)
    with torch.inference_mode():
        out = forward_last(backend.model, input_ids=torch.tensor([ctx], device=dev), use_cache=True)
        cache = returned_cache(out)
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
            past = repeat_cache_rows(cache, k)
            logits = backend.model(
                input_ids=ids,
                attention_mask=attn,
                position_ids=pos,
                use_cache=True,
                **{cache_keyword(backend.model): past},
            ).logits
            backend.count_forward(k)
            for i, c in enumerate(conts):
                rows = torch.cat([last, logits[i, : len(c) - 1]], dim=0)
                res.append(_scores(rows, c))
    _count(backend, "context_tokens_shared", len(ctx) * (k - 1))
    _count(backend, "tokens_forward", len(ctx) + sum(len(c) - 1 for c in conts))
    return {
        "logprobs": [r[0] for r in res],
        "n_tokens": [len(c) for c in conts],
        "greedy": [r[1] for r in res],
    }


def _single_token_forest(
    backend: Any, items: list[tuple[Job, list[int], list[list[int]]]], emit: Emit, cap: float
) -> list[tuple[Job, list[int], list[list[int]]]]:
    """Single-token items whose contexts share prefixes across requests (WinoGender's he/she/they variants of
    one sentence): contexts merged into prefix trees (:func:`hf_tree.context_forest`) of at most ``cap``
    nodes and scored by the tree route; returns the items left to :func:`_single_tokens` (longer contexts)."""
    fit = [it for it in items if len(it[1]) <= cap]
    forest = hf_tree.context_forest([(ctx, [c[0] for c in conts]) for _j, ctx, conts in fit], int(cap))
    rows = []
    for tree, members in forest:
        flat = sum(len(fit[i][1]) * len(fit[i][2]) for i in members)
        rows.append(([(fit[i][0], len(fit[i][2])) for i in members], tree, flat))
    if rows:
        hf_tree.answer_trees(backend, rows, emit)
    return [it for it in items if len(it[1]) > cap]


def _single_tokens(backend: Any, items: list[tuple[Job, list[int], list[list[int]]]], emit: Emit) -> None:
    """Items whose continuations are all one token: each context's last prediction scores all of them, the
    contexts left-padded into length-sorted batches (explicit positions), one logits row kept per context."""
    import torch

    def run(batch: list[int]) -> None:
        ids, attn = left_pad([items[i][1] for i in batch], backend.pad_id)
        ids, attn = ids.to(backend.device), attn.to(backend.device)
        pos = (attn.cumsum(-1) - 1).clamp(min=0)
        backend.count_forward(len(batch))
        out = forward_last(backend.model, input_ids=ids, attention_mask=attn, position_ids=pos)
        logits = out.logits[:, -1]
        for r, i in enumerate(batch):
            job, ctx, conts = items[i]
            res = [_scores(logits[r : r + 1], c) for c in conts]
            _count(backend, "context_tokens_shared", len(ctx) * (len(conts) - 1))
            emit(job, Outcome(response={"logprobs": [x[0] for x in res], "n_tokens": [1] * len(conts),
                                        "greedy": [x[1] for x in res]}))  # fmt: skip

    _count(backend, "tokens_forward", sum(len(it[1]) for it in items))
    with torch.inference_mode():
        backend.batched([len(it[1]) for it in items], run)


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
        hidden = backend.hidden(input_ids=ids, attention_mask=mask)
        at, targets, spans = [], [], []
        for r, i in enumerate(batch):
            j, k, inp, n = rows[i]
            spans.append((len(at), n))
            at += [(r, t) for t in range(len(inp) - n, len(inp))]
            targets += (items[j][1] + items[j][2][k])[-n:]
        picked, greedy = score_positions(backend, hidden, [r for r, _ in at], [t for _, t in at], targets)
        for (s, n), i in zip(spans, batch):
            j, k = rows[i][0], rows[i][1]
            got[j][k] = float(picked[s : s + n].sum()), bool(greedy[s : s + n].all())
            if len(got[j]) == conts_of[j]:
                res = [got[j][x] for x in range(conts_of[j])]
                out: LoglikelihoodJson = {
                    "logprobs": [x[0] for x in res],
                    "n_tokens": [len(c) for c in items[j][2]],
                    "greedy": [x[1] for x in res],
                }
                emit(items[j][0], Outcome(response=out))

    _count(backend, "tokens_forward", sum(len(r[2]) for r in rows))
    backend.batched([len(r[2]) for r in rows], run, backend.scoring_budget())


def _count(backend: Any, name: str, n: int) -> None:
    """Add ``n`` to the backend's counter ``name`` (run.json ``backend_stats``)."""
    backend.counters[name] = backend.counters.get(name, 0) + n
