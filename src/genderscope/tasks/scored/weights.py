"""Vectorised statistics over a weight matrix C (resamples × items; a row of ones = the point value).

``C[b, j]`` = how often item j was drawn in resample b, so a mean over items is (C @ x) / (C @ 1): every
function here returns one value per row of C.  Items excluded by ``mask`` get weight 0; a row whose
weights sum to 0 gives NaN.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np


def _masked(C: np.ndarray, mask: np.ndarray | None) -> np.ndarray:
    return C if mask is None else C * np.asarray(mask, dtype=np.float64)[None, :]


def wsum(C: np.ndarray, x: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    """Σ_j C[b, j]·x_j over the items in ``mask``."""
    return _masked(C, mask) @ np.asarray(x, dtype=np.float64)


def wmean(C: np.ndarray, x: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    """Weighted mean of ``x`` over the items in ``mask`` (NaN where no item has weight)."""
    W = _masked(C, mask)
    den = W.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (W @ np.asarray(x, dtype=np.float64)) / den


def wshare(C: np.ndarray, flag: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    """Share of the items in ``mask`` whose ``flag`` is true (a weighted mean of 0/1)."""
    return wmean(C, np.asarray(flag, dtype=np.float64), mask)


def wshare_by(
    C: np.ndarray, flag: np.ndarray, labels: np.ndarray, levels: Sequence[Any]
) -> dict[Any, np.ndarray]:
    """:func:`wshare` of ``flag`` within each level of ``labels`` (level -> one value per row of C)."""
    return {k: wshare(C, flag, labels == k) for k in levels}
