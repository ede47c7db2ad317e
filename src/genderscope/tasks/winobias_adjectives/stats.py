"""Accuracy, bias and the two statistics modes of spec §6.

Input: ``correct[c, s, l, t]`` (bool) = the reply for condition c, label s (0 pro, 1 anti),
line l and trial t is correct.  Accuracies are in percent of all N lines; bias = pro − anti
in percentage points.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from genderscope.stats.bootstrap import bootstrap_values
from genderscope.stats.intervals import intervals
from genderscope.stats.jackknife import jackknife_intervals, jackknife_weights
from genderscope.stats.tests import holm, t_test_from_stats


def round_tenths_half_up(numerator: int, denominator: int) -> int:
    """round(numerator / denominator, 1) with halves rounded up, as an integer number of tenths (exact)."""
    return (20 * numerator + denominator) // (2 * denominator) if denominator > 0 else 0


def replicate_accuracy_tenths(counts: np.ndarray, n: int) -> np.ndarray:
    """acc rounded to 0.1 (half up) in tenths of a percent: round(1000 · count / n) (exact integers)."""
    c = np.asarray(counts, dtype=np.int64)
    return (2000 * c + n) // (2 * n)


@dataclass
class ReplicateStats:
    """§6.2 for one condition: per-trial b (tenths), rounded mean m, unrounded SD s,
    one-sided pooled t-test."""

    b_tenths: list[int]
    m: float
    s: float
    diff: float | None = None
    t: float | None = None
    df: float | None = None
    p: float | None = None


def replicate_summary(pro_counts: np.ndarray, anti_counts: np.ndarray, n: int) -> ReplicateStats:
    """b(t) = acc_r(pro, t) − acc_r(anti, t); m = mean b rounded to 0.1 half up; s = SD (ddof 1) of b."""
    b = replicate_accuracy_tenths(pro_counts, n) - replicate_accuracy_tenths(anti_counts, n)
    T = b.size
    m_tenths = (2 * int(b.sum()) + T) // (2 * T)
    s = float(np.std(b / 10.0, ddof=1)) if T > 1 else math.nan
    return ReplicateStats([int(x) for x in b], m_tenths / 10.0, s)


def replicate_test(cond: ReplicateStats, base: ReplicateStats, trials: int) -> ReplicateStats:
    """One-sided pooled-variance t-test of m(c) vs m(baseline) in the observed direction (n = T each).

    diff = 0 -> p = 0.5; pooled SD 0 or T < 2 -> p = None.
    """
    diff = round(cond.m - base.m, 1)
    cond.diff = diff
    if trials < 2:
        return cond
    sp2 = ((trials - 1) * cond.s**2 + (trials - 1) * base.s**2) / (2 * trials - 2)
    cond.df = float(2 * trials - 2)
    if diff == 0:
        cond.t, cond.p = 0.0, 0.5
        return cond
    if not sp2 > 0:
        return cond
    res = t_test_from_stats(
        cond.m,
        cond.s,
        trials,
        base.m,
        base.s,
        trials,
        equal_var=True,
        alternative="greater" if diff > 0 else "less",
    )
    cond.t, cond.p = res.statistic, res.pvalue
    return cond


def welch_p(x: np.ndarray, y: np.ndarray) -> tuple[float | None, float | None, float | None]:
    """Two-sided Welch test of per-trial biases x vs y: (t, df, p); None if T < 2 or both SDs are 0."""
    if x.size < 2 or y.size < 2:
        return None, None, None
    sx, sy = float(np.std(x, ddof=1)), float(np.std(y, ddof=1))
    if sx == 0 and sy == 0:
        return None, None, None
    r = t_test_from_stats(float(x.mean()), sx, x.size, float(y.mean()), sy, y.size, equal_var=False)
    return r.statistic, r.df, r.pvalue


def holm_adjust(pvalues: list[float | None]) -> list[float | None]:
    """Holm over the given p-values (None ignored and kept None)."""
    arr = np.array([np.nan if p is None else p for p in pvalues], dtype=float)
    adj = holm(arr)
    return [None if np.isnan(a) else float(a) for a in adj]


def item_paired_bootstrap(
    d: np.ndarray,
    base: np.ndarray,
    n_resamples: int = 10_000,
    seed: int = 0,
    level: float = 0.95,
    chunk: int = 1000,
) -> np.ndarray:
    """Percentile CIs of mean_l[d(c, l) − d(base, l)] for every column c of ``d`` (N x K).

    One draw of N lines per replicate, shared by all conditions (``numpy`` generator,
    ``default_rng(seed)``, blocks of ``chunk`` replicates); returns a K x 2 array (low, high),
    ``percentile`` rule.
    """
    delta = np.asarray(d, dtype=np.float64) - np.asarray(base, dtype=np.float64)[:, None]
    return item_bootstrap(delta, n_resamples, seed, level, chunk)


def item_bootstrap(
    d: np.ndarray, n_resamples: int = 10_000, seed: int = 0, level: float = 0.95, chunk: int = 1000
) -> np.ndarray:
    """Percentile CIs of mean_l d(c, l) for every column c of ``d`` (N x K), e.g. the bias of each
    condition in percentage points (d = per-item acc(pro) − acc(anti), averaged over trials).

    Same draws as :func:`item_paired_bootstrap` for the same ``seed`` (N lines per replicate);
    returns a K x 2 array (low, high).
    """
    d = np.asarray(d, dtype=np.float64)
    n = d.shape[0]
    out = bootstrap_values(lambda C: C @ d / n, n, n_resamples, seed, rng="numpy", chunk=chunk)
    return intervals(out, "percentile", level)[:, :2]


def item_jackknife_t(d: np.ndarray, seed: int = 0, level: float = 0.95) -> np.ndarray:
    """Jackknife t-intervals of mean_l d(c, l) for every column c of ``d`` (N x K): K x 2 (low, high).

    Lines are dealt into G = min(N, 200) groups (:func:`~genderscope.stats.jackknife.jackknife_weights`,
    ``seed``); with G = N (N <= 200) this is Student's interval mean ± t_{N−1}·s/√N exactly.  The
    interval of the default statistics (docs/decisions.md, "Calibrated intervals"): the percentile
    bootstrap of a mean of 30 lines undercovers (its spread is s·√((N−1)/N) and its quantile z, not t).
    """
    d = np.asarray(d, dtype=np.float64)
    n = d.shape[0]
    if n < 2:
        return np.full((d.shape[1], 2), np.nan)
    w = jackknife_weights(n, seed)
    replicates = (w @ d) / w.sum(axis=1, keepdims=True)
    return jackknife_intervals(d.mean(axis=0), replicates, level)[:, :2]
