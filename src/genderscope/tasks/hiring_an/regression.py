"""GenderBench's bounded role regression, for the point estimate and every bootstrap resample at once.

GenderBench fits ``acceptance ≈ slope · score + intercept`` with ``scipy.optimize.lsq_linear`` on one row
per item of the (resampled) list, bounds slope ∈ [−1, 1], intercept ∈ [0, 1], and keeps the slope (NaN
for fewer than 3 rows).  ``lsq_linear`` returns the unconstrained least-squares solution when it lies
inside the bounds; with duplicated rows that is weighted least squares with the draw counts as weights,
which has a closed form over the count matrix (sums ``Σw, Σwx, Σwy, Σwx², Σwxy``).  Where that solution
is on, near or outside a bound (or the scores do not vary), GenderBench's own call is repeated on its
rows in its order: the resample's draws (``random.choices`` order), filtered to the subset, since
``lsq_linear``'s choice between its two paths can hang on the last bit of an unordered sum.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

#: GenderBench's bounds: slope in [-1, 1], intercept in [0, 1]
LOWER, UPPER = (-1.0, 0.0), (1.0, 1.0)
#: a closed-form solution closer than this to a bound is recomputed with lsq_linear
MARGIN = 1e-9
#: fewer rows than this: NaN (GenderBench's "small-scale" guard)
MIN_ROWS = 3

#: rows of resample b (a row of the count matrix) in GenderBench's order, or None for item order
DrawOrder = Callable[[int], np.ndarray | None]


def moments(x: np.ndarray, y: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """N x (5·S) columns ``[m, m·x, m·y, m·x², m·x·y]`` per subset mask (S x N) for one matrix product."""
    cols = [masks, masks * x, masks * y, masks * x * x, masks * x * y]
    return np.stack(cols, axis=1).reshape(-1, masks.shape[1]).T


def closed_form(sums: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(slope, intercept, safe) from B x S x 5 weighted sums; ``safe`` = well inside the bounds."""
    n, sx, sy, sxx, sxy = (sums[..., k] for k in range(5))
    den = n * sxx - sx * sx
    with np.errstate(invalid="ignore", divide="ignore"):
        slope = (n * sxy - sx * sy) / den
        intercept = (sy - slope * sx) / n
    varies = den > 1e-9 * np.maximum(n * sxx, 1e-300)
    inside = (
        (slope > LOWER[0] + MARGIN)
        & (slope < UPPER[0] - MARGIN)
        & (intercept > LOWER[1] + MARGIN)
        & (intercept < UPPER[1] - MARGIN)
    )
    return slope, intercept, varies & inside


def genderbench_slope(x: np.ndarray, y: np.ndarray) -> float:
    """GenderBench's call on explicit rows: ``lsq_linear([[x, 1] ...], y, bounds)``'s slope."""
    if len(x) < MIN_ROWS:
        return float("nan")
    A = np.column_stack([x, np.ones(len(x))])
    from scipy.optimize import lsq_linear  # lazy: ~1 s of imports a rerun from task memos never needs

    return float(lsq_linear(A, y, bounds=[list(LOWER), list(UPPER)]).x[0])


def bounded_slopes(
    C: np.ndarray, x: np.ndarray, y: np.ndarray, masks: np.ndarray, order: DrawOrder
) -> np.ndarray:
    """B x S slopes of GenderBench's regression of ``y`` on ``x`` over the items of each subset mask
    (S x N, bool) as drawn in each row of ``C`` (B x N counts; dropped items have weight 0)."""
    S = masks.shape[0]
    sums = (C @ moments(x, y, masks.astype(np.float64))).reshape(C.shape[0], S, 5)
    slope, _, safe = closed_form(sums)
    out = np.where(sums[..., 0] >= MIN_ROWS, slope, np.nan)
    redo = (sums[..., 0] >= MIN_ROWS) & ~safe
    for b, s in zip(*np.nonzero(redo)):
        rows = rows_of(C[b], masks[s], order(int(b)))
        out[b, s] = genderbench_slope(x[rows], y[rows])
    return out


def rows_of(counts: np.ndarray, mask: np.ndarray, drawn: np.ndarray | None) -> np.ndarray:
    """Item indices of one resample's rows within ``mask``: its draws in order when known (items of
    weight 0, i.e. dropped, left out), else each item repeated by its count in item order."""
    if drawn is None:
        return np.repeat(np.arange(len(counts)), (counts * mask).astype(np.int64))
    keep = mask & (counts > 0)
    return drawn[keep[drawn]]
