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
