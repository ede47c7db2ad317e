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
    encode: Callable[[str, bool], list[int]], context: str, continuations: list[str], start_id: int | None
) -> tuple[list[int], list[list[int]]]:
    """(context ids, continuation ids per continuation) as lm-eval 0.4.13 encodes them for one context;
    ``encode(text, special)`` = the tokenizer with its default special tokens (``special``) or none,
    ``start_id`` = BOS, else EOS.

    An empty context is ``[start_id]`` before each continuation encoded without special tokens (a
    continuation that itself starts with the start token gives that token as context, as lm-eval does);
    all continuations of one request then share the context only when none starts with it.  A non-empty
    context and each context + continuation are encoded with the tokenizer's defaults (a BOS-adding
    tokenizer puts BOS in front), except that a string already starting with the start token's text gets
    no special tokens (lm-eval's ``has_bos_prefix`` rule, applied by ``encode``'s caller)."""
    ctx, conts = split_context(context, continuations)
    if ctx == "":
        if start_id is None:
            raise ValueError("an empty context needs a start token (the model has neither BOS nor EOS)")
        encs = [encode(c, False) for c in conts]
        if any(e and e[0] == start_id for e in encs):
            raise ValueError("a continuation starts with the start token itself; give it as the context")
        return [start_id], encs
    ctx_ids = encode(ctx, True)
    return ctx_ids, [encode(ctx + c, True)[len(ctx_ids) :] for c in conts]


def continuation_sum(answer: Any, context_chars: int) -> tuple[float, int]:
    """(Σ ln p, token count) of the tokens of a ``token_logprobs`` answer that end after
    ``context_chars`` (a token straddling the boundary counts as the continuation's)."""
    sel = [lp for lp, (_s, e) in zip(answer["logprobs"], answer["offsets"]) if e > context_chars]
    if any(x is None for x in sel):
        raise ValueError("the continuation's first token has no log-probability (no start token)")
    return float(sum(sel)), len(sel)
