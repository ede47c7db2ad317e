"""A linear mixed model fitted once, for a benchmark's ``analytic`` metrics: statsmodels' ``MixedLM`` with
its defaults (REML), the coefficients with their own 95% Wald intervals, and what went wrong as data."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from genderscope.common.errors import UsageError


@dataclass
class Fit:
    """A fitted model: coefficient -> (estimate, 95% low, 95% high); or ``error`` when it failed.
    ``formula``, ``re_formula``, ``groups`` and ``how`` describe the model in :meth:`to_json`."""

    coefs: dict[str, tuple[float, float, float]] = field(default_factory=dict)
    converged: bool | None = None
    warnings: list[str] = field(default_factory=list)
    n_rows: int = 0
    n_groups: int = 0
    error: str | None = None
    formula: str = ""
    re_formula: str = ""
    groups: str = ""
    how: str = ""

    def to_json(self) -> dict[str, Any]:
        coefs = {k: {"value": v, "ci_low": lo, "ci_high": hi} for k, (v, lo, hi) in self.coefs.items()}
        return {
            "formula": self.formula,
            "re_formula": self.re_formula,
            "groups": self.groups,
            "fit": self.how,
            "n_rows": self.n_rows,
            "n_groups": self.n_groups,
            "converged": self.converged,
            "warnings": self.warnings,
            "error": self.error,
            "coefficients": coefs,
        }


def formula_api(who: str) -> Any:
    """``statsmodels.formula.api``, or a UsageError naming ``who`` needs it and how to install it."""
    try:
        import statsmodels.formula.api as smf
    except ImportError:
        why = "needs statsmodels (a genderscope dependency): pip install statsmodels"
        raise UsageError(f"{who} {why}") from None
    return smf


def fit_mixedlm(out: Fit, smf: Any, df: Any, seed: int | None = None) -> Fit:
    """``out`` filled from ``smf.mixedlm(out.formula, df, groups=out.groups, re_formula=out.re_formula)
    .fit()`` (numpy's global seed ``seed`` during the fit, restored after; warnings kept, each once; an
    exception becomes ``error``)."""
    state = np.random.get_state()
    if seed is not None:
        np.random.seed(seed)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model = smf.mixedlm(out.formula, data=df, groups=out.groups, re_formula=out.re_formula)
            result = model.fit()
    except Exception as exc:  # noqa: BLE001 - patsy/statsmodels raise many types
        out.error = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        return out
    finally:
        np.random.set_state(state)
    out.warnings = list(dict.fromkeys(str(w.message) for w in caught))
    out.converged = bool(getattr(result, "converged", False))
    ci = result.conf_int(alpha=0.05)
    for name in result.fe_params.index:
        out.coefs[name] = (float(result.params[name]), float(ci.loc[name, 0]), float(ci.loc[name, 1]))
    return out
