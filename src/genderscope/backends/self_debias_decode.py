"""Self-Debias arithmetic and decoding for ``self-debias:hf-causal`` (see backends/self_debias.py).

* :func:`debias`: p̃ from the regular distribution p and the prefixed maximum p_b (the authors'
  ``SelfDebiasingLogitsProcessor``), shared by the scoring and the generation routes.
* :func:`generate_debiased`: ``chat`` / ``generate`` decoding.  Each prompt is decoded side by side with
  its prefixed copies: one left-padded batch of (1 + K) rows per prompt (K prefixes), position ids from
  the attention mask, one KV cache.  At each step the regular row's next-token scores become ln p̃ (at
  temperature 1, as the authors' processor runs before transformers' temperature and top-p warpers),
  ``hf_generate.pick_tokens`` picks one token from them (greedy, or the answer's seeded nucleus sample),
  and that token is appended to the regular row and to every prefixed copy (the authors' modified
  ``sample``).  A prompt whose token is an EOS leaves the batch with all its rows.
"""

from __future__ import annotations

from typing import Any

from genderscope.backends.hf.generate import append_unstopped, eos_ids, pick_tokens
from genderscope.backends.hf.tensors import (
    cache_keyword,
    forward_last,
    keep_cache_rows,
    left_pad,
    returned_cache,
)


def debias(p: Any, p_b: Any, decay_constant: float, epsilon: float) -> Any:
    """p̃ = α·p / Σ α·p with α = max(exp(−λ·max(p_b − p, 0)), ε), along the last axis."""
    import torch

    alpha = torch.clamp(torch.exp(-decay_constant * torch.clamp(p_b - p, min=0.0)), min=epsilon)
    pt = p * alpha
    return pt / pt.sum(-1, keepdim=True)


def generate_debiased(
    backend: Any,
    groups: list[list[list[int]]],
    max_new: int,
    temps: list[float],
    top_ps: list[float],
    seeds: list[int],
) -> list[list[int]]:
    """New token ids per prompt (EOS excluded); ``groups[i]`` = [regular ids, prefixed ids, …], the same
    number of rows for every prompt (see the module docstring)."""
    import torch

    model, device, o = backend.model, backend.device, backend.options
    g = len(groups[0])
    stops = eos_ids(backend.tok, model)
    pad = backend.tok.pad_token_id if backend.tok.pad_token_id is not None else (stops[0] if stops else 0)
    ids, attn = left_pad([r for grp in groups for r in grp], pad)
    ids, attn = ids.to(device), attn.to(device)
    pos = (attn.cumsum(-1) - 1).clamp(min=0)
    gens = [torch.Generator().manual_seed(s) for s in seeds]
    stop_t = torch.tensor(stops, dtype=torch.long, device=device)
    cache_name = cache_keyword(model)
    new: list[list[int]] = [[] for _ in groups]
    live = list(range(len(groups)))  # prompt index of each group still generating
    past, cur = None, ids
    with torch.inference_mode():
        for step in range(max_new):
            out = forward_last(
                model,
                input_ids=cur,
                attention_mask=attn,
                position_ids=pos,
                use_cache=True,
                **{cache_name: past},
            )
            backend.count_forward(len(live) * g)
            past = returned_cache(out)
            probs = torch.softmax(out.logits[:, -1, :].float(), -1)
            probs = probs.view(len(live), g, probs.shape[-1])
            scores = torch.log(debias(probs[:, 0], probs[:, 1:].amax(1), o.decay_constant, o.epsilon))
            nxt = pick_tokens(
                scores, [temps[i] for i in live], [top_ps[i] for i in live], [gens[i] for i in live]
            )
            keep = append_unstopped(nxt, live, new, stop_t if stops else None)
            if not keep or step == max_new - 1:
                break
            if len(keep) < len(live):
                rows = torch.tensor(
                    [b * g + k for b in keep for k in range(g)], dtype=torch.long, device=device
                )
                past = keep_cache_rows(past, rows)
                attn, pos = attn[rows], pos[rows]
                nxt = nxt[torch.tensor(keep, dtype=torch.long, device=nxt.device)]
                live = [live[b] for b in keep]
            cur = nxt.repeat_interleave(g)[:, None].to(device)
            attn = torch.cat([attn, torch.ones((attn.shape[0], 1), dtype=attn.dtype, device=device)], dim=1)
            pos = pos[:, -1:] + 1
    backend.counters["generated_tokens"] = backend.counters.get("generated_tokens", 0) + sum(
        len(x) for x in new
    )
    return new
