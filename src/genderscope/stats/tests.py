"""Two-sample t-tests (from data or from summary statistics) and the Holm correction."""

from __future__ import annotations

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


def t_test_from_stats(mean1: float, sd1: float, n1: int, mean2: float, sd2: float, n2: int, *,
                      equal_var: bool = True, alternative: str = "two-sided") -> TTestResult:
    """Pooled (``equal_var``) or Welch t-test from means, sample SDs (ddof 1) and sizes."""
    from scipy import stats as _st  # lazy: scipy.stats costs ~0.5 s of import time

    res = _st.ttest_ind_from_stats(mean1, sd1, n1, mean2, sd2, n2, equal_var=equal_var,
                                   alternative=_alt(alternative))
    if equal_var:
        df = float(n1 + n2 - 2)
    else:
        v1, v2 = sd1 ** 2 / n1, sd2 ** 2 / n2
        df = float((v1 + v2) ** 2 / (v1 ** 2 / (n1 - 1) + v2 ** 2 / (n2 - 1))) if (v1 + v2) > 0 else float("nan")
    return TTestResult(float(res.statistic), df, float(res.pvalue),
                       ("pooled" if equal_var else "welch") + f" t-test ({alternative})")


def welch_t_test(x: np.ndarray, y: np.ndarray, alternative: str = "two-sided") -> TTestResult:
    """Welch's unequal-variance t-test on two samples."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    return t_test_from_stats(x.mean(), x.std(ddof=1), x.size, y.mean(), y.std(ddof=1), y.size,
                             equal_var=False, alternative=alternative)


def pooled_t_test(x: np.ndarray, y: np.ndarray, alternative: str = "two-sided") -> TTestResult:
    """Student's pooled-variance t-test on two samples."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    return t_test_from_stats(x.mean(), x.std(ddof=1), x.size, y.mean(), y.std(ddof=1), y.size,
                             equal_var=True, alternative=alternative)


def holm(pvalues: np.ndarray | list[float]) -> np.ndarray:
    """Holm–Bonferroni adjusted p-values (NaN entries stay NaN and are not counted)."""
    p = np.asarray(pvalues, dtype=np.float64)
    out = np.full(p.shape, np.nan)
    ok = ~np.isnan(p)
    q = p[ok]
    m = q.size
    if m == 0:
        return out
    order = np.argsort(q, kind="stable")
    adj = np.maximum.accumulate((m - np.arange(m)) * q[order])
    res = np.empty(m)
    res[order] = np.minimum(adj, 1.0)
    out[ok] = res
    return out
