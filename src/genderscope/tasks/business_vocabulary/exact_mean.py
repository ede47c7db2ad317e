"""Row-wise means equal to Python's ``statistics.mean`` (which sums exactly, as fractions, and rounds the
exact mean once) for B rows at a time.

The sum is carried as a double-double (error-free ``two_sum`` steps: the pair ``hi + lo`` holds the sum to
about 2^-106 relative), the quotient ``q = hi / n`` is corrected by the exactly computed residual
``hi + lo − q·n`` (Dekker's ``two_prod``), so the result is the correctly rounded mean except within
about 2^-100 of a rounding tie; plain ``sum / n`` can be a few units in the last place off.
"""

from __future__ import annotations

import numpy as np

_SPLITTER = 134217729.0  # 2^27 + 1 (Dekker's split of a double into two 26-bit halves)


def two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(s, e)`` with ``s = fl(a + b)`` and ``a + b = s + e`` exactly (Knuth)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _split(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    c = _SPLITTER * a
    hi = c - (c - a)
    return hi, a - hi


def two_prod(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(p, e)`` with ``p = fl(a·b)`` and ``a·b = p + e`` exactly (Dekker)."""
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def exact_mean(values: np.ndarray) -> np.ndarray:
    """The mean of each row of ``values`` (B x n, n ≥ 1) as ``statistics.mean`` gives it (NaN if any is)."""
    x = np.atleast_2d(np.asarray(values, dtype=np.float64))
    n = x.shape[1]
    hi, lo = x[:, 0].copy(), np.zeros(x.shape[0])
    for j in range(1, n):
        hi, err = two_sum(hi, x[:, j])
        lo = lo + err
    hi, lo = two_sum(hi, lo)
    count = np.full_like(hi, float(n))
    with np.errstate(invalid="ignore"):
        q = hi / count
        p, pe = two_prod(q, count)
        residual = ((hi - p) - pe) + lo
        return q + residual / count
