"""Headline metrics of several runs side by side (terminal table and the report's comparison section)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from genderscope.report.runs import RunData, headline, metric_value
from genderscope.report.views import fmt


@dataclass
class CompareRow:
    """One metric of one task across runs; ``cells[i]`` is run i's {value, ci_low, ci_high} or None."""

    task: str
    metric: str
    cells: list[dict[str, Any] | None]


def compare_rows(
    runs: list[RunData], all_metrics: bool = False, tasks: list[str] | None = None
) -> list[CompareRow]:
    """Rows = metrics (headline ones, or every metric), in first-seen order over the runs."""
    order: list[tuple[str, str]] = []
    for r in runs:
        for task, entry in r.tasks.items():
            if tasks and task not in tasks:
                continue
            names = list(entry.get("metrics") or {}) if all_metrics else headline(entry)
            for n in names:
                if (task, n) not in order:
                    order.append((task, n))
    return [CompareRow(t, n, [metric_value(r.tasks.get(t) or {}, n) for r in runs]) for t, n in order]


def cell_text(m: dict[str, Any] | None, digits: int = 4) -> str:
    """'value [lo, hi]' or '–' when the run lacks the metric."""
    if m is None:
        return "–"
    ci = (
        ""
        if m.get("ci_low") is None and m.get("ci_high") is None
        else f"[{fmt(m.get('ci_low'), digits)}, {fmt(m.get('ci_high'), digits)}]"
    )
    return f"{fmt(m.get('value'), digits)} {ci}".strip()


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
