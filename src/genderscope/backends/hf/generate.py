"""Local generation for ``hf-causal``: request kinds ``chat`` and ``generate``.

* ``generate`` (plain continuation): the prompt is tokenised without special tokens after the model's
  start token (BOS, else EOS, as for ``token_logprobs``), no chat template; the seed is the payload's
  ``seed``; the answer is the text the new tokens add to the decoded prompt (``finish_reason`` =
  ``stop`` when an EOS token ended it before ``max_tokens``).  Everything below applies as for chat.

* Prompt = the model's chat template applied to ``messages`` with the generation prompt added
  (no chat template -> BackendError: chat needs an instruct model).
* Decoding: ``temperature == 0`` -> greedy (argmax); otherwise sampling from softmax(logits / T),
  restricted to the nucleus ``top_p``, with one private generator per answer seeded from
  sha256(canonical request, trial) — the same prompt and trial number give the same answer whatever
  the batch, the order or the process, and different trials give different draws.  One uniform per
  step is drawn and inverted on the sorted, float64 cumulative distribution.
* Stops at an EOS token (the tokenizer's and the generation config's) or after ``max_tokens`` new
  tokens, fewer where the prompt and answer would pass the model's context (its config's
  ``max_position_embeddings``: the answer ends there, ``length``; a prompt as long as the context alone
  is a failed attempt naming both sizes); the answer is the decoded text before EOS, special tokens skipped.
* Batching: prompts of equal ``max_tokens`` are sorted by length and generated ``--gen-batch-size``
  at a time, left-padded with an attention mask and explicit position ids, with a KV cache; the
  leading tokens all prompts of a batch share (system prompt, template opening) are computed once;
  a row that stops leaves the batch (and the cache), so the batch shrinks to the rows still
  generating.
"""

from __future__ import annotations

import hashlib
from typing import Any

from genderscope.core.backend import Emit
from genderscope.core.progress import note_tokens
from genderscope.common.errors import BackendError
from genderscope.core.requests import Job, Outcome
from genderscope.backends.hf.tensors import (
    cache_keyword,
    forward_last as _forward,
    keep_cache_rows as _keep_rows,
    left_pad as _left_pad,
    repeat_cache_rows as _repeat_rows,
    returned_cache,
)

DEFAULT_MAX_TOKENS = 256
#: a batch shares its common leading tokens when there are at least this many
MIN_SHARED_PREFIX = 8


def answer_seed(job: Job) -> int:
    """63-bit seed of one answer: sha256 of the canonical request and the trial number."""
    h = hashlib.sha256(f"{job.request.canonical()}\x00{job.trial}".encode()).digest()
    return int.from_bytes(h[:8], "little") >> 1


def eos_ids(tok: Any, model: Any) -> list[int]:
    """Token ids that end an answer."""
    ids: set[int] = set()
    if tok.eos_token_id is not None:
        ids.add(int(tok.eos_token_id))
    gen = getattr(model, "generation_config", None)
    e = getattr(gen, "eos_token_id", None) if gen is not None else None
    if isinstance(e, int):
        ids.add(e)
    elif isinstance(e, (list, tuple)):
        ids.update(int(x) for x in e)
    return sorted(ids)


def prompt_ids(tok: Any, messages: list[dict[str, str]]) -> list[int]:
    """Token ids of the chat-templated prompt, ready for the assistant's answer."""
    text = tok.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    return list(tok(text, add_special_tokens=False)["input_ids"])


def pick_tokens(logits: Any, temps: list[float], top_ps: list[float], gens: list[Any]) -> Any:
    """Next token per row: argmax where the temperature is 0, else a seeded nucleus sample.

    Sampling rows: p = softmax(logits / T) in float64; with top_p < 1 the tokens are sorted by p and
    cut after the smallest prefix whose mass reaches top_p (top_p = 1: vocabulary order, nothing cut,
    whatever the other rows); one uniform u from the row's generator picks the token whose cumulative
    mass first exceeds u · (kept mass).
    """
    import torch

    out = torch.argmax(logits, dim=-1)
    rows = [r for r, t in enumerate(temps) if t > 0]
    if not rows:
        return out
    u_all = {r: float(torch.rand(1, generator=gens[r], dtype=torch.float64)) for r in rows}
    for nucleus in (False, True):  # each row by its own rule, whatever the other rows of the batch
        part = [r for r in rows if (top_ps[r] < 1.0) == nucleus]
        if not part:
            continue
        sel = torch.tensor(part, device=logits.device)
        t = torch.tensor([temps[r] for r in part], dtype=torch.float64, device=logits.device)[:, None]
        probs = torch.softmax(logits[sel].double() / t, dim=-1)
        u = torch.tensor([u_all[r] for r in part], dtype=torch.float64, device=logits.device)[:, None]
        if not nucleus:
            cum = torch.cumsum(probs, dim=-1)
            k = torch.searchsorted(cum, u * cum[:, -1:], right=True).clamp(max=probs.shape[-1] - 1)
            out[sel] = k[:, 0].to(out.dtype)
            continue
        p_sorted, idx = torch.sort(probs, dim=-1, descending=True)
        cum = torch.cumsum(p_sorted, dim=-1)
        tp = torch.tensor([top_ps[r] for r in part], dtype=torch.float64, device=logits.device)[:, None]
        keep = (torch.searchsorted(cum, tp) + 1).clamp(min=1, max=p_sorted.shape[-1])  # tokens kept per row
        mass = cum.gather(1, keep - 1)
        k = torch.minimum(torch.searchsorted(cum, u * mass, right=True), keep - 1)
        out[sel] = idx.gather(1, k)[:, 0].to(out.dtype)
    return out


def append_unstopped(nxt: Any, live: list[int], new: list[list[int]], stop_t: Any) -> list[int]:
    """Append each live row's next token ``nxt[b]`` to its answer ``new[live[b]]`` unless it is one of the
    stop tokens ``stop_t`` (None: none); returns the rows that go on."""
    import torch

    stopped = torch.isin(nxt, stop_t).tolist() if stop_t is not None else [False] * len(live)
    keep = [b for b, st in enumerate(stopped) if not st]
    toks = nxt.tolist()
    for b in keep:
        new[live[b]].append(toks[b])
    return keep


def context_limit(model: Any) -> int | None:
    """Tokens the model's positions allow (prompt + answer), from its config; None when it names none."""
    cfg = getattr(model, "config", None)
    for name in ("max_position_embeddings", "n_positions", "max_seq_len", "seq_length"):
        value = getattr(cfg, name, None)
        if isinstance(value, int) and value > 0:
            return value
    return None


def fit_context(limit: int | None, n_prompt: int, max_new: int) -> tuple[int, str | None]:
    """(new tokens allowed, error): ``max_new`` capped at ``limit - n_prompt`` (the answer then ends with
    finish_reason ``length``); a prompt that fills the context alone is an error naming both sizes."""
    if limit is None:
        return max_new, None
    if n_prompt >= limit:
        return 0, (
            f"the prompt is {n_prompt} tokens and the model's context holds {limit}: shorten the prompt "
            "or use a model with a longer context"
        )
    return min(max_new, limit - n_prompt), None


def shared_prefix(rows: list[list[int]]) -> int:
    """Leading tokens common to all rows (0 for one row or fewer than ``MIN_SHARED_PREFIX``), leaving
    every row at least one token of its own."""
    if len(rows) < 2:
        return 0
    limit = min(len(r) for r in rows) - 1
    k = 0
    for col in zip(*rows):
        if k >= limit or any(t != col[0] for t in col):
            break
        k += 1
    return k if k >= MIN_SHARED_PREFIX else 0


def generate_batch(
    backend: Any,
    rows: list[list[int]],
    max_new: int,
    temps: list[float],
    top_ps: list[float],
    seeds: list[int],
) -> list[list[int]]:
    """New token ids per row (EOS excluded), batched with left padding and a KV cache.

    The leading tokens shared by all rows (the template's system prompt and opening) are run once, and
    their cache copied to every row; the rest of each row follows after its padding (mask 0), with
    positions continuing from the prefix — the same attention and positions as a left-padded row.
    Each step feeds only the last token of every unfinished row (positions continue from the row's
    own length, the attention mask grows by one); a row that stops is dropped from the batch and
    from the cache, and the loop ends when no row is left.
    """
    import torch

    model, device = backend.model, backend.device
    stops = eos_ids(backend.tok, model)
    pad = backend.tok.pad_token_id if backend.tok.pad_token_id is not None else (stops[0] if stops else 0)
    n = len(rows)
    counters = getattr(backend, "counters", {})
    cache_name = cache_keyword(model)
    past = None
    shared = shared_prefix(rows)
    ids, attn = _left_pad([r[shared:] for r in rows], pad)
    ids, attn = ids.to(device), attn.to(device)
    cur_pos = (attn.cumsum(-1) - 1).clamp(min=0) + shared
    if shared:  # the common prefix (system prompt, template) is computed once and its cache copied
        past, attn = _shared_prefix_cache(model, rows[0][:shared], n, attn, counters)
    gens = []
    for s in seeds:
        g = torch.Generator()
        g.manual_seed(s)
        gens.append(g)
    stop_t = torch.tensor(stops, dtype=torch.long, device=device)
    new: list[list[int]] = [[] for _ in rows]
    live = list(range(n))  # original index of each batch row still generating
    cur = ids
    with torch.inference_mode():
        for step in range(max_new):
            out = _forward(
                model,
                input_ids=cur,
                attention_mask=attn,
                position_ids=cur_pos,
                use_cache=True,
                **{cache_name: past},
            )
            if "forward_passes" in counters:
                counters["forward_passes"] += 1
                counters["sequences"] += len(live)
            past = returned_cache(out)
            nxt = pick_tokens(
                out.logits[:, -1, :].float(),
                [temps[i] for i in live],
                [top_ps[i] for i in live],
                [gens[i] for i in live],
            )
            keep = append_unstopped(nxt, live, new, stop_t if stops else None)
            note_tokens(len(keep))  # the progress line's tokens and tokens/s
            if not keep or step == max_new - 1:
                break
            if len(keep) < len(live):
                idx = torch.tensor(keep, dtype=torch.long, device=device)
                past = _keep_rows(past, idx)
                attn, cur_pos, nxt = attn[idx], cur_pos[idx], nxt[idx]
                live = [live[b] for b in keep]
            cur = nxt[:, None].to(device)
            attn = torch.cat([attn, torch.ones((len(live), 1), dtype=attn.dtype, device=device)], dim=1)
            cur_pos = cur_pos[:, -1:] + 1
    counters["generated_tokens"] = counters.get("generated_tokens", 0) + sum(len(x) for x in new)
    return new


def _shared_prefix_cache(model: Any, prefix: list[int], n: int, attn: Any, counters: dict) -> tuple[Any, Any]:
    """Run the ``prefix`` shared by all ``n`` rows once: its KV cache repeated per row, and the rows'
    attention mask with the prefix's ones in front."""
    import torch

    device, shared = attn.device, len(prefix)
    with torch.inference_mode():
        out = _forward(
            model,
            input_ids=torch.tensor([prefix], dtype=torch.long, device=device),
            attention_mask=torch.ones((1, shared), dtype=torch.long, device=device),
            position_ids=torch.arange(shared, device=device)[None],
            use_cache=True,
        )
    past = _repeat_rows(returned_cache(out), n)
    attn = torch.cat([torch.ones((n, shared), dtype=attn.dtype, device=device), attn], dim=1)
    if "forward_passes" in counters:
        counters["forward_passes"] += 1
        counters["sequences"] += 1
    counters["prefix_tokens_shared"] = counters.get("prefix_tokens_shared", 0) + shared * (n - 1)
    return past, attn


def _batches(backend: Any, items: list[tuple[Any, ...]]) -> Any:
    """Items ``(job, ids, max_new, temp, top_p, seed)`` grouped by ``max_new``, longest prompt first,
    ``--gen-batch-size`` at a time; yields (chunk, new token ids per item).  A backend with a
    ``generate_chunk(chunk, max_new)`` method (``self-debias``) decodes each chunk itself."""
    batch_size = max(1, int(getattr(backend.options, "gen_batch_size", 16)))
    custom = getattr(backend, "generate_chunk", None)
    groups: dict[int, list[Any]] = {}
    for item in items:
        groups.setdefault(item[2], []).append(item)
    for max_new, group in groups.items():
        group.sort(key=lambda it: -len(it[1]))
        for start in range(0, len(group), batch_size):
            chunk = group[start : start + batch_size]
            if custom is not None:
                yield chunk, custom(chunk, max_new)
                continue
            cols = list(zip(*chunk))
            yield (
                chunk,
                generate_batch(backend, list(cols[1]), max_new, list(cols[3]), list(cols[4]), list(cols[5])),
            )


def continuation_text(tok: Any, prompt: list[int], new: list[int]) -> str:
    """The text ``new`` adds after ``prompt`` (decoded together, so a leading space survives)."""
    kw = {"skip_special_tokens": True, "clean_up_tokenization_spaces": False}
    head, full = tok.decode(prompt, **kw), tok.decode(prompt + new, **kw)
    return full[len(head) :] if full.startswith(head) else tok.decode(new, **kw)


def generate(backend: Any, jobs: list[Job], emit: Emit) -> None:
    """Answer ``generate`` jobs: plain continuations (see the module docstring)."""
    start = [backend.prefix_id] if backend.prefix_id is not None else []
    limit = context_limit(backend.model)
    items = []
    for job in jobs:
        p = job.request.payload
        ids = start + list(backend.tok(p["prompt"], add_special_tokens=False)["input_ids"])
        if not ids:
            emit(job, Outcome(error="generate: empty prompt and the model has neither BOS nor EOS"))
            continue
        max_new, error = fit_context(limit, len(ids), int(p["max_tokens"]))
        if error:
            emit(job, Outcome(error=f"generate: {error}"))
            continue
        temp, top_p = float(p.get("temperature", 1.0)), float(p.get("top_p", 1.0))
        items.append((job, ids, max_new, temp, top_p, int(p["seed"])))
    for chunk, outs in _batches(backend, items):
        for (job, ids, max_new, *_), new in zip(chunk, outs):
            resp = {
                "text": continuation_text(backend.tok, ids, new),
                "n_tokens": len(new),
                "finish_reason": "length" if len(new) >= max_new else "stop",
            }
            emit(job, Outcome(response=resp))


def chat(backend: Any, jobs: list[Job], emit: Emit) -> None:
    """Answer ``chat`` jobs with the loaded causal LM (see module docstring)."""
    tok = backend.tok
    if not getattr(tok, "chat_template", None):
        raise BackendError(
            f"{backend.target}: the tokenizer has no chat template, so it cannot chat; use an "
            "instruct/chat model, or a likelihood task (gest-likelihood, dawinobias, abc)"
        )
    prepared = []
    limit = context_limit(backend.model)
    for job in jobs:
        p = job.request.payload
        try:
            ids = prompt_ids(tok, p["messages"])
        except Exception as exc:  # noqa: BLE001 - a template that rejects these messages
            emit(job, Outcome(error=f"chat template failed: {exc}"))
            continue
        temp = 1.0 if p.get("temperature") is None else float(p["temperature"])
        top_p = 1.0 if p.get("top_p") is None else float(p["top_p"])
        max_new, error = fit_context(limit, len(ids), int(p.get("max_tokens") or DEFAULT_MAX_TOKENS))
        if error:
            emit(job, Outcome(error=f"chat: {error}"))
            continue
        prepared.append((job, ids, max_new, temp, top_p, answer_seed(job)))
    for chunk, outs in _batches(backend, prepared):
        for it, toks in zip(chunk, outs):
            emit(it[0], Outcome(response=tok.decode(toks, skip_special_tokens=True)))
