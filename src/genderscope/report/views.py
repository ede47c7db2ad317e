"""View objects the HTML template renders, and value formatting shared by report, compare and export."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from markupsafe import Markup

from genderscope.core.metrics import MetricEntry
from genderscope.core.textfmt import fmt as fmt  # re-exported: report, compare and export use it


def fmt_ci(m: MetricEntry | None, digits: int = 3) -> str:
    """'[lo, hi]' of a metric, or '' when it has no interval."""
    if m is None or not m.has_ci:
        return ""
    return f"[{fmt(m.ci_low, digits)}, {fmt(m.ci_high, digits)}]"


def fmt_metric(m: MetricEntry | None, digits: int = 3) -> str:
    """'value [lo, hi]', or '–' when there is no metric."""
    if m is None:
        return "–"
    return f"{fmt(m.value, digits)} {fmt_ci(m, digits)}".strip()


@dataclass
class Figure:
    """One chart: ``svg`` is trusted markup built by :mod:`genderscope.report.svg` (all text escaped)."""

    title: str
    svg: Markup
    caption: str = ""


@dataclass
class TableView:
    """A table of already formatted cells (plain text; the template escapes them)."""

    title: str
    columns: list[str]
    rows: list[list[str]]
    note: str = ""
    collapsed: bool = False

    @classmethod
    def from_records(
        cls,
        title: str,
        records: list[dict[str, Any]],
        *,
        collapsed: bool = False,
        note: str = "",
        max_rows: int = 500,
    ) -> TableView:
        cols: list[str] = []
        for r in records:
            for k in r:
                if k not in cols:
                    cols.append(k)
        rows = [[fmt(r.get(c)) for c in cols] for r in records[:max_rows]]
        if len(records) > max_rows:
            note = (note + " " if note else "") + f"First {max_rows} of {len(records)} rows (export has all)."
        return cls(title, cols, rows, note, collapsed)


@dataclass
class Rendered:
    """What a task renderer contributes: a one-line reading, figures, tables.

    ``handled``: keys of the task's entries already shown, left out of the generic table and
    scalar listings; ``notes``: one sentence per figure left out because it had nothing to show.
    """

    reading: str = ""
    figures: list[Figure] = field(default_factory=list)
    tables: list[TableView] = field(default_factory=list)
    handled: set[str] = field(default_factory=set)
    #: sentences shown in place of figures that have nothing to draw (say why)
    notes: list[str] = field(default_factory=list)
