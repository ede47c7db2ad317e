"""The language-modelling cost of a debiasing method: perplexity on held-out text.

Causal LMs: the text's tokens, EOS-joined, cut into non-overlapping windows of ``window`` tokens (the first
token of each window is context only); PPL = exp(mean NLL over the predicted tokens).  Masked LMs: the
pseudo-perplexity exp(−mean PLL) over the same windows, each token masked in turn (Salazar et al. 2020).
At most ``max_tokens`` tokens are scored (the text's beginning).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch

from genderscope.debias.finetune import blocks_of


def perplexity(model: Any, tok: Any, texts: list[str], masked: bool, window: int = 128,
               max_tokens: int = 20_000) -> dict[str, float]:  # fmt: skip
    """{"ppl", "tokens"}: (pseudo-)perplexity of ``model`` on the first ``max_tokens`` tokens of ``texts``."""
    data = blocks_of(tok, texts, window)[: max(1, max_tokens // window)]
    nll, n = 0.0, 0
    model.eval()
    with torch.inference_mode():
        for row in data:
            if masked:
                copies = row.repeat(window, 1)
                idx = torch.arange(window)
                copies[idx, idx] = tok.mask_token_id
                lp = torch.log_softmax(model(input_ids=copies).logits.float(), -1)
                nll -= float(lp[idx, idx, row].sum())
                n += window
            else:
                lp = torch.log_softmax(model(input_ids=row[None]).logits[0, :-1].float(), -1)
                nll -= float(lp.gather(1, row[1:, None]).sum())
                n += window - 1
    return {"ppl": math.exp(nll / n), "tokens": n}


def perplexity_of_scores(
    logprobs_of: Callable[[list[list[int]]], list[list[float]]],
    tok: Any,
    texts: list[str],
    window: int = 128,
    max_tokens: int = 20_000,
) -> dict[str, float]:
    """{"ppl", "tokens"} over the same windows as :func:`perplexity` (causal), from a scorer:
    ``logprobs_of(rows)`` gives each row's ln p(row[t] | row[:t]) for t = 1 … window − 1 (e.g. Self-Debias's
    ln p̃).  PPL = exp(−Σ ln p / n)."""
    data = blocks_of(tok, texts, window)[: max(1, max_tokens // window)]
    scores = logprobs_of([row.tolist() for row in data])
    n = sum(len(r) for r in scores)
    return {"ppl": math.exp(-sum(sum(r) for r in scores) / n), "tokens": n}
