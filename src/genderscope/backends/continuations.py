"""lm-evaluation-harness's context/continuation split, shared by the backends that answer ``loglikelihood``.

lm-eval (``_encode_pair``) moves the context's trailing whitespace to the front of each continuation, then
encodes ``context + continuation`` whole and takes the ids after the first len(enc(context)) ids as the
continuation's; an empty context is replaced by the model's start token.
"""

from __future__ import annotations

from typing import Any, Callable


def split_context(context: str, continuations: list[str]) -> tuple[str, list[str]]:
    """(context without trailing whitespace, continuations with that whitespace in front)."""
    n = len(context) - len(context.rstrip())
    if n == 0:
        return context, list(continuations)
    return context[:-n], [context[-n:] + c for c in continuations]


def encode_pairs(
    encode: Callable[[str], list[int]],
    context: str,
    continuations: list[str],
    start_id: int | None,
    encode_context: Callable[[str], list[int]] | None = None,
) -> tuple[list[int], list[list[int]]]:
    """(context ids, continuation ids per continuation) as lm-eval encodes them; ``encode`` = the
    tokenizer without special tokens, ``start_id`` = BOS, else EOS (used for an empty context);
    ``encode_context`` (default ``encode``): how a non-empty context and context + continuation are
    encoded (lm-eval 0.4.13's HFLM: with the tokenizer's own special tokens, e.g. Llama's BOS)."""
    ctx, conts = split_context(context, continuations)
    if ctx == "":
        if start_id is None:
            raise ValueError("an empty context needs a start token (the model has neither BOS nor EOS)")
        return [start_id], [encode(c) for c in conts]
    enc = encode_context or encode
    ctx_ids = enc(ctx)
    return ctx_ids, [enc(ctx + c)[len(ctx_ids) :] for c in conts]


def continuation_sum(answer: Any, context_chars: int) -> tuple[float, int]:
    """(Σ ln p, token count) of the tokens of a ``token_logprobs`` answer that end after
    ``context_chars`` (a token straddling the boundary counts as the continuation's)."""
    sel = [lp for lp, (_s, e) in zip(answer["logprobs"], answer["offsets"]) if e > context_chars]
    if any(x is None for x in sel):
        raise ValueError("the continuation's first token has no log-probability (no start token)")
    return float(sum(sel)), len(sel)
