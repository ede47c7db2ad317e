"""What a command other than ``genderscope run`` declares, so the report needs no special case for it.

A command that writes a run log (``bordia score``, ``bordia sweep``) is registered in
:data:`genderscope.catalogue.COMMANDS` as ``"module:DECLARATION"``, like a task; its report section is the
module ``report`` of the declaration's package (as a task's), its glossary its ``metric_docs``, the
verdict's evidence its ``report_facts``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from genderscope.core.evidence import ReportFacts
from genderscope.core.metrics import MetricDoc, Reference


@dataclass(frozen=True)
class Command:
    """A command's entry in run.json and results.json: its ``name`` there, one line on what it measures,
    its metric definitions (name or ``*`` pattern -> :class:`MetricDoc`, as ``Task.metric_docs``) and
    what the report's verdict needs (:class:`ReportFacts`, as ``Task.report_facts``); ``references``: the
    method's papers (as ``Task.references``)."""

    name: str
    description: str
    metric_docs: Mapping[str, MetricDoc] = field(default_factory=dict)
    report_facts: ReportFacts = ReportFacts()
    references: tuple[Reference, ...] = ()
