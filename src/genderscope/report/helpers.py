"""Pieces the task renderers build their report sections from: numbers, CI wording, metric point
plots, table lookup, and the generic section every task gets when it has no renderer of its own."""

from __future__ import annotations

import math
from typing import Any

from genderscope.core.metrics import MetricEntry
from genderscope.core.results_file import TaskResults
from genderscope.report import svg
from genderscope.report.views import Figure, Rendered, fmt_ci
from genderscope.core.textfmt import fmt


def num(x: Any) -> float | None:
    """``x`` as a finite float, else None."""
    try:
        f = float(x)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def pair(x: Any) -> tuple[float | None, float | None]:
    """An interval written as ``[lo, hi]`` or ``{ci_low|low, ci_high|high}`` -> (lo, hi)."""
    if isinstance(x, (list, tuple)) and len(x) == 2:
        return num(x[0]), num(x[1])
    if isinstance(x, dict):
        return num(x.get("ci_low", x.get("low"))), num(x.get("ci_high", x.get("high")))
    return None, None


def ci_word(m: MetricEntry | None, zero: float = 0.0) -> str:
    """Whether the metric's 95% CI includes ``zero``, in words."""
    lo, hi = (num(m.ci_low), num(m.ci_high)) if m else (None, None)
    if lo is None or hi is None:
        return "no confidence interval"
    if lo <= zero <= hi:
        return f"the 95% CI includes {fmt(zero)}, so no evidence of a difference at this sample size"
    return f"the 95% CI excludes {fmt(zero)}"


def point(label: str, m: MetricEntry, series: str = "") -> svg.Point:
    return svg.Point(label, m.value, m.ci_low, m.ci_high, series)


def metric_points(
    res: TaskResults, names: list[str], labels: dict[str, str] | None = None, series: str = ""
) -> list[svg.Point]:
    """One point (value and CI) per named metric the task has, labelled by ``labels`` or the name."""
    return [point((labels or {}).get(n, n), res.metrics[n], series) for n in names if n in res.metrics]


def find_table(
    res: TaskResults, needed: set[str], preferred: tuple[str, ...] = ()
) -> tuple[str, list[dict[str, Any]]]:
    """(key, rows) of the first ``preferred`` table, else of the first table whose rows have ``needed``."""
    tables = res.tables()
    for key in preferred:
        if key in tables:
            return key, tables[key]
    for key, rows in tables.items():
        if needed <= set(rows[0]):
            return key, rows
    return "", []


def render_generic(name: str, res: TaskResults, run: Any = None) -> Rendered:
    """Headline metrics as a point plot when they carry intervals; tables come from the page builder."""
    out = Rendered()
    names = res.headline_names()
    pts = [p for p in metric_points(res, names) if p.value is not None]
    if pts and any(p.lo is not None for p in pts):
        out.figures.append(
            Figure(
                f"{name}: headline metrics",
                svg.point_plot(pts, title=f"{name}: headline metrics with 95% CI", ref=0.0),
                "Dots: point estimates; whiskers: confidence intervals as written in results.json.",
            )
        )
    readings = [f"{n} = {fmt(res.metrics[n].value)} {fmt_ci(res.metrics[n])}".strip() for n in names[:2]]
    out.reading = "; ".join(readings) + ("." if readings else "No metrics in results.json.")
    return out


def point_figure(heading: str, pts: list[svg.Point], caption: str, **plot: Any) -> Figure:
    """A :class:`Figure` of one :func:`svg.point_plot` of ``pts`` (``plot``: its title, xlabel, domain,
    ref); shares plot on ``domain=SHARE``."""
    return Figure(heading, svg.point_plot(pts, **plot), caption)


#: the x domain of a plot of shares, accuracies or F1 scores
SHARE = (0.0, 1.0)
