"""Which task runs on which model kind, derived from what tasks and backends declare.

A task declares ``measurements`` (request kind -> the measurement it makes with answers of that
kind, in order of preference; tasks without it fall back to ``supports``); a backend declares
``request_kinds``.  A task runs on a model kind when the two share a request kind, and it uses
the first shared kind in the task's order.  :func:`require_kinds` is the check a task calls in
``check_model`` so that a combination that makes no sense fails before any model loads, naming
the kinds that work.
"""

from __future__ import annotations

from typing import Any, Iterable

from genderscope import registry
from genderscope.core.errors import UsageError


def task_measurements(task_cls: Any) -> dict[str, str]:
    """Request kind -> measurement text of a task class (``supports`` with empty texts if undeclared)."""
    declared = getattr(task_cls, "measurements", None)
    if declared:
        return dict(declared)
    return {k: "" for k in getattr(task_cls, "supports", ())}


def backend_request_kinds() -> dict[str, frozenset[str] | None]:
    """Model kind -> request kinds it answers (None if its module cannot be imported here)."""
    out: dict[str, frozenset[str] | None] = {}
    for kind in registry.BACKENDS:
        try:
            out[kind] = frozenset(registry._load(registry.BACKENDS[kind]).request_kinds)
        except Exception:  # noqa: BLE001 - a missing optional dependency must not break the table
            out[kind] = None
    return out


def chosen_kind(task_cls: Any, answered: Iterable[str]) -> str | None:
    """The request kind a task uses with a model that answers ``answered`` (None: no measurement)."""
    got = set(answered)
    return next((k for k in task_measurements(task_cls) if k in got), None)


#: measurement text for tasks that declare only ``supports``
_DEFAULT_TEXT = {"chat": "generated answer, parsed"}

#: model kinds that answer whatever a recorded run contains; shown, but not listed as "working" kinds
_PASS_THROUGH = ("replay",)


def working_model_kinds(task_cls: Any, kinds: Iterable[str] | None = None) -> list[str]:
    """Model kinds (except replay/random null models) on which the task makes a measurement."""
    wanted = list(kinds) if kinds else list(task_measurements(task_cls))
    out = []
    for kind, answered in backend_request_kinds().items():
        if kind in _PASS_THROUGH or kind == "random" or answered is None:
            continue
        if any(k in answered for k in wanted):
            out.append(kind)
    return out


def require_kinds(task: Any, kinds: Iterable[str] | None = None, hint: str = "") -> str:
    """Return the request kind ``task`` will use with the run's model, or raise a clear UsageError.

    ``kinds`` restricts the acceptable request kinds (default: all the task declares).  The error
    names the model kind, what it answers, what the task needs and the model kinds that work.
    """
    cls = type(task)
    wanted = list(kinds) if kinds else list(task_measurements(cls))
    got = task.ctx.request_kinds
    hit = next((k for k in wanted if k in got), None)
    if hit is not None:
        return hit
    works = working_model_kinds(cls, wanted)
    model = task.ctx.model_kind or "this model"
    answers = ", ".join(sorted(got)) or "nothing"
    msg = (
        f"task {cls.name} cannot run on {model} models: they answer {answers}, but {cls.name} needs "
        f"{' or '.join(wanted)}; model kinds that work: {', '.join(works) or 'none installed'}"
    )
    raise UsageError(msg + (f" ({hint})" if hint else ""))


def matrix_rows() -> list[dict[str, Any]]:
    """One row per task: {task, cells: {model kind: measurement text, '' for kind w/o text, None: no}}."""
    kinds = backend_request_kinds()
    rows = []
    for name in registry.TASKS:
        try:
            cls = registry.task_class(name)
        except Exception:  # noqa: BLE001 - a task module under construction must not break the table
            continue
        meas = task_measurements(cls)
        cells: dict[str, Any] = {}
        for kind, answered in kinds.items():
            if answered is None:
                cells[kind] = "(not installed)"
                continue
            k = chosen_kind(cls, answered)
            if k is None:
                cells[kind] = None
            elif kind in _PASS_THROUGH:
                cells[kind] = "recorded answers"
            elif kind == "random":
                cells[kind] = "null model"
            else:
                cells[kind] = meas[k] or _DEFAULT_TEXT.get(k, k)
        rows.append({"task": name, "cells": cells})
    return rows


def matrix_markdown() -> str:
    """The matrix as a Markdown table (for the README)."""
    rows = matrix_rows()
    kinds = list(backend_request_kinds())
    lines = ["| task | " + " | ".join(f"`{k}`" for k in kinds) + " |", "|---" * (len(kinds) + 1) + "|"]
    for r in rows:
        lines.append(f"| `{r['task']}` | " + " | ".join(r["cells"][k] or "—" for k in kinds) + " |")
    return "\n".join(lines)


def matrix_table() -> Any:
    """The matrix as a rich table for ``genderscope tasks --matrix``."""
    from rich.table import Table

    kinds = list(backend_request_kinds())
    table = Table(title="which task runs on which model kind (— = not meaningful)", show_lines=True)
    table.add_column("task", style="bold")
    for k in kinds:
        table.add_column(k)
    for r in matrix_rows():
        table.add_row(r["task"], *(r["cells"][k] or "[dim]—[/dim]" for k in kinds))
    return table


if __name__ == "__main__":  # python -m genderscope.core.matrix  -> the README table
    print(matrix_markdown())
