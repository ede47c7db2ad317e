"""Per test, the comparison across runs: a forest plot of the headline metric (one row per run) and a
compact table (runs as rows, a few headline metrics as columns, ``value [95% CI]`` to 3 significant
digits), plus the harms the test is evidence of."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from genderscope.report import svg
from genderscope.report.glossary import metric_anchor, metric_doc, task_docs
from genderscope.report.reasons import undefined_reason
from genderscope.report.summary import primary_metric, ordered_tests
from genderscope.report.views import Figure, fmt_metric

#: headline metrics shown as table columns (the rest are in each run's details)
MAX_COLUMNS = 5


@dataclass
class ComparisonBlock:
    """One test's comparison block."""

    task: str
    anchor: str
    metric: str
    harms: list[str] = field(default_factory=list)
    figure: Figure | None = None
    empty: str = ""
    columns: list[tuple[str, str | None]] = field(default_factory=list)  # (metric, glossary anchor)
    rows: list[list[str]] = field(default_factory=list)  # [run label, cells...]
    note: str = ""


def harms(task: str) -> list[str]:
    """'harm (metrics)' for each distinct harm the task's metrics name (GenDa Lens: main effect, nuance)."""
    found: dict[str, list[str]] = {}
    for d in task_docs(task).values():
        if d.harm:
            found.setdefault(d.harm, []).append(d.name)
    return [f"{harm} ({', '.join(names)})" for harm, names in found.items()]


def comparison_block(task: str, runs: list[Any]) -> ComparisonBlock:
    """The block of ``task`` over the runs that ran it (labels assigned)."""
    with_task = [r for r in runs if task in r.tasks]
    results = [r.tasks[task] for r in with_task]
    metric = primary_metric(task, results, defined_only=True) or ""
    view = ComparisonBlock(
        task, "test-" + "".join(c if c.isalnum() else "-" for c in task), metric, harms(task)
    )
    doc = metric_doc(task, metric)
    points, undefined = [], []
    for r in with_task:
        m = r.tasks[task].metrics.get(metric)
        if m is None or m.value is None:
            undefined.append(f"{r.row_label}: {undefined_reason(r.tasks[task], metric)}")
            points.append(svg.Point(r.row_label, None))
        else:
            points.append(svg.Point(r.row_label, m.value, m.ci_low, m.ci_high))
    if any(p.value is not None for p in points):
        ref = doc.neutral if doc is not None and doc.neutral is not None else None
        view.figure = Figure(
            f"{task}: {metric} by run",
            svg.point_plot(
                points,
                title=f"{task}: {metric} by run (95% CI)",
                xlabel=f"{metric}" + (f", {doc.units}" if doc else ""),
                ref=ref,
                ref_label="no bias" if ref is not None else "",
                label_width=160,
            ),
            (doc.direction + ". " if doc else "") + " ".join(f"Undefined: {u}." for u in undefined),
        )
    else:
        view.empty = (
            f"No run has a value of {metric or 'a headline metric'}, so there is nothing to plot: "
            + "; ".join(undefined)
            + "."
        )
    names: list[str] = [metric] if metric else []
    for res in results:
        for n in res.headline_names():
            if n not in names:
                names.append(n)
    shown = names[:MAX_COLUMNS]
    if len(names) > MAX_COLUMNS:
        view.note = f"{len(names) - MAX_COLUMNS} further headline metrics are in each run's details."
    view.columns = [(n, metric_anchor(task, n)) for n in shown]
    for r in with_task:
        res = r.tasks[task]
        view.rows.append([r.row_label] + [fmt_metric(res.metrics.get(n)) for n in shown])
    return view


def comparison_blocks(runs: list[Any]) -> list[ComparisonBlock]:
    """One block per test, in first-seen order over the runs."""
    return [comparison_block(t, runs) for t in ordered_tests(runs)]
