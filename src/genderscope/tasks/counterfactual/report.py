"""Report section of ``counterfactual``: paired differences with intervals over prompts, per-version
values, the largest differences side by side with both generations, and every swap made."""

from __future__ import annotations

from typing import Any

from genderscope.core.results_file import TaskResults
from genderscope.report.views import Rendered
from genderscope.tasks.generation.report import render_generation, render_pairs


def render(name: str, res: TaskResults, run: Any) -> Rendered:
    templates = (res.extra.get("swap") or {}).get("mode") == "templates"
    versions = ["male", "female"] if templates else ["original", "swapped"]
    what = f"diff = {versions[1]} − {versions[0]} per (prompt, sample), prompts resampled"
    return render_pairs(render_generation(name, res, run, versions, what), res)
