"""Ordinary least squares y = a + b·x with standard errors and confidence intervals."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class OLSResult:
    """Intercept a, slope b, their standard errors and (1-α) CIs, R², n."""

    intercept: float
    slope: float
    intercept_se: float
    slope_se: float
    intercept_ci: tuple[float, float]
    slope_ci: tuple[float, float]
    r2: float
    n: int


def ols(x: np.ndarray, y: np.ndarray, level: float = 0.95) -> OLSResult:
    """Fit y = a + b·x by least squares; CIs use the t distribution with n − 2 df."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    n = x.size
    if n < 2:
        raise ValueError("OLS needs at least two points")
    xm, ym = x.mean(), y.mean()
    sxx = float(((x - xm) ** 2).sum())
    if sxx == 0:
        raise ValueError("OLS needs at least two distinct x values")
    b = float(((x - xm) * (y - ym)).sum() / sxx)
    a = float(ym - b * xm)
    resid = y - (a + b * x)
    sse = float((resid**2).sum())
    sst = float(((y - ym) ** 2).sum())
    if n > 2:
        s2 = sse / (n - 2)
        se_b = float(np.sqrt(s2 / sxx))
        se_a = float(np.sqrt(s2 * (1.0 / n + xm**2 / sxx)))
        from scipy import stats as _st  # lazy: scipy.stats costs ~0.5 s of import time

        t = float(_st.t.ppf((1 + level) / 2, n - 2))
    else:
        se_a = se_b = t = float("nan")
    return OLSResult(
        a,
        b,
        se_a,
        se_b,
        (a - t * se_a, a + t * se_a),
        (b - t * se_b, b + t * se_b),
        1 - sse / sst if sst > 0 else float("nan"),
        n,
    )
