"""Two-sample t-tests from summary statistics; Holm and Benjamini–Hochberg adjusted p-values."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class TTestResult:
    """t statistic, degrees of freedom, p-value and the test used."""

    statistic: float
    df: float
    pvalue: float
    test: str


def _alt(alternative: str) -> str:
    if alternative not in {"two-sided", "greater", "less"}:
        raise ValueError("alternative must be two-sided, greater or less")
    return alternative


def t_test_from_stats(
    mean1: float,
    sd1: float,
    n1: int,
    mean2: float,
    sd2: float,
    n2: int,
    *,
    equal_var: bool = True,
    alternative: str = "two-sided",
) -> TTestResult:
    """Pooled (``equal_var``) or Welch t-test from means, sample SDs (ddof 1) and sizes.

    Same float operations as ``scipy.stats.ttest_ind_from_stats`` (t = (mean1 − mean2) / SE, p from
    ``scipy.special.stdtr``), without importing ``scipy.stats`` (~0.5–1 s of start-up).
    """
    from scipy.special import stdtr

    alternative = _alt(alternative)
    f = np.asarray  # 0-d float64 arrays: the same numpy code paths as scipy
    v1, v2 = f(sd1, dtype=np.float64) ** 2, f(sd2, dtype=np.float64) ** 2
    with np.errstate(divide="ignore", invalid="ignore"):
        if equal_var:
            v1, v2 = (f(0.0) if n1 == 1 else v1), (f(0.0) if n2 == 1 else v2)
            dft = f(n1 + n2 - 2.0)
            denom = np.sqrt(((n1 - 1) * v1 + (n2 - 1) * v2) / dft * (1.0 / n1 + 1.0 / n2))
            df = float(n1 + n2 - 2)
        else:
            vn1, vn2 = v1 / n1, v2 / n2
            dft = (vn1 + vn2) ** 2 / (vn1**2 / (n1 - 1) + vn2**2 / (n2 - 1))
            df = float(dft) if (vn1 + vn2) > 0 else float("nan")
            dft = f(1.0) if np.isnan(dft) else dft
            denom = np.sqrt(vn1 + vn2)
        t = np.divide(f(mean1, dtype=np.float64) - f(mean2, dtype=np.float64), denom)
    if alternative == "less":
        p = stdtr(dft, t)
    elif alternative == "greater":
        p = stdtr(dft, -t)
    else:
        p = 2 * stdtr(dft, -np.abs(t))
    test = ("pooled" if equal_var else "welch") + f" t-test ({alternative})"
    return TTestResult(float(t), df, float(p), test)


def _step(pvalues: np.ndarray | list[float], step: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """Adjusted p-values by a step procedure: ``step`` maps the ascending non-NaN p-values to their
    adjusted values (capped at 1 here); NaN entries stay NaN and are not counted."""
    p = np.asarray(pvalues, dtype=np.float64)
    out = np.full(p.shape, np.nan)
    ok = ~np.isnan(p)
    q = p[ok]
    if q.size == 0:
        return out
    order = np.argsort(q, kind="stable")
    res = np.empty(q.size)
    res[order] = np.minimum(step(q[order]), 1.0)
    out[ok] = res
    return out


def _holm_step(q: np.ndarray) -> np.ndarray:
    m = q.size
    return np.maximum.accumulate((m - np.arange(m)) * q)


def _bh_step(q: np.ndarray) -> np.ndarray:
    m = q.size
    return np.minimum.accumulate((q * m / np.arange(1, m + 1))[::-1])[::-1]


def holm(pvalues: np.ndarray | list[float]) -> np.ndarray:
    """Holm–Bonferroni adjusted p-values (NaN entries stay NaN and are not counted)."""
    return _step(pvalues, _holm_step)


def benjamini_hochberg(pvalues: np.ndarray | list[float]) -> np.ndarray:
    """Benjamini–Hochberg adjusted p-values (false discovery rate; NaN entries stay NaN, not counted)."""
    return _step(pvalues, _bh_step)


#: multiple-testing corrections by name (``none`` leaves the p-values as they are)
CORRECTIONS = ("holm", "bh", "none")


def adjust(pvalues: np.ndarray | list[float], correction: str) -> np.ndarray:
    """Adjusted p-values by ``correction`` (one of :data:`CORRECTIONS`)."""
    if correction == "holm":
        return holm(pvalues)
    if correction == "bh":
        return benjamini_hochberg(pvalues)
    if correction == "none":
        return np.asarray(pvalues, dtype=np.float64).copy()
    raise ValueError(f"unknown correction {correction!r} ({', '.join(CORRECTIONS)})")
