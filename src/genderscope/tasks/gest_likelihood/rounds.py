"""The primitive requests of ``gest-likelihood``, in rounds, and the per-sentence score (log10, male −
female) derived from their answers.

* masked form, two rounds (:func:`masked_rounds`): ``tokenize`` {text, add_special_tokens: true} of the
  male and the female text; Δ = positions i < min(len a, len b) where the ids differ (position-wise, as
  the GEST paper does); then ``masked_logprobs`` {ids, positions: Δ, mask: all} of each text: every
  position of Δ masked at once, ln P of the text's own ids there.  l(x) = mean over Δ (nats,
  :func:`~genderscope.tasks.scoring.mean_logprob`); score = (l(male) − l(female)) / ln 10, NaN when
  Δ is empty (nothing is asked then).
* causal form, one round (:func:`causal_rounds`): ``token_logprobs`` of ``prompt + word`` for the male
  and the female word; ln p(word | start token, prompt) = the sum over the tokens that end after the prompt
  (:func:`~genderscope.tasks.scoring.continuation_score`, teacher-forced for multi-token words);
  score = (ln p(male) − ln p(female)) / ln 10.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Iterable, Sequence

from genderscope.core.primitives import (
    MASKED_LOGPROBS,
    MaskedLogprobs,
    TokenLogprobs,
    Tokens,
    masked_logprobs_request,
    token_logprobs_request,
    tokenize_request,
)
from genderscope.core.requests import Attempt, AttemptResult
from genderscope.core.rounds import Answers, Round, Rounds
from genderscope.tasks.gest_likelihood.templates import CAUSAL, MASKED
from genderscope.tasks.scoring import continuation_score, mean_logprob

LN10 = math.log(10.0)
SIDES = ("male", "female")
#: the rounds (their names are the ``step`` of the attempts.jsonl records)
TOKENS, LOGPROBS, CONTINUATION = "tokenize", "masked_logprobs", "continuation"
#: one (item id base, sentence, template, meta) per item of the run, in order
Items = Callable[[], Iterable[tuple[str, str, int, dict[str, Any]]]]


def masked_rounds(items: Items) -> Rounds:
    """The masked form: tokenise both texts of every item, then score their differing positions."""

    def ask_tokens(_: Answers) -> list[Attempt]:
        return [
            a
            for base, sentence, t, meta in items()
            for a in masked_tokenize_attempts(base, sentence, t, meta)
        ]

    return Rounds(
        Round(TOKENS, ask_tokens),
        Round(LOGPROBS, lambda answers: masked_logprob_attempts(answers.of(TOKENS))),
    )


def causal_rounds(items: Items) -> Rounds:
    """The causal form: one round of ``token_logprobs`` per item and word."""

    def ask(_: Answers) -> list[Attempt]:
        return [a for base, sentence, t, meta in items() for a in causal_attempts(base, sentence, t, meta)]

    return Rounds(Round(CONTINUATION, ask))


def item_key(meta: dict[str, Any]) -> tuple[int, int]:
    """(template, position of the row in the run) of an attempt."""
    return meta["template"], meta["j"]


def differing_positions(a: Sequence[int], b: Sequence[int]) -> list[int]:
    """Δ: the positions i < min(len a, len b) where the two id sequences differ."""
    return [i for i in range(min(len(a), len(b))) if a[i] != b[i]]


def masked_tokenize_attempts(base: str, sentence: str, t: int, meta: dict[str, Any]) -> list[Attempt]:
    """Round 1 of the masked form: tokenise the male and the female text of template ``t``."""
    texts = dict(zip(SIDES, MASKED[t].render(sentence)))
    return [
        Attempt(
            f"{base}/{side}/tokenize",
            1,
            tokenize_request(texts[side], add_special_tokens=True),
            {**meta, "side": side},
        )
        for side in SIDES
    ]


def masked_logprob_attempts(tokenized: Sequence[AttemptResult]) -> list[Attempt]:
    """Round 2 of the masked form: ``masked_logprobs`` at Δ of both texts of every item whose two
    tokenisations (``tokenized``: the results of round 1) came back and differ."""
    pairs: dict[tuple[int, int], dict[str, AttemptResult]] = {}
    for ar in tokenized:
        pairs.setdefault(item_key(ar.attempt.meta), {})[ar.attempt.meta["side"]] = ar
    out = []
    for pair in pairs.values():
        if len(pair) != 2 or not all(ar.ok for ar in pair.values()):
            continue
        ids = {side: list(Tokens.of(pair[side].response).ids) for side in SIDES}
        delta = differing_positions(ids["male"], ids["female"])
        if not delta:
            continue
        for side in SIDES:
            a = pair[side].attempt
            req = masked_logprobs_request(ids=ids[side], positions=delta, mask="all")
            item_id = a.item_id.removesuffix("/tokenize")
            out.append(Attempt(item_id, 1, req, a.meta))
    return out


def causal_attempts(base: str, sentence: str, t: int, meta: dict[str, Any]) -> list[Attempt]:
    """The causal form: ``token_logprobs`` of the prompt followed by each word of template ``t``."""
    tpl = CAUSAL[t]
    prompt = tpl.render(sentence)
    return [
        Attempt(
            f"{base}/{side}",
            1,
            token_logprobs_request(prompt + word),
            {**meta, "side": side, "prompt_chars": len(prompt)},
        )
        for side, word in zip(SIDES, (tpl.male, tpl.female))
    ]


class Failed(Exception):
    """An item whose score cannot be computed because a request failed."""


def masked_score(rs: Sequence[AttemptResult]) -> float:
    """log10 score of a masked item from its results (NaN when Δ is empty); Failed if a request failed."""
    if any(not ar.ok for ar in rs):
        raise Failed
    lps = {
        ar.attempt.meta["side"]: MaskedLogprobs.of(ar.response)
        for ar in rs
        if ar.attempt.request.kind == MASKED_LOGPROBS
    }
    if not lps:  # nothing was asked: both texts tokenised, no differing position
        toks = {ar.attempt.meta["side"]: Tokens.of(ar.response).ids for ar in rs}
        if len(toks) != 2:
            raise Failed
        if differing_positions(toks["male"], toks["female"]):
            raise ValueError("the masked_logprobs answers are missing")
        return float("nan")
    la, lb = mean_logprob(lps["male"]), mean_logprob(lps["female"])
    if la is None or lb is None:
        return float("nan")
    return (la - lb) / LN10


def causal_score(rs: Sequence[AttemptResult]) -> tuple[float, list[int]]:
    """(log10 score, [male, female] word token counts) of a causal item; Failed if a request failed."""
    if len(rs) != 2 or any(not ar.ok for ar in rs):
        raise Failed
    got = {
        ar.attempt.meta["side"]: continuation_score(
            TokenLogprobs.of(ar.response), ar.attempt.meta["prompt_chars"]
        )
        for ar in rs
    }
    m, f = got["male"], got["female"]
    return (m.loglik - f.loglik) / LN10, [m.n_scored, f.n_scored]
