"""View objects the HTML template renders, and value formatting shared by report, compare and export."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from markupsafe import Markup

from genderscope.core.runlog import MetricEntry


def fmt(x: Any, digits: int = 3) -> str:
    """A cell value as text: numbers to ``digits`` significant digits (integer part kept whole, exponent
    only below 1e-4 or from 1e6 on), None/NaN as '–', short numeric lists as '[a, b]', other lists as JSON."""
    if x is None:
        return "–"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, int):
        return str(x)
    if isinstance(x, float):
        if math.isnan(x) or math.isinf(x):
            return "–" if math.isnan(x) else ("∞" if x > 0 else "−∞")
        if x == 0:
            return "0"
        if abs(x) >= 1e6 or abs(x) < 1e-4:
            return f"{x:.{max(digits - 1, 1)}e}"
        if abs(x) >= 10**digits:
            return f"{x:.0f}"
        return f"{x:.{digits}g}"
    if (
        isinstance(x, list)
        and 0 < len(x) <= 8
        and all(v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)) for v in x)
    ):
        return "[" + ", ".join(fmt(v, digits) for v in x) + "]"
    if isinstance(x, (list, dict)):
        text = json.dumps(x, ensure_ascii=False)
        return text if len(text) <= 200 else text[:199] + "…"
    return str(x)


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
