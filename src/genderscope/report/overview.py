"""The report's first screen: tests as rows grouped by suite and use case, models as columns (one table per
group and set of models that ran its tests, with only those columns), one state chip per cell (a symbol,
the value, the state's colour), then the full table (value, 95% CI, state and reading of every cell, one
row per test and model).

It reads the cells of :func:`genderscope.report.summary.summary_table` (same states, same rules) and
groups the tests by the suites of :data:`genderscope.core.lookup.SUITES` and, for GenderBench's probes, by
the use case their results declare.  It knows no task.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from genderscope.core import lookup
from genderscope.report.genderbench import USE_CASE_ORDER
from genderscope.report.summary import Cell, SummaryTable

#: per state: (symbol on the chip, short words for the legend); the colour is the state's CSS class
CHIP = {
    "biased": ("▲", "CI on the stereotypical side of the no-bias value"),
    "anti-stereotypical": ("▼", "CI on the other side of the no-bias value"),
    "no evidence": ("=", "CI includes the no-bias value and is narrow"),
    "not enough evidence": ("?", "too few items, too many unreadable answers or a CI too wide"),
    "descriptive": ("·", "a number without a no-bias value"),
}
#: group of the tests in no suite
OTHER = "Other tests"


@dataclass
class Chip:
    """One cell of the first screen: state, symbol, value; ``title`` and ``target`` lead to the full row."""

    state: str
    symbol: str
    value: str
    title: str
    target: str


@dataclass
class OverviewRow:
    """One test: its name, section anchor, the metric its chips show, a chip per model (None: not run)."""

    test: str
    metric: str
    metric_anchor: str | None
    chips: list[Chip | None]
    #: what a uniform random guesser gets on the metric (``chance 0.333``; '' when not declared)
    chance: str = ""


@dataclass
class OverviewGroup:
    """Tests of one suite and use case (``name``), or of no suite (:data:`OTHER`), run by the same models:
    ``columns``, their positions (the table shows only those, so many models with few shared tests give
    no wall of empty cells; a suite's tests run by other models form another table of the same name)."""

    name: str
    rows: list[OverviewRow] = field(default_factory=list)
    columns: list[int] = field(default_factory=list)


@dataclass
class FullRow:
    """One row of the full table: a test on one model."""

    test: str
    model: str
    cell: Cell
    anchor: str
    first: bool
    span: int


@dataclass
class Overview:
    """Columns (models), grouped rows (tests) and the full table below them."""

    models: list[str]
    groups: list[OverviewGroup]
    full: list[FullRow]
    states: list[tuple[str, str, str]]


def cell_anchor(test: str, model: str) -> str:
    """The full table row of ``test`` on ``model`` (the chip links to it)."""
    return "cell-" + re.sub(r"[^A-Za-z0-9_-]+", "_", f"{test}--{model}")


def _suite_of(test: str) -> str | None:
    for name, suite in lookup.SUITES.items():
        if isinstance(suite.get("tasks"), list) and test in suite["tasks"]:
            return name
    return None


def _use_case(runs: list[Any], test: str) -> str | None:
    """The use case (its last part, ``"A: B"`` -> ``B``) a run's results declare for ``test``."""
    for r in runs:
        res = r.tasks.get(test)
        gb = res.extra.get("genderbench") if res is not None else None
        if isinstance(gb, dict) and gb.get("use_case"):
            return str(gb["use_case"]).rpartition(": ")[2]
    return None


def group_name(runs: list[Any], test: str) -> str:
    """``GenderBench · Decision-making`` for a suite's test with a use case, ``genderbench`` without one,
    :data:`OTHER` for a test in no suite."""
    suite = _suite_of(test)
    if suite is None:
        return OTHER
    title = "GenderBench" if suite == "genderbench" else suite
    case = _use_case(runs, test)
    return f"{title} · {case}" if case else title


def _group_order(name: str, first_seen: int) -> tuple[int, int, int]:
    case = name.rpartition(" · ")[2]
    rank = USE_CASE_ORDER.index(case) if case in USE_CASE_ORDER else len(USE_CASE_ORDER)
    return (name == OTHER, rank if " · " in name else first_seen, first_seen)


def _chip(test: str, model: str, cell: Cell) -> Chip:
    symbol = CHIP.get(cell.state, ("·", ""))[0]
    value = "–" if cell.value in ("undefined", "") else cell.value
    words = f"{test} on {model}: {cell.metric} {cell.value} {cell.ci}".rstrip()
    chance = f" ({cell.chance})" if cell.chance else ""
    notes = "".join(f" {n}" for n in cell.notes)
    title = f"{words}{chance}; {cell.state}. {cell.reading}{notes}"
    return Chip(cell.state, symbol, value, title, cell_anchor(test, model))


def _metric_of(cells: list[Cell | None]) -> tuple[str, str | None, str]:
    for c in cells:
        if c is not None and c.metric:
            return c.metric, c.anchor, c.chance
    return "", None, ""


def _by_models(group: OverviewGroup) -> list[OverviewGroup]:
    """``group`` as one table per set of models that ran its tests (in first-seen order), each with only
    those models' columns: tests run by different models never share a row of empty cells."""
    parts: dict[tuple[int, ...], OverviewGroup] = {}
    for row in group.rows:
        ran = tuple(i for i, chip in enumerate(row.chips) if chip is not None)
        part = parts.setdefault(ran, OverviewGroup(group.name, columns=list(ran)))
        part.rows.append(row)
    return list(parts.values())


def overview(table: SummaryTable, runs: list[Any]) -> Overview:
    """The first screen and the full table over ``table`` (:func:`summary_table` of ``runs``)."""
    groups: dict[str, OverviewGroup] = {}
    full: list[FullRow] = []
    for j, test in enumerate(table.tests):
        column = [table.cells[i][j] for i in range(len(table.rows))]
        metric, anchor, chance = _metric_of(column)
        chips = [None if c is None else _chip(test, m, c) for m, c in zip(table.rows, column)]
        name = group_name(runs, test)
        groups.setdefault(name, OverviewGroup(name)).rows.append(
            OverviewRow(test, metric, anchor, chips, chance)
        )
        ran = [(m, c) for m, c in zip(table.rows, column) if c is not None]
        for k, (m, c) in enumerate(ran):
            full.append(FullRow(test, m, c, cell_anchor(test, m), k == 0, len(ran)))
    seen = list(groups)
    ordered = sorted(groups.values(), key=lambda g: _group_order(g.name, seen.index(g.name)))
    # the full table follows the first screen's order
    order = [r.test for g in ordered for r in g.rows]
    ordered = [part for g in ordered for part in _by_models(g)]
    full.sort(key=lambda f: order.index(f.test))
    states = [(s, sym, words) for s, (sym, words) in CHIP.items()]
    return Overview(list(table.rows), ordered, full, states)
