"""Headline metrics of several runs side by side (terminal table and the report's comparison section)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from genderscope.core.metrics import MetricEntry
from genderscope.report.runs import RunData
from genderscope.report.views import fmt_metric


@dataclass
class CompareRow:
    """One metric of one task across runs; ``cells[i]`` is run i's metric or None."""

    task: str
    metric: str
    cells: list[MetricEntry | None]


def compare_rows(
    runs: list[RunData], all_metrics: bool = False, tasks: list[str] | None = None
) -> list[CompareRow]:
    """Rows = metrics (headline ones, or every metric), in first-seen order over the runs."""
    order: list[tuple[str, str]] = []
    for r in runs:
        for task, res in r.tasks.items():
            if tasks and task not in tasks:
                continue
            names = list(res.metrics) if all_metrics else res.headline_names()
            for n in names:
                if (task, n) not in order:
                    order.append((task, n))
    return [
        CompareRow(t, n, [r.tasks[t].metrics.get(n) if t in r.tasks else None for r in runs])
        for t, n in order
    ]


def cell_text(m: MetricEntry | None, digits: int = 3) -> str:
    """'value [lo, hi]' or '–' when the run lacks the metric."""
    return fmt_metric(m, digits)


def rich_table(runs: list[RunData], all_metrics: bool = False, tasks: list[str] | None = None) -> Any:
    """A rich Table: rows = task/metric, columns = runs (labelled by model)."""
    from rich.table import Table

    table = Table(title="headline metrics across runs (value [95% CI])")
    table.add_column("task")
    table.add_column("metric", no_wrap=True)
    for r in runs:
        table.add_column(r.label, justify="right")
    last = None
    for row in compare_rows(runs, all_metrics, tasks):
        table.add_row(row.task if row.task != last else "", row.metric, *[cell_text(c, 3) for c in row.cells])
        last = row.task
    return table


def paired_cells(c: Any) -> list[str]:
    """One paired change as text cells: task, metric, before, after, change [95% CI], items, state (the
    terminal table and the HTML before/after view show the same cells)."""
    from genderscope.core.textfmt import fmt

    ci = f" [{fmt(c.ci_low)}, {fmt(c.ci_high)}]" if c.ci_low is not None else ""
    change = f"{fmt(c.change)}{ci}" if c.change is not None else ""
    if c.note and c.ci_low is None:
        change = f"{change} ({c.note})" if change else c.note
    return [c.task, c.metric, fmt(c.before), fmt(c.after), change, str(c.n_items), c.state]


PAIRED_COLUMNS = ("task", "metric", "before", "after", "change [95% CI]", "items", "state")


def paired_table(changes: list) -> Any:  # noqa: ANN001 - genderscope.core.paired.PairedChange items
    """The paired changes of ``compare --paired`` (a rich Table): task, metric, before, after, change
    [95% CI], items, state."""
    from rich.table import Table

    table = Table(title="change after − before (paired over the items both runs scored)")
    for col in PAIRED_COLUMNS:
        table.add_column(col, justify="right" if col in ("before", "after", "items") else "left")
    for c in changes:
        table.add_row(*paired_cells(c))
    return table
