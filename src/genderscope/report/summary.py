"""The report's first screen: one row per model, one column per test, each cell a headline number with
its 95% CI, a state and a plain-language reading.

The states and their rules, and the mark's note, are :mod:`genderscope.core.evidence`'s (the terminal
summaries use the same rules); what they look at besides the metric (evidence count and unit, unreadable
share, mark) each task declares (``Task.report_facts``) and the run writes to results.json.  This module
knows no task's entries.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from genderscope.core import lookup
from genderscope.core.evidence import (
    Evidence,
    ReportFacts,
    chance_level,
    judge,
    sentence,
)
from genderscope.core.results_file import TaskResults
from genderscope.report.glossary import metric_anchor, metric_doc
from genderscope.report.reasons import undefined_reason
from genderscope.core.textfmt import fmt
from genderscope.report.views import fmt_ci


@dataclass
class Cell:
    """One summary cell: the metric shown, its formatted value and CI, state and reading."""

    task: str
    metric: str
    value: str
    ci: str
    state: str
    reading: str
    notes: list[str] = field(default_factory=list)
    anchor: str | None = None
    #: what a uniform random guesser gets on the metric shown (``chance 0.333``; '' when not declared)
    chance: str = ""
    #: why the metric's definition flags a guesser too, when this cell is flagged ('' otherwise)
    chance_note: str = ""


@lru_cache(maxsize=None)
def declared_facts(task: str) -> ReportFacts:
    """What ``task`` declares the report needs (``Task.report_facts``, a command's
    ``Command.report_facts``); nothing declared for an unknown task."""
    try:
        if task in lookup.TASKS:
            return lookup.task_class(task).report_facts
        if task in lookup.COMMANDS:
            return lookup.command(task).report_facts
    except (ImportError, lookup.PluginError):
        pass
    return ReportFacts()


def evidence(task: str, res: TaskResults) -> Evidence:
    """Evidence count, unreadable share and mark of a results block: as written with it, else (files
    written before results.json carried them) the task's declaration resolved against the block."""
    return res.evidence(declared_facts(task))


def signed_metrics(task: str, names: list[str]) -> list[str]:
    """The names among ``names`` whose docs give a bias direction (sign ≠ 0 and a neutral value)."""
    out = []
    for n in names:
        doc = metric_doc(task, n)
        if doc is not None and doc.sign and doc.neutral is not None:
            out.append(n)
    return out


def primary_metric(task: str, results: list[TaskResults], defined_only: bool = False) -> str | None:
    """The test's headline metric across runs: the first headline metric with a bias direction (with
    ``defined_only``: the first one defined in some run), else the first headline metric."""
    names: list[str] = []
    for res in results:
        for n in res.headline_names():
            if n not in names:
                names.append(n)
    defined = [n for n in names if any(r.metrics.get(n) and r.metrics[n].value is not None for r in results)]
    pools = (
        (signed_metrics(task, defined), defined, names)
        if defined_only
        else (signed_metrics(task, names), names)
    )
    for pool in pools:
        if pool:
            return pool[0]
    return None


def summary_cell(task: str, res: TaskResults, metric: str | None) -> Cell:
    """The cell of one run and test; ``metric`` is the test's primary metric (:func:`primary_metric`)."""
    ev = evidence(task, res)
    if metric is None:
        return Cell(
            task, "", "–", "", "not enough evidence", "Not enough evidence: the run reports no metric."
        )
    notes: list[str] = []
    if metric not in res.metrics:  # e.g. a compat-mode run without the default mode's metric
        metric = next(iter(signed_metrics(task, res.headline_names())), metric)
    shown = metric
    m = res.metrics.get(metric)
    if m is None or m.value is None:
        why = undefined_reason(res, metric)
        fallback = [n for n in signed_metrics(task, res.headline_names()) if n != metric]
        alt = next((n for n in fallback if res.metrics.get(n) and res.metrics[n].value is not None), None)
        head = why.split(": ")[0]
        short = why if head.endswith("undefined") else head  # "β undefined: <why>" keeps its why
        if alt is None:
            return Cell(
                task,
                metric,
                "undefined",
                "",
                "not enough evidence",
                sentence(short),
                anchor=metric_anchor(task, metric),
            )
        notes.append(f"{metric} undefined (see the test's section); {alt} shown.")
        shown, m = alt, res.metrics[alt]
    assert m is not None
    doc = metric_doc(task, shown)
    verdict = judge(m, doc, ev)
    if verdict.mark_note:
        notes.append(verdict.mark_note)
    if verdict.chance_note:
        notes.append(sentence(verdict.chance_note))
    return Cell(
        task,
        shown,
        fmt(m.value),
        fmt_ci(m),
        verdict.state,
        verdict.reading,
        notes,
        metric_anchor(task, shown),
        chance_level(doc),
        verdict.chance_note or "",
    )


@dataclass
class SummaryTable:
    """Rows = models (run row labels), columns = tests; ``cells[r][c]`` is None when not run."""

    tests: list[str]
    rows: list[str]
    cells: list[list[Cell | None]]


def model_runs_first(runs: list[Any]) -> list[Any]:
    """Runs of a model first, corpus-only runs (no model in the manifest) last, otherwise in order."""
    return sorted(runs, key=lambda r: r.manifest is None or r.manifest.model is None)


def ordered_tests(runs: list[Any]) -> list[str]:
    """The tests (task names) in first-seen order over :func:`model_runs_first`."""
    tests: list[str] = []
    for r in model_runs_first(runs):
        for t in r.tasks:
            if t not in tests:
                tests.append(t)
    return tests


def summary_table(runs: list[Any]) -> SummaryTable:
    """The summary over ``runs`` (:class:`~genderscope.report.runs.RunData` with labels assigned)."""
    ordered = model_runs_first(runs)
    tests = ordered_tests(runs)
    primary = {t: primary_metric(t, [r.tasks[t] for r in runs if t in r.tasks]) for t in tests}
    rows: list[str] = []
    for r in ordered:
        if r.row_label not in rows:
            rows.append(r.row_label)
    cells: list[list[Cell | None]] = [[None] * len(tests) for _ in rows]
    for r in ordered:
        i = rows.index(r.row_label)
        for t, res in r.tasks.items():
            j = tests.index(t)
            if cells[i][j] is None:
                cells[i][j] = summary_cell(t, res, primary[t])
    return SummaryTable(tests, rows, cells)
