"""Finding a task's report renderer: the module ``report`` next to the task, else the generic one.

A task registered (in :data:`genderscope.catalogue.TASKS` or a plugin's entry point) as
``genderscope.tasks.<pkg>.task:Class``
has its renderer in ``genderscope.tasks.<pkg>.report``, function
``render(name, results, run) -> Rendered`` (``results``: the task's
:class:`~genderscope.core.runlog.TaskResults`, ``run``: the :class:`~genderscope.report.runs.RunData`).
Adding a task stays one package plus one registry line; without a ``report`` module it gets the
generic section.  A command's entry (:data:`genderscope.core.lookup.COMMANDS`, e.g. ``bordia-sweep``) finds
its renderer the same way, next to the command.

The page builder always adds the headline-metrics table, the full metrics table, every table the
renderer did not mark as handled, and the attempt sample.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable

from genderscope.core import lookup
from genderscope.core.results_file import TaskResults
from genderscope.report.helpers import render_generic
from genderscope.report.runs import RunData
from genderscope.report.views import Rendered

Renderer = Callable[[str, TaskResults, RunData], Rendered]

def renderer_module(name: str) -> str | None:
    """Module path of the renderer of task or command entry ``name`` (None when it has none)."""
    entry = lookup.TASKS.get(name) or lookup.COMMANDS.get(name)
    if entry is None:
        return None
    package = entry.partition(":")[0].rpartition(".")[0]
    if not package:  # a plugin task in a top-level module: no renderer beside it
        return None
    module = package + ".report"
    try:
        return module if importlib.util.find_spec(module) is not None else None
    except (ImportError, ValueError):  # a plugin whose package does not import
        return None


def renderer_for(name: str) -> Renderer | None:
    """The ``render`` function of the task's report module, or None."""
    module = renderer_module(name)
    return importlib.import_module(module).render if module else None


def render_task(name: str, results: TaskResults, run: RunData) -> Rendered:
    """The task's own section parts, else the generic ones.

    A renderer that fails on an unexpected entry shape falls back to the generic one and says so
    in the reading, so one malformed task never breaks the whole report.
    """
    fn = renderer_for(name)
    if fn is None:
        return render_generic(name, results, run)
    try:
        return fn(name, results, run)
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
        out = render_generic(name, results, run)
        out.reading = (
            f"(figure renderer failed on this results.json: {type(exc).__name__}: {exc}) " + out.reading
        )
        return out
