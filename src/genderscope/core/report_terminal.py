"""Rich tables for the terminal."""

from __future__ import annotations

from typing import Any

from rich.table import Table

from genderscope.core.textfmt import snap_zero


def fmt(x: Any, digits: int = 3) -> str:
    if x is None:
        return "–"
    try:
        f = float(x)
    except (TypeError, ValueError):
        return str(x)
    if f != f:
        return "NaN"
    return f"{snap_zero(f) + 0.0:.{digits}f}"


def metrics_table(task: str, result: Any, names: list[str] | None = None) -> Table:
    """Headline metrics (or ``names``) with their confidence intervals."""
    table = Table(title=f"{task}", show_lines=False)
    table.add_column("metric")
    table.add_column("value", justify="right")
    table.add_column("95% CI", justify="right")
    chosen = names or result.headline or list(result.metrics)[:12]
    for name in chosen:
        m = result.metrics.get(name)
        if m is None:
            continue
        ci = f"[{fmt(m.ci_low)}, {fmt(m.ci_high)}]" if m.ci_low is not None or m.ci_high is not None else ""
        table.add_row(name, fmt(m.value), ci)
    return table
