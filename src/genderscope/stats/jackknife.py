"""Delete-a-group jackknife and the intervals and tests built on it (the default interval of the chat
probes, docs/decisions.md "Calibrated intervals").

The N items are dealt into G = min(N, :data:`MAX_GROUPS`) groups (item j goes to group
``perm[j] mod G``, ``perm`` a permutation from ``numpy.random.default_rng(seed)``; G = N: one item per
group, the ordinary delete-one jackknife).  Replicate g is the statistic on every item but group g (a row
of a weight matrix: 1 for kept items, 0 for dropped ones), so a task that computes its metrics from item
weights (bootstrap count matrices) computes its jackknife replicates with the same function.

The standard error is ``sqrt((G − 1)/G · Σ_g (θ_(g) − θ̄)²)`` and the interval is
``θ̂ ± t_{G−1, (1 + level)/2} · se`` (Tukey's jackknife t-interval); the matching two-sided p-value of
H0: θ = θ0 is ``2 · T_{G−1}(−|θ̂ − θ0| / se)``, so θ0 lies outside the interval exactly when p < 1 − level.
"""

from __future__ import annotations

import math

import numpy as np

#: at most this many jackknife groups (replicates)
MAX_GROUPS = 200
#: the interval method name written in results.json
JACKKNIFE_T = "jackknife-t"


def n_groups(n: int) -> int:
    """G for N items."""
    return max(0, min(int(n), MAX_GROUPS))


def jackknife_weights(n: int, seed: int = 0, groups: int | None = None) -> np.ndarray:
    """G x N item weights: row g is 0 for the items of group g, 1 for the others."""
    g = n_groups(n) if groups is None else int(groups)
    if g >= n:
        return 1.0 - np.eye(n)
    group = np.random.default_rng(seed).permutation(n) % g
    return (group[None, :] != np.arange(g)[:, None]).astype(np.float64)


def jackknife_se(replicates: np.ndarray) -> np.ndarray:
    """Per column of a G x M matrix of replicates: the jackknife standard error (NaN when a replicate is
    NaN or G < 2)."""
    r = np.asarray(replicates, dtype=np.float64)
    if r.ndim == 1:
        r = r[:, None]
    g = r.shape[0]
    if g < 2:
        return np.full(r.shape[1], np.nan)
    dev = r - r.mean(axis=0, keepdims=True)
    return np.sqrt((g - 1) / g * (dev**2).sum(axis=0))


def t_quantile(level: float, df: int) -> float:
    """The (1 + level)/2 quantile of Student's t with ``df`` degrees of freedom."""
    from scipy.special import stdtrit  # = scipy.stats.t.ppf, without importing scipy.stats

    return float(stdtrit(df, (1 + level) / 2))


def jackknife_intervals(
    point: np.ndarray, replicates: np.ndarray, level: float = 0.95, df: np.ndarray | None = None
) -> np.ndarray:
    """M x 3 (low, high, undefined replicates) of the jackknife t-interval of each column; NaN bounds
    where the point value or a replicate is NaN.  A zero standard error gives ``[θ̂, θ̂]``.

    ``df``: per column, the degrees of freedom of the t quantile (default and upper limit G − 1), e.g.
    min(n_a, n_b) − 1 for a contrast of two groups of items (:func:`contrast_df`)."""
    p = np.asarray(point, dtype=np.float64).reshape(-1)
    r = np.asarray(replicates, dtype=np.float64).reshape(-1, p.size)
    g = r.shape[0]
    se = jackknife_se(r)
    dof = np.full(p.size, g - 1.0) if df is None else np.minimum(np.asarray(df, dtype=np.float64), g - 1.0)
    half = t_quantiles(level, dof) * se if g >= 2 else np.full(p.size, np.nan)
    # replicates equal up to rounding: no spread (sums in another order differ in the last bits); but
    # replicates that all agree with each other and not with the point value (a correlation over two
    # points is ±1 whatever the data) say nothing: no interval
    scale = np.maximum(1.0, np.abs(p))
    flat = se <= 1e-12 * scale
    seen = (~np.isnan(r)).sum(axis=0)
    mean = np.nansum(r, axis=0) / np.maximum(seen, 1)  # NaN replicates left out, no warning
    off = (seen > 0) & (np.abs(mean - p) > 1e-9 * scale)
    half = np.where(flat & off, np.nan, np.where(flat, 0.0, half))
    nan = np.isnan(r).sum(axis=0).astype(np.float64)
    bad = np.isnan(p) | (nan > 0) | np.isnan(half)
    lo = np.where(bad, np.nan, p - half)
    hi = np.where(bad, np.nan, p + half)
    return np.column_stack([lo, hi, nan])


def t_quantiles(level: float, df: np.ndarray) -> np.ndarray:
    """:func:`t_quantile` for each entry of ``df`` (NaN where df < 1)."""
    from scipy.special import stdtrit

    d = np.asarray(df, dtype=np.float64)
    return np.where(d >= 1, stdtrit(np.maximum(d, 1.0), (1 + level) / 2), np.nan)


def contrast_df(in_a: np.ndarray) -> float:
    """Degrees of freedom of a contrast between two groups of items (``in_a``: N bools, True = group
    a): min(n_a, n_b) − 1, Welch's conservative choice.  The jackknife standard error of a difference
    rests on both groups, the smaller one limits how well it is known (docs/decisions.md,
    "Calibrated intervals")."""
    a = np.asarray(in_a, dtype=bool)
    return float(min(int(a.sum()), int((~a).sum())) - 1)


def jackknife_pvalue(point: float, se: float, neutral: float, df: int) -> float:
    """Two-sided p-value of H0: θ = ``neutral`` from the jackknife t statistic (``df`` = G − 1)."""
    from scipy.special import stdtr

    if not all(math.isfinite(x) for x in (point, se, neutral)):
        return math.nan
    if se == 0.0:
        return 1.0 if point == neutral else 0.0
    return float(2 * stdtr(df, -abs(point - neutral) / se))
