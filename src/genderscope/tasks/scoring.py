"""Scores that tasks derive from the primitive answers (the views of :mod:`genderscope.core.primitives`).

All log-probabilities are natural logs (nats); sums are taken in float64.

* sentence log-likelihood LL = Σ_t ln p(x_t | start token, x_<t) over the scored tokens of a
  ``token_logprobs`` answer (a model with no BOS/EOS leaves the first token unscored);
* pseudo-log-likelihood PLL = Σ_t ln p(x_t | x with x_t masked) over a ``masked_logprobs`` answer
  asked with ``mask = each`` (Salazar et al. 2020);
* continuation score = Σ ln p over the tokens of ``context + continuation`` that end after the
  context (a token straddling the boundary counts as the continuation's);
* perplexity PPL = exp(−LL / N).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from genderscope.core.primitives import MaskedLogprobs, TokenLogprobs


@dataclass(frozen=True)
class TextScore:
    """``loglik`` (nats, float64 sum), ``n_scored`` tokens that contribute, ``n_tokens`` in the text."""

    loglik: float
    n_scored: int
    n_tokens: int

    @property
    def first_token_unscored(self) -> bool:
        return self.n_scored < self.n_tokens

    def ppl(self) -> float:
        """exp(−LL/N); NaN when no token was scored."""
        return math.exp(-self.loglik / self.n_scored) if self.n_scored > 0 else float("nan")


def _sum(values: Sequence[float]) -> float:
    return float(np.sum(np.asarray(values, dtype=np.float64))) if len(values) else 0.0


def sentence_score(answer: TokenLogprobs | MaskedLogprobs) -> TextScore:
    """LL of a ``token_logprobs`` answer, or PLL of a ``masked_logprobs`` (mask = each) answer."""
    lps = [x for x in answer.logprobs if x is not None]
    return TextScore(_sum(lps), len(lps), len(answer.logprobs))


def continuation_score(answer: TokenLogprobs, context_chars: int) -> TextScore:
    """Σ ln p of the tokens of a ``token_logprobs`` answer for ``context + continuation`` that end after
    character ``context_chars`` (the continuation's tokens)."""
    sel = [lp for lp, (_s, e) in zip(answer.logprobs, answer.offsets) if e > context_chars]
    if any(x is None for x in sel):
        raise ValueError("the continuation starts the text: its first token has no log-probability")
    return TextScore(_sum(sel), len(sel), len(sel))


def mean_logprob(answer: MaskedLogprobs) -> float | None:
    """Mean ln p over the positions of a ``masked_logprobs`` answer (None if there are none)."""
    lps = answer.logprobs
    return _sum(lps) / len(lps) if lps else None
