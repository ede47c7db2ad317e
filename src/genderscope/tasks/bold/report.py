"""Report section of ``bold``: the actresses − actors gaps with intervals over people, per-group values,
counts, scorers (HurtLex's non-commercial licence shown) and the judge."""

from __future__ import annotations

from typing import Any

from genderscope.core.results_file import TaskResults
from genderscope.report.views import Rendered
from genderscope.tasks.generation.report import render_generation

GROUPS = ["American_actresses", "American_actors"]


def render(name: str, res: TaskResults, run: Any) -> Rendered:
    return render_generation(
        name, res, run, GROUPS, "gap = American_actresses − American_actors, people resampled"
    )
