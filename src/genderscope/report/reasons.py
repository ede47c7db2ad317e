"""Why a value is undefined or has no interval, in words (never an exception text)."""

from __future__ import annotations

from typing import Any

from genderscope.core.evidence import RESAMPLES_UNDEFINED as _RESAMPLES
from genderscope.core.evidence import looks_like_exception as looks_like_exception
from genderscope.core.results_file import TaskResults
from genderscope.core.textfmt import fmt


def _value(res: TaskResults, name: str) -> float | None:
    m = res.metrics.get(name)
    return None if m is None or m.value is None else float(m.value)


def _log_ratio_reason(res: TaskResults, metric: str) -> str | None:
    """GES-style log2 ratios: name the zero or negative part of the ratio."""
    pro, anti = _value(res, "acc_pro"), _value(res, "acc_anti")
    if pro is not None and anti is not None and metric == "ges":
        if pro == 0 and anti == 0:
            return "both accuracies are 0, so GES = log2(acc_pro / acc_anti) is undefined"
        if anti == 0:
            return "the anti-stereotypical accuracy is 0, so GES = log2(acc_pro / 0) is undefined"
        if pro == 0:
            return "the pro-stereotypical accuracy is 0, so GES = log2(0 / acc_anti) is undefined"
    fem, male = _value(res, "median_rel_female"), _value(res, "median_rel_male")
    if fem is not None and male is not None and metric == "ges":
        bad = [(w, v) for w, v in (("hendes", fem), ("hans", male)) if v <= 0]
        if bad:
            parts = " and ".join(f"{w} {fmt(v)}" for w, v in bad)
            which = (
                "both median relative perplexities are"
                if len(bad) == 2
                else "the median relative perplexity is"
            )
            return (
                f"{which} ≤ 0 ({parts}): the ungrammatical variant is not more surprising than the reflexive "
                "one, so GES, a log of their ratio, is undefined"
            )
    return None


def undefined_reason(res: TaskResults, metric: str) -> str:
    """One sentence (no final period) saying why ``metric`` has no value."""
    specific = _log_ratio_reason(res, metric)
    if specific:
        return specific
    for key in (f"{metric}_undefined_reason", "ges_undefined_reason" if metric.startswith("ges") else ""):
        text = res.extra.get(key) if key else None
        if isinstance(text, str) and text and not looks_like_exception(text):
            return text
    m = res.metrics.get(metric)
    if m is not None and m.no_ci:
        hit = _RESAMPLES.search(m.no_ci)
        if hit and hit.group(1) == hit.group(2):
            return f"{metric} is undefined for these answers (and in all {hit.group(2)} bootstrap resamples)"
    if m is None:
        return f"the run has no {metric}"
    if m.no_ci and "undefined" in m.no_ci and not looks_like_exception(m.no_ci):
        return m.no_ci.rstrip(".")  # the task's own words (co-occurrence: "β undefined: fewer than 3 ...")
    return f"{metric} is undefined for these answers (a ratio or log of a zero or negative quantity)"


def clean_text(x: Any) -> str:
    """A task-written note, or a neutral sentence when it is an exception text."""
    s = "" if x is None else str(x)
    return "could not be computed for these answers" if looks_like_exception(s) else s
