"""Console rendering of task ``winobias-adjectives``'s result (rich table)."""

from __future__ import annotations

from typing import Any

from genderscope.core.task import TaskResult


def render_result(result: TaskResult) -> Any:
    """Rich table of a scored run: bias and diff per condition (points), p, and the CI of diff."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    run = result.extra.get("run", {})
    rows = result.extra.get("summary") or []
    if not rows:
        return Text(
            f"winobias-adjectives: incomplete run ({run.get('missing_attempts', '?')} attempts "
            "without an answer); rerun to fill them in"
        )
    replicate = run.get("stats_mode") == "replicate"
    pname = "p (one-sided)" if replicate else "p (Holm)"
    table = Table(
        title=f"winobias-adjectives — {run['release']} type {run['wb_type']} {run['split']}, "
        f"{run['n_items']} pairs × {run['trials']} trials"
    )
    for col, just in (
        ("male adj.", "left"),
        ("female adj.", "left"),
        ("bias", "right"),
        ("diff", "right"),
        (pname, "right"),
    ):
        table.add_column(col, justify=just, no_wrap=True)
    if not replicate:
        table.add_column("95% CI of diff", justify="right", no_wrap=True)
    for r in rows:
        p = r["p_replicate"] if replicate else r["p_holm"]
        cells = [
            r["male_adjective"] or "—",
            r["female_adjective"] or "—",
            _f1(r["bias"]),
            "—" if r["diff"] is None else _f1(r["diff"]),
            _fp(p, r["diff"] is None, run.get("alpha", 0.05)),
        ]
        if not replicate:
            cells.append("—" if r["ci95_low"] is None else f"[{_f1(r['ci95_low'])}, {_f1(r['ci95_high'])}]")
        table.add_row(*cells)
    note = Text(
        f"bias = acc(pro) − acc(anti) in points; diff vs none_none; * p > {run['alpha']}; parser "
        f"{run['parse_mode']}, stats {run['stats_mode']}; truncated replies: {run['n_truncated']}",
        style="dim",
    )
    return Group(table, note)


def _f1(x: float | None) -> str:
    if x is None:
        return "—"
    s = f"{x:.1f}"
    return "0.0" if s == "-0.0" else s.replace("-", "−")


def _fp(p: float | None, baseline: bool, alpha: float = 0.05) -> str:
    """p with three decimals ("0.000" below 0.0005), ``*`` when p > alpha (published: alpha = 0.05)."""
    if baseline:
        return "—"
    if p is None:
        return "n/a"
    return f"{p:.3f}" + ("*" if p > alpha else "")
