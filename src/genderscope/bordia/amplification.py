"""Bias amplification β (spec §5): OLS with intercept of generated-text bias (y) on training bias (x)
over the words scored in both, bias_gen(w) = β · bias_train(w) + c.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from genderscope.core.errors import UsageError
from genderscope.stats import ols


@dataclass
class AmplificationResult:
    """β, intercept c, n_common, Pearson r, se(β), 95 % t-interval, bootstrap interval, removed outliers."""

    beta: float
    intercept: float
    n_common: int
    r: float
    se: float
    ci: tuple[float, float]
    bootstrap_ci: tuple[float, float] = (math.nan, math.nan)
    removed: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "beta": self.beta,
            "intercept": self.intercept,
            "n_common": self.n_common,
            "r": self.r,
            "se": self.se,
            "ci": list(self.ci),
            "bootstrap_ci": list(self.bootstrap_ci),
            "removed_outliers": self.removed,
        }


def _fit(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float, float, tuple[float, float]]:
    res = ols(x, y)
    r = float(np.corrcoef(x, y)[0, 1]) if np.std(y) > 0 else math.nan
    return res.slope, res.intercept, r, res.slope_se, res.slope_ci


def _nan_result(n: int, why: str) -> AmplificationResult:
    warnings.warn(f"β is undefined: {why}", stacklevel=3)
    return AmplificationResult(math.nan, math.nan, n, math.nan, math.nan, (math.nan, math.nan))


def amplification(
    train: Mapping[str, float],
    generated: Mapping[str, float],
    outliers: str | None = None,
    z: float = 3.0,
    bootstrap: int = 1000,
    seed: int = 0,
) -> AmplificationResult:
    """Regress ``generated`` bias on ``train`` bias over the common words (word -> bias mappings)."""
    if outliers not in (None, "none", "residual"):
        raise UsageError(f"outliers must be None or 'residual', got {outliers!r}")
    words = [w for w in train if w in generated]
    x = np.array([train[w] for w in words], dtype=np.float64)
    y = np.array([generated[w] for w in words], dtype=np.float64)
    n = len(words)
    if n < 3:
        return _nan_result(n, f"only {n} words are scored in both corpora (need 3)")
    if np.ptp(x) == 0:
        return _nan_result(n, "the training biases of the common words have zero variance")
    beta, c, r, se, ci = _fit(x, y)
    removed: list[str] = []
    if outliers == "residual":
        resid = y - (c + beta * x)
        sd = float(np.std(resid, ddof=1))
        keep = np.abs(resid) <= z * sd
        if not keep.all():
            removed = [w for w, k in zip(words, keep) if not k]
            x, y = x[keep], y[keep]
            n = int(keep.sum())
            if n < 3 or np.ptp(x) == 0:
                return _nan_result(n, "too few points after removing outliers")
            beta, c, r, se, ci = _fit(x, y)
    boot = (math.nan, math.nan)
    if bootstrap > 0:
        rng = np.random.default_rng(seed)
        betas = []
        for _ in range(bootstrap):
            i = rng.integers(0, n, size=n)
            xs, ys = x[i], y[i]
            sxx = float(((xs - xs.mean()) ** 2).sum())
            if sxx > 0:
                betas.append(float(((xs - xs.mean()) * (ys - ys.mean())).sum() / sxx))
        if betas:
            lo, hi = np.percentile(betas, [2.5, 97.5])
            boot = (float(lo), float(hi))
    return AmplificationResult(beta, c, n, r, se, ci, boot, removed)
