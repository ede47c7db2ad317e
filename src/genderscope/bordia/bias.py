"""Per-word bias, μ and σ from co-occurrence counts (spec §4–5).

bias(w) = ln( P(w|F) / P(w|M) ) = ln(c_F(w)/c_M(w)) + ln(Z_M/Z_F) over the scored words
S = {w ∈ E : c_F(w) > 0 and c_M(w) > 0}; positive = female-leaning. μ = mean |bias| over S,
σ = population standard deviation (ddof 0) of the signed bias over S.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from genderscope.bordia.cooccurrence import Counts, atomic_write_text
from genderscope.common.errors import UsageError
from genderscope.stats.bootstrap import bootstrap_values, default_chunk
from genderscope.stats.intervals import interval


@dataclass(frozen=True)
class ScoreOptions:
    """Which words are scored and how (spec §4, §12). ``bootstrap`` = resamples for μ/σ intervals
    (0 = off)."""

    stopwords: frozenset[str] = frozenset()
    extra_exclude: frozenset[str] = frozenset()
    min_count: int = 1
    drop_non_alpha: bool = False
    normalise_over: str = "eligible"
    paper_formula_shift: bool = False
    smoothing: float = 0.0
    bootstrap: int = 1000
    seed: int = 0

    def describe(self) -> dict[str, Any]:
        return {
            "n_stopwords": len(self.stopwords),
            "extra_exclude": sorted(self.extra_exclude),
            "min_count": self.min_count,
            "drop_non_alpha": self.drop_non_alpha,
            "normalise_over": self.normalise_over,
            "paper_formula_shift": self.paper_formula_shift,
            "smoothing": self.smoothing,
            "bootstrap": self.bootstrap,
            "bootstrap_seed": self.seed,
        }


@dataclass
class BiasResult:
    """Scored words sorted by bias (ascending) with their counts, probabilities and bias; plus the summary."""

    words: list[str]
    freq: np.ndarray
    c_male: np.ndarray
    c_female: np.ndarray
    p_male: np.ndarray
    p_female: np.ndarray
    bias: np.ndarray
    summary: dict[str, Any] = field(default_factory=dict)

    @property
    def mu(self) -> float:
        return float(self.summary["mu"])

    @property
    def sigma(self) -> float:
        return float(self.summary["sigma"])

    def as_dict(self) -> dict[str, float]:
        """word -> bias."""
        return dict(zip(self.words, self.bias.tolist()))

    def write_tsv(self, path: Path) -> None:
        lines = ["word\tfreq\tmale\tfemale\tp_male\tp_female\tbias"]
        for row in zip(
            self.words,
            self.freq.tolist(),
            self.c_male.tolist(),
            self.c_female.tolist(),
            self.p_male.tolist(),
            self.p_female.tolist(),
            self.bias.tolist(),
        ):
            w, n, m, f, pm, pf, b = row
            lines.append(f"{w}\t{n}\t{m!r}\t{f!r}\t{pm!r}\t{pf!r}\t{b!r}")
        atomic_write_text(path, "\n".join(lines) + "\n")


def _has_letter(word: str) -> bool:
    return any(ch.isalpha() for ch in word)


def mu_sigma(bias: np.ndarray) -> tuple[float, float]:
    """(mean |bias|, population std of the signed bias); NaN for an empty array."""
    if bias.size == 0:
        return math.nan, math.nan
    return float(np.mean(np.abs(bias))), float(np.std(bias))


def bootstrap_mu_sigma(
    bias: np.ndarray, n_resamples: int = 1000, seed: int = 0, level: float = 0.95
) -> dict[str, tuple[float, float]]:
    """Percentile (``percentile-pct``) bootstrap over scored words for μ and σ.

    ``numpy`` generator (``default_rng(seed)``), blocks of up to 4·10⁶ drawn words; NaN when fewer than
    2 words are scored or ``n_resamples`` is 0.
    """
    nan = (math.nan, math.nan)
    if bias.size < 2 or n_resamples <= 0:
        return {"mu": nan, "sigma": nan}

    def stat(idx: np.ndarray) -> np.ndarray:
        sample = bias[idx]
        return np.column_stack([np.abs(sample).mean(axis=1), sample.std(axis=1)])

    chunk = default_chunk(bias.size, n_resamples, 4e6)
    vals = bootstrap_values(stat, bias.size, n_resamples, seed, rng="numpy", chunk=chunk, on="indices")
    mu_lo, mu_hi, _ = interval(vals[:, 0], "percentile-pct", level)
    sd_lo, sd_hi, _ = interval(vals[:, 1], "percentile-pct", level)
    return {"mu": (mu_lo, mu_hi), "sigma": (sd_lo, sd_hi)}


def bias_scores(counts: Counts, options: ScoreOptions | None = None) -> BiasResult:
    """Score every eligible word with both counts > 0 (or > 0 in total with smoothing)."""
    opt = options or ScoreOptions()
    if opt.normalise_over not in ("eligible", "scored", "all"):
        raise UsageError(f"normalise_over must be eligible, scored or all, got {opt.normalise_over!r}")
    if opt.smoothing < 0:
        raise UsageError(f"smoothing must be ≥ 0, got {opt.smoothing}")
    types = counts.types
    excluded = counts.pairs.gendered | opt.stopwords | opt.extra_exclude
    eligible = np.fromiter(
        (t not in excluded and (not opt.drop_non_alpha or _has_letter(t)) for t in types),
        dtype=bool,
        count=len(types),
    )
    eligible &= counts.freq >= opt.min_count
    cm = counts.c_male.astype(np.float64)
    cf = counts.c_female.astype(np.float64)
    if opt.smoothing > 0:
        cm = np.where(eligible, cm + opt.smoothing, cm)
        cf = np.where(eligible, cf + opt.smoothing, cf)
        scored = eligible & ((counts.c_male + counts.c_female) > 0)
    else:
        scored = eligible & (cm > 0) & (cf > 0)
    norm_mask = {"eligible": eligible, "scored": scored, "all": np.ones(len(types), bool)}[opt.normalise_over]
    z_m = float(cm[norm_mask].sum())
    z_f = float(cf[norm_mask].sum())
    raw_m = counts.c_male
    raw_f = counts.c_female
    idx = np.flatnonzero(scored)
    with np.errstate(divide="ignore", invalid="ignore"):
        p_m = cm[idx] / z_m
        p_f = cf[idx] / z_f
        bias = np.log(cf[idx] / cm[idx]) + math.log(z_m / z_f) if idx.size else np.zeros(0)
    if opt.paper_formula_shift and idx.size:
        bias = bias + math.log(counts.n_male / counts.n_female)
    order = np.argsort(bias, kind="stable")
    idx, p_m, p_f, bias = idx[order], p_m[order], p_f[order], bias[order]
    if idx.size == 0:
        warnings.warn("no word co-occurs with both male and female words: μ and σ are NaN", stacklevel=2)
    mu, sigma = mu_sigma(bias)
    ci = bootstrap_mu_sigma(bias, opt.bootstrap, opt.seed)
    e_m, e_f = raw_m[eligible], raw_f[eligible]
    summary = {
        "mu": mu,
        "sigma": sigma,
        "mu_ci": ci["mu"],
        "sigma_ci": ci["sigma"],
        "n_eligible": int(eligible.sum()),
        "n_scored": int(idx.size),
        "n_only_male": int(((e_m > 0) & (e_f == 0)).sum()),
        "n_only_female": int(((e_m == 0) & (e_f > 0)).sum()),
        "n_no_gender": int(((e_m == 0) & (e_f == 0)).sum()),
        "n_dropped": int(eligible.sum() - idx.size),
        "Z_male": z_m,
        "Z_female": z_f,
        "n_male_tokens": counts.n_male,
        "n_female_tokens": counts.n_female,
        **opt.describe(),
    }
    return BiasResult(
        [types[i] for i in idx], counts.freq[idx], raw_m[idx], raw_f[idx], p_m, p_f, bias, summary
    )


def bootstrap_why_not(summary: Mapping[str, Any]) -> str:
    """Why a bias summary's μ/σ have no bootstrap interval (its ``bootstrap`` and ``n_scored``)."""
    if summary.get("bootstrap", 0) <= 0:
        return "bootstrap off (bootstrap = 0)"
    return f"fewer than 2 scored words ({summary['n_scored']})"
