"""Statistics per level of an item label with a fixed set of levels (e.g. stereotype ids 1–16), over a weight
matrix C (rows × items; a row of ones = the point value), for metrics defined on every level whether or not
a subset of items has it.

:func:`one_hot` gives the N × L indicator matrix; :func:`level_means` the weighted mean of an item score
within each level, items with a NaN score left out (NaN where a level has no weight); :func:`ranks` the
ascending rank of each level's value (ties broken by level order).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np


def one_hot(labels: Sequence[Any], levels: Sequence[Any]) -> np.ndarray:
    """N × L: 1 where item j's label is level l."""
    index = {v: k for k, v in enumerate(levels)}
    out = np.zeros((len(labels), len(levels)))
    out[np.arange(len(labels)), [index[v] for v in labels]] = 1.0
    return out


def level_means(C: np.ndarray, x: np.ndarray, L: np.ndarray) -> np.ndarray:
    """B × L weighted mean of ``x`` over each level's items (``L``: :func:`one_hot`), NaN scores left out:
    ``(C @ (L · x)) / (C @ (L · [x not NaN]))``; NaN where a level has no weight."""
    x = np.asarray(x, dtype=np.float64)
    valid = ~np.isnan(x)
    num = C @ (L * np.where(valid, x, 0.0)[:, None])
    den = C @ (L * valid[:, None])
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def ranks(values: np.ndarray) -> np.ndarray:
    """Ascending ranks along the last axis (1 = smallest); exact ties broken by position; NaN stays NaN."""
    r = np.asarray(values, dtype=np.float64)
    a, b, ids = r[..., :, None], r[..., None, :], np.arange(r.shape[-1])
    smaller = (b < a) | ((b == a) & (ids[None, :] < ids[:, None]))
    return np.where(np.isnan(r), np.nan, 1.0 + smaller.sum(axis=-1))
