"""Tensor helpers the hf-causal routes share: left padding, a forward that keeps only the last position's
logits, and a KV cache's rows repeated or selected (Cache objects or legacy (k, v) tuples)."""

from __future__ import annotations

from typing import Any


def forward_last(model: Any, **kw: Any) -> Any:
    """``model(**kw)`` computing the logits of the last position only where the model can."""
    try:
        return model(logits_to_keep=1, **kw)
    except TypeError:  # a model without logits_to_keep
        return model(**kw)


def left_pad(rows: list[list[int]], pad: int) -> tuple[Any, Any]:
    """Left-padded ids and attention mask (1 on real tokens), on the CPU."""
    import torch

    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), pad, dtype=torch.long)
    attn = torch.zeros((len(rows), width), dtype=torch.long)
    for i, r in enumerate(rows):
        ids[i, width - len(r) :] = torch.tensor(r, dtype=torch.long)
        attn[i, width - len(r) :] = 1
    return ids, attn


def cache_keyword(model: Any) -> str:
    """The keyword a model's ``forward`` takes its KV cache by: ``cache`` (transformers 5.x, where
    ``past_key_values`` is deprecated and warns) or ``past_key_values`` (4.x)."""
    import inspect

    try:
        params = inspect.signature(model.forward).parameters
    except (TypeError, ValueError):  # pragma: no cover - a forward without a signature
        return "past_key_values"
    return "cache" if "cache" in params else "past_key_values"


def returned_cache(out: Any) -> Any:
    """The KV cache a forward pass returned, read by its current name (no deprecation warning)."""
    cache = out.get("cache") if hasattr(out, "get") else None
    return cache if cache is not None else out.past_key_values


def repeat_cache_rows(past: Any, n: int) -> Any:
    """The KV cache of one row repeated for ``n`` rows (a Cache object or legacy (k, v) tuples)."""
    if hasattr(past, "batch_repeat_interleave"):
        past.batch_repeat_interleave(n)
        return past
    return tuple(tuple(t.repeat_interleave(n, dim=0) for t in layer) for layer in past)


def keep_cache_rows(past: Any, idx: Any) -> Any:
    """The KV cache restricted to batch rows ``idx`` (a Cache object or legacy (k, v) tuples)."""
    if hasattr(past, "batch_select_indices"):
        past.batch_select_indices(idx)
        return past
    return tuple(tuple(t[idx] for t in layer) for layer in past)


def split_head(model: Any) -> tuple[Any, Any] | None:
    """(body, head) of a causal LM whose logits are ``head(body(...).last_hidden_state)`` — checked on one
    short input (a model that scales, soft-caps or otherwise post-processes its logits fails the check) —
    else None.  Scoring runs the body over large batches and the head only at the positions it needs."""
    import torch

    try:
        body, head = model.base_model, model.get_output_embeddings()
        if body is model or head is None:
            return None
        dev = model.get_input_embeddings().weight.device
        ids = torch.arange(4, device=dev)[None]
        kw = {"input_ids": ids, "attention_mask": torch.ones_like(ids)}
        with torch.inference_mode():
            want = model(**kw).logits
            got = head(body(**kw).last_hidden_state.to(head.weight.device))
        same = got.shape == want.shape and torch.allclose(got.float(), want.float(), rtol=1e-4, atol=1e-4)
    except (AttributeError, TypeError, ValueError, RuntimeError, NotImplementedError):
        return None
    return (body, head) if same else None


def score_positions(
    backend: Any, hidden: Any, rows: list[int], cols: list[int], targets: list[int]
) -> tuple[Any, Any]:
    """(ln p of each target as float64, arg-max flags) read at ``hidden[rows[i], cols[i]]``: the head applied
    there (``backend.head``; None = ``hidden`` already holds logits), log-softmax in float32, in chunks that
    keep each logits block under the backend's full-logits budget."""
    import torch

    r = torch.tensor(rows, dtype=torch.long, device=hidden.device)
    c = torch.tensor(cols, dtype=torch.long, device=hidden.device)
    picked, greedy = [], []
    step = backend.full_logits_budget()
    for s in range(0, len(rows), step):
        h = hidden[r[s : s + step], c[s : s + step]]
        logits = h if backend.head is None else backend.head(h.to(backend.head.weight.device))
        lp = torch.log_softmax(logits.float(), -1)
        tgt = torch.tensor(targets[s : s + step], dtype=torch.long, device=lp.device)
        picked.append(lp.gather(1, tgt[:, None])[:, 0].double().cpu())
        greedy.append((lp.max(-1).indices == tgt).cpu())  # max's first index: argmax's, ~2x faster on CPU
    if not picked:
        return torch.zeros(0, dtype=torch.float64), torch.zeros(0, dtype=torch.bool)
    return torch.cat(picked), torch.cat(greedy)
