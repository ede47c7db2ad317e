"""Scoring texts against a reference corpus: per-word co-occurrence bias, μ, σ and amplification β.

For every context type (``fixed``/``infinite``) and geometry (``paper``/``reference``) the counting and the
per-word bias are bordia's (:mod:`genderscope.bordia.cooccurrence`, :mod:`genderscope.bordia.bias`):
bias(w) = ln(P(w|F)/P(w|M)) in nats (> 0 = female-leaning), μ = mean |bias|, σ = population sd of the
signed bias, both with a percentile bootstrap interval over scored words. β is the OLS slope of a text's
bias on the corpus's bias over the words scored in both (bias_text(w) = β · bias_corpus(w) + c) with its
t-interval and a bootstrap interval (:mod:`genderscope.bordia.amplification`).

Each text (one sample) is one document: windows never cross samples. Texts are tokenised with a
:class:`~genderscope.tasks.cooccurrence_amplification.normalise.Normaliser` straight into token ids
(:func:`token_stream`), which for corpus-form text gives exactly
:func:`genderscope.bordia.text.tokenize_documents`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from genderscope.bordia.amplification import AmplificationResult, amplification
from genderscope.bordia.bias import ScoreOptions, bias_scores
from genderscope.bordia.cooccurrence import CountConfig, count_cooccurrences
from genderscope.bordia.pairs import GenderPairs
from genderscope.bordia.scoring import ContextScore
from genderscope.bordia.text import EOS, TokenStream
from genderscope.tasks.cooccurrence_amplification.normalise import Normaliser, normalised_codes


def token_stream(
    texts: Sequence[str],
    norm: Normaliser,
    boundary: str = "document",
    drop_tokens: frozenset[str] = frozenset(),
) -> TokenStream:
    """The normalised texts as one :class:`TokenStream` (one document per text; ``line`` boundary: every
    newline and ``<eos>`` also ends a segment); ``drop_tokens`` are removed before windowing."""
    if boundary == "line":
        units = [u for t in texts for u in t.replace(EOS, "\n").split("\n")]
        unit_doc = np.repeat(np.arange(len(texts)), [t.replace(EOS, "\n").count("\n") + 1 for t in texts])
    else:
        units, unit_doc = list(texts), np.arange(len(texts))
    types, ids, lengths = normalised_codes(units, norm)
    unit_of_tok = np.repeat(np.arange(len(units), dtype=np.int64), lengths)
    drop_ids = [i for i, t in enumerate(types) if t in drop_tokens or (boundary == "line" and t == EOS)]
    if drop_ids:
        dropped = np.zeros(len(types), bool)
        dropped[drop_ids] = True
        keep = ~dropped[ids]
        remap = np.cumsum(~dropped) - 1
        ids, unit_of_tok = remap[ids[keep]], unit_of_tok[keep]
        types = [t for i, t in enumerate(types) if not dropped[i]]
        # types that only occurred as dropped tokens disappear; first-occurrence order is kept
    unit_len = np.bincount(unit_of_tok, minlength=len(units)).astype(np.int64)
    nonempty = unit_len > 0
    unit_doc = np.asarray(unit_doc, np.int64)
    return TokenStream(
        types,
        ids.astype(np.int64),
        unit_len[nonempty],
        unit_doc[nonempty],
        np.bincount(unit_doc, weights=unit_len, minlength=len(texts)).astype(np.int64),
        boundary,
        frozenset(drop_tokens),
    )


def score_texts(
    texts: Sequence[str],
    norm: Normaliser,
    pairs: GenderPairs,
    configs: Sequence[CountConfig],
    options: ScoreOptions,
) -> dict[str, ContextScore]:
    """Counts and bias of ``texts`` per context (tokenised once per boundary/drop set)."""
    streams: dict[tuple[str, frozenset[str]], TokenStream] = {}
    out: dict[str, ContextScore] = {}
    for cfg in configs:
        cfg = cfg.resolved()
        key = (cfg.boundary, frozenset(cfg.drop_tokens or ()))
        if key not in streams:
            streams[key] = token_stream(texts, norm, *key)
        counts = count_cooccurrences(streams[key], pairs, cfg)
        out[cfg.context] = ContextScore(counts, bias_scores(counts, options))
    return out


@dataclass
class TextScore:
    """One scored text (generated, reference continuation, corpus): per-context scores and β."""

    label: str
    scores: dict[str, ContextScore]
    amplification: dict[str, AmplificationResult] = field(default_factory=dict)
    n_texts: int = 0

    def row(self, ctx: str) -> dict[str, Any]:
        """μ, σ (with intervals), β (t-interval, bootstrap interval), counts: one results row."""
        s = self.scores[ctx].bias.summary
        row: dict[str, Any] = {
            "text": self.label,
            "context": ctx,
            "mu": s["mu"],
            "mu_ci_low": s["mu_ci"][0],
            "mu_ci_high": s["mu_ci"][1],
            "sigma": s["sigma"],
            "sigma_ci_low": s["sigma_ci"][0],
            "sigma_ci_high": s["sigma_ci"][1],
            "n_tokens": self.scores[ctx].counts.n_tokens,
            "n_scored": s["n_scored"],
            "n_texts": self.n_texts,
        }
        amp = self.amplification.get(ctx)
        if amp is not None:
            row.update(
                beta=amp.beta,
                beta_ci_low=amp.ci[0],
                beta_ci_high=amp.ci[1],
                beta_boot_low=amp.bootstrap_ci[0],
                beta_boot_high=amp.bootstrap_ci[1],
                intercept=amp.intercept,
                r=amp.r,
                n_common=amp.n_common,
                outliers_removed=len(amp.removed),
            )
        return row


def amplify(
    label: str,
    scores: dict[str, ContextScore],
    corpus: dict[str, ContextScore],
    outliers: str | None,
    bootstrap: int,
    seed: int,
    n_texts: int = 0,
) -> TextScore:
    """β of ``scores`` on the corpus's per-word bias, per context."""
    amps = {
        ctx: amplification(
            corpus[ctx].bias.as_dict(), sc.bias.as_dict(), outliers=outliers, bootstrap=bootstrap, seed=seed
        )
        for ctx, sc in scores.items()
    }
    return TextScore(label, scores, amps, n_texts)


def scatter_points(
    corpus: ContextScore, generated: ContextScore, reference: ContextScore | None, limit: int = 1500
) -> list[dict[str, Any]]:
    """Per common word: corpus bias ``x``, generated bias ``y``, the reference continuation's ``y_ref``
    (None where unscored) and the word's frequency in the generated text; the ``limit`` most frequent."""
    gen = dict(zip(generated.bias.words, zip(generated.bias.bias.tolist(), generated.bias.freq.tolist())))
    ref = reference.bias.as_dict() if reference is not None else {}
    rows = [
        {"word": w, "x": x, "y": gen[w][0], "y_ref": ref.get(w), "freq": int(gen[w][1])}
        for w, x in zip(corpus.bias.words, corpus.bias.bias.tolist())
        if w in gen
    ]
    rows.sort(key=lambda r: -r["freq"])
    return rows[:limit]
