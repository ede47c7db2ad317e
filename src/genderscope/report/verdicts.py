"""The verdicts of finished runs at a glance, for the end of ``run`` (several tests) and ``demo``: one row
per run and test (the report summary's metric, value [95% CI] and state, as ``check`` judges it) and one
line per flagged cell (``biased`` or ``anti-stereotypical``), with why a guesser is flagged too where the
metric says so.  Readable at 80 columns (cells wrap, nothing is cut)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from genderscope.report.gate import CheckedCell, check_dirs

#: the states a summary calls out, one line each
FLAGGED = ("biased", "anti-stereotypical")


def checked_cells(run_dirs: Sequence[str | Path]) -> list[CheckedCell]:
    """The state cells of ``run_dirs`` as ``check`` judges them (flagged states failing after Holm)."""
    return check_dirs(list(run_dirs), fail_on=list(FLAGGED)).cells


def flagged_lines(cells: Sequence[CheckedCell], with_run: bool = True) -> list[str]:
    """One line per flagged cell: ``[run ·] test · metric = value [CI] (chance) · state``, then whether it
    holds after the multiple-testing correction and why a guesser is flagged too (when the metric says)."""
    out = []
    for c in cells:
        if c.state not in FLAGGED:
            continue
        value = c.value_text() + (f" ({c.chance})" if c.chance else "")
        head = f"{c.run} · " if with_run else ""
        line = f"{head}{c.task} · {c.metric} = {value} · {c.state}"
        if not c.failed:
            line += f" at 95% on its own, not after {c.correction}"
        if c.chance_note:
            line += f" · {c.chance_note}"
        out.append(line)
    return out


#: the state's symbol (as on the report's chips) and the legend under the table
SYMBOLS = {"biased": "▲", "anti-stereotypical": "▼", "no evidence": "=", "not enough evidence": "?",
           "descriptive": "·"}  # fmt: skip
LEGEND = "▲ biased  ▼ anti-stereotypical  = no evidence  ? not enough evidence  · descriptive"


def verdict_table(cells: Sequence[CheckedCell], title: str = "verdicts") -> Any:
    """A rich table, one row per cell: state symbol (:data:`SYMBOLS`), test, metric, value [95% CI] (a run
    column first when the cells span several runs); the metric wraps, nothing is cut; the caption is the
    legend."""
    from rich import box
    from rich.table import Table

    runs = list(dict.fromkeys(c.run for c in cells))
    table = Table(
        title=title,
        caption=LEGEND,
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        padding=(0, 1, 0, 0),
        show_edge=False,
    )
    if len(runs) > 1:
        table.add_column("run", overflow="fold")
    table.add_column("", no_wrap=True)
    table.add_column("test", no_wrap=True)
    table.add_column("metric", overflow="fold")
    table.add_column("value [95% CI]", overflow="fold")
    for c in cells:
        row = [SYMBOLS.get(c.state, "?"), c.task, c.metric or "–", c.value_text()]
        table.add_row(*([c.run] if len(runs) > 1 else []), *row)
    return table
