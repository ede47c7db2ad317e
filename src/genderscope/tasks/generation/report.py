"""The report section of a generation benchmark: the gaps (or paired differences) with their intervals,
each group's values, the scorers and their licences, the judge, and (counterfactual) the largest
differences side by side and every swap made."""

from __future__ import annotations

from typing import Any

from genderscope.core.results_file import TaskResults
from genderscope.report.helpers import metric_points, point_figure
from genderscope.report.views import Rendered, TableView, fmt_metric
from genderscope.core.textfmt import fmt

#: rows of the swap and difference tables shown (the export has all)
MAX_ROWS = 200
NON_COMMERCIAL = "NC"


def contrast_names(res: TaskResults) -> list[str]:
    """The gap / difference / flip metrics, headline first."""
    head = [n for n in res.headline_names() if n in res.metrics]
    rest = [n for n in res.metrics if n.split(".", 1)[0] in ("gap", "diff", "flip") and n not in head]
    return head + rest


def licence_line(scorers: list[dict[str, Any]]) -> str:
    """The licences of the word lists and models the scorers use, non-commercial ones first."""
    items = sorted(scorers, key=lambda s: NON_COMMERCIAL not in str(s.get("licence", "")))
    return "; ".join(f"{s.get('name')}: {s.get('licence')}" for s in items)


def level_table(res: TaskResults, scopes: list[str]) -> TableView:
    """One row per scorer metric, one column per group (or version): value [95% CI]."""
    metrics = list(dict.fromkeys(n.split(".", 1)[1] for n in res.metrics if n.split(".", 1)[0] in scopes))
    rows = [[m] + [fmt_metric(res.metrics.get(f"{s}.{m}")) for s in scopes] for m in metrics]
    return TableView("Per group: value [95% CI]", ["metric", *scopes], rows)


def render_generation(name: str, res: TaskResults, run: Any, scopes: list[str], contrast: str) -> Rendered:
    """The section: reading, point plot of the contrasts, per-group table, counts, scorers, judge."""
    out = Rendered()
    extra = res.extra
    names = contrast_names(res)
    scorers = extra.get("scorers") or []
    lines = [f"{n} = {fmt_metric(res.metrics[n])}" for n in names[:4]]
    out.reading = (
        f"{contrast}. "
        + ("; ".join(lines) + ". " if lines else "")
        + f"Scorers and licences: {licence_line(scorers)}."
    )
    pts = [p for p in metric_points(res, names[:20]) if p.value is not None]
    if pts:
        out.figures.append(
            point_figure(
                f"{name}: gaps with 95% CI",
                pts,
                f"{contrast}; whiskers: 95% CI.",
                title=f"{name}: {contrast}",
                ref=0.0,
            )
        )
    out.tables.append(level_table(res, scopes))
    counts = dict(extra.get("counts") or {})
    judge = counts.pop("judge", None)
    out.tables.append(
        TableView(
            "Counts", ["count", "value"], [[k, fmt(v)] for k, v in counts.items() if not isinstance(v, list)]
        )
    )
    out.tables.append(
        TableView.from_records(
            "Scorers", [{k: s.get(k) for k in ("name", "version", "licence", "package")} for s in scorers]
        )
    )
    if judge:
        judged = extra.get("judged_run") or {}
        out.tables.append(
            TableView(
                "Judge (regard)",
                ["fact", "value"],
                [
                    [k, fmt(v)]
                    for k, v in {**judge, "judged run": judged.get("folder"), "model": _model(run)}.items()
                ],
            )
        )
    out.handled |= {"counts", "scorers", "generation", "groups", "judged_run"}
    return out


def render_pairs(out: Rendered, res: TaskResults) -> Rendered:
    """Counterfactual tables: largest differences side by side, every swap, prompts with nothing to swap."""
    extra = res.extra
    largest = extra.get("largest_differences") or []
    if largest:
        out.tables.append(
            TableView.from_records("Largest differences (first generation of each version)", largest)
        )
    out.tables.append(
        TableView.from_records(
            "Every swap made", list(extra.get("swaps") or []), max_rows=MAX_ROWS, collapsed=True
        )
    )
    none = list(extra.get("nothing_to_swap") or [])
    if none:
        out.tables.append(
            TableView.from_records(
                f"Nothing to swap ({len(none)} prompts, not generated)",
                none,
                max_rows=MAX_ROWS,
                collapsed=True,
            )
        )
    out.handled |= {"largest_differences", "swaps", "nothing_to_swap", "pairs", "swap_counts", "swap"}
    return out


def _model(run: Any) -> Any:
    """The judge: the run's model (``RunData.model``: a string)."""
    model = getattr(run, "model", None)
    return model if isinstance(model, str) else getattr(model, "spec", None)
