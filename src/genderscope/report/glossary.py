"""The report's glossary: metric definitions declared by the tasks (``Task.metric_docs``).

A task's docs map a metric name, or a pattern with ``*`` (any characters), to a
:class:`~genderscope.core.task.MetricDoc`; an exact name wins over a pattern, patterns are tried in
declaration order.  A command's entry (:data:`genderscope.core.lookup.COMMANDS`) declares them the same way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from genderscope.core import lookup
from genderscope.core.metrics import MetricDoc, Reference, doc_for
from genderscope.core.textfmt import fmt


@lru_cache(maxsize=None)
def task_docs(task: str) -> dict[str, MetricDoc]:
    """The metric docs of ``task`` ({} for an unknown task or one without docs)."""
    try:
        if task in lookup.TASKS:
            return dict(getattr(lookup.task_class(task), "metric_docs", {}) or {})
        if task in lookup.COMMANDS:
            return dict(lookup.command(task).metric_docs)
    except (ImportError, lookup.PluginError):
        return {}
    return {}


@lru_cache(maxsize=None)
def task_references(task: str) -> tuple[Reference, ...]:
    """The papers and code of ``task``'s method (``Task.references``, or a command's ``references``)."""
    try:
        if task in lookup.TASKS:
            return tuple(getattr(lookup.task_class(task), "references", ()) or ())
        if task in lookup.COMMANDS:
            return tuple(lookup.command(task).references)
    except (ImportError, lookup.PluginError):
        return ()
    return ()


def metric_doc(task: str, metric: str) -> MetricDoc | None:
    """The definition of ``metric`` of ``task``: the exact entry, else the first matching pattern."""
    return doc_for(task_docs(task), metric)


def anchor(task: str, doc_name: str) -> str:
    """The glossary row's HTML id of a doc entry."""
    return "def-" + re.sub(r"[^A-Za-z0-9_-]+", "_", f"{task}-{doc_name}")


def metric_anchor(task: str, metric: str) -> str | None:
    """The glossary anchor that defines ``metric`` (None when the task does not define it)."""
    doc = metric_doc(task, metric)
    return anchor(task, doc.name) if doc else None


@dataclass
class GlossaryRow:
    """One glossary line: ``name`` as declared (may be a pattern), its task and definition."""

    task: str
    name: str
    formula: str
    direction: str
    units: str
    harm: str
    anchor: str
    #: the chance level (``MetricDoc.chance``, formatted; '' when none) and why a guesser is flagged
    chance: str = ""
    chance_note: str = ""


def glossary_rows(tasks: list[str]) -> list[GlossaryRow]:
    """Every declared metric of ``tasks``, in task order then declaration order."""
    rows = []
    for t in tasks:
        for doc in task_docs(t).values():
            chance = "" if doc.chance is None else fmt(doc.chance)
            rows.append(
                GlossaryRow(
                    t,
                    doc.name,
                    doc.formula,
                    doc.direction,
                    doc.units,
                    doc.harm,
                    anchor(t, doc.name),
                    chance,
                    doc.chance_note,
                )
            )
    return rows
