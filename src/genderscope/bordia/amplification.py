"""Bias amplification β (spec §5): OLS with intercept of generated-text bias (y) on training bias (x)
over the words scored in both, bias_gen(w) = β · bias_train(w) + c.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import asdict, dataclass, field
from typing import Any, Mapping

import numpy as np

from genderscope.common.errors import UsageError
from genderscope.stats.bootstrap import resample_indices
from genderscope.stats.intervals import percent_interval
from genderscope.stats.regression import ols


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
        """The fields as JSON values (intervals as lists), ``removed`` under the key ``removed_outliers``."""
        out = asdict(self)
        out["ci"], out["bootstrap_ci"] = list(self.ci), list(self.bootstrap_ci)
        out["removed_outliers"] = out.pop("removed")
        return out


def _fit(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float, float, tuple[float, float]]:
    res = ols(x, y)
    r = float(np.corrcoef(x, y)[0, 1]) if np.std(y) > 0 else math.nan
    return res.slope, res.intercept, r, res.slope_se, res.slope_ci


def _slope(xs: np.ndarray, ys: np.ndarray) -> float | None:
    """OLS slope of one resample; None when its x values have zero variance."""
    sxx = float(((xs - xs.mean()) ** 2).sum())
    return float(((xs - xs.mean()) * (ys - ys.mean())).sum() / sxx) if sxx > 0 else None


def bootstrap_beta(
    x: np.ndarray, y: np.ndarray, n_resamples: int = 1000, seed: int = 0
) -> tuple[float, float]:
    """95 % percentile interval (``numpy.percentile`` at 2.5 and 97.5) of β over resampled word pairs.

    ``numpy`` generator (``default_rng(seed)``); resamples whose x values are all equal are skipped;
    NaN when none is left.
    """
    betas: list[float] = []
    for idx in resample_indices(x.size, n_resamples, seed, rng="numpy"):
        betas += [b for b in (_slope(x[i], y[i]) for i in idx) if b is not None]
    lo, hi, _ = percent_interval(np.array(betas), 2.5, 97.5)
    return lo, hi


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
    boot = bootstrap_beta(x, y, bootstrap, seed) if bootstrap > 0 else (math.nan, math.nan)
    return AmplificationResult(beta, c, n, r, se, ci, boot, removed)
