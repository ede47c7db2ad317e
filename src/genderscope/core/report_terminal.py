"""Rich tables for the terminal."""

from __future__ import annotations

import math
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


def _finite(x: Any) -> bool:
    try:
        return x is not None and math.isfinite(float(x))
    except (TypeError, ValueError):
        return False


def ci_text(m: Any) -> str:
    """'[lo, hi]', 'no CI' when the metric gives a reason for having none (e.g. a maximum), else ''."""
    if _finite(m.ci_low) and _finite(m.ci_high):
        return f"[{fmt(m.ci_low)}, {fmt(m.ci_high)}]"
    return "no CI" if getattr(m, "no_ci", None) else ""


def metrics_table(task: str, result: Any, names: list[str] | None = None, docs: Any = None) -> Table:
    """Headline metrics (or ``names``) with their confidence intervals, and the chance level (what a
    uniform random guesser gets, ``MetricDoc.chance``) where ``docs`` (the task's ``metric_docs``) declare
    one.  Long metric names wrap instead of being cut (80-column logs)."""
    from genderscope.core.metrics import doc_for

    table = Table(title=f"{task}", show_lines=False)
    table.add_column("metric", overflow="fold")
    table.add_column("value", justify="right", no_wrap=True)
    table.add_column("95% CI", justify="right", overflow="fold")
    chosen = [n for n in (names or result.headline or list(result.metrics)[:12]) if n in result.metrics]
    chance = {n: doc_for(docs or {}, n) for n in chosen}
    chance = {n: d.chance for n, d in chance.items() if d is not None and d.chance is not None}
    if chance:
        table.add_column("chance", justify="right", no_wrap=True)
    for name in chosen:
        m = result.metrics[name]
        row = [name, fmt(m.value), ci_text(m)]
        table.add_row(*row, *([fmt(chance[name]) if name in chance else ""] if chance else []))
    return table


def evidence_note(task: Any, result: Any) -> Any:
    """The report summary's state and reading (:func:`genderscope.core.evidence.judge`) for the task's
    first headline metric with a bias direction, as one line of text; None when no headline metric has
    one (a descriptive task)."""
    from rich.text import Text

    from genderscope.core.evidence import judge

    for name in result.headline or list(result.metrics):
        doc, m = task.metric_doc(name), result.metrics.get(name)
        if m is None or doc is None or not doc.sign or doc.neutral is None:
            continue
        ev = task.report_facts.resolve(result.metrics, result.extra)
        verdict = judge(m, doc, ev)
        count = f" ({ev.n_items} {ev.unit})" if ev.n_items is not None else ""
        why = f"\n  {verdict.chance_note}" if verdict.chance_note else ""
        return Text(f"{name}: {verdict.state}: {verdict.reading}{count}{why}")
    return None


def render_result(task: Any, result: Any) -> Any:
    """The task's terminal block: its own ``render(result)`` when the task defines one, else the headline
    metrics table; then, for every task, the report summary's state and reading of the first headline
    metric with a bias direction (the evidence line)."""
    from rich.console import Group

    own = getattr(task, "render", None)
    block = own(result) if callable(own) else metrics_table(task.name, result, docs=task.metric_docs)
    note = None if getattr(task, "renders_evidence", False) else evidence_note(task, result)
    return block if note is None else Group(block, note)
