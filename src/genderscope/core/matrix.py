"""Which task runs on which model kind, derived from what tasks and backends declare.

A task declares ``measurements`` (name -> :class:`~genderscope.core.task.Measurement`: the primitive
request kinds it needs and a description, in order of preference); a backend declares
``request_kinds``.  A task runs on a model kind when the backend answers every kind of one of its
measurements, and it makes the first such measurement in the task's order.  :func:`require_kinds` is
the check of ``Task.check_model``: a combination that makes no sense fails before any model loads,
naming the kinds that work.
"""

from __future__ import annotations

from typing import Any, Iterable

from genderscope.core import lookup
from genderscope.common.errors import UsageError

from genderscope.core.metrics import Measurement


#: why a model of a kind that answers chat may not (said by `run` and by suites that leave a task out)
KIND_ONLY_SOME_MODELS = "chat needs a model with a chat template"

def task_measurements(task_cls: Any) -> dict[str, Measurement]:
    """Measurement name -> :class:`Measurement` (primitive kinds needed, text) of a task class."""
    return dict(getattr(task_cls, "measurements", {}) or {})


def backend_request_kinds() -> dict[str, frozenset[str] | None]:
    """Model kind -> request kinds it answers (None if its module cannot be imported here)."""
    out: dict[str, frozenset[str] | None] = {}
    for kind in lookup.BACKENDS:
        try:
            out[kind] = frozenset(lookup.backend_kind_class(kind).request_kinds)
        except Exception:  # noqa: BLE001 - a missing optional dependency must not break the table
            out[kind] = None
    return out


def chosen_measurement(
    task_cls: Any, answered: Iterable[str], allowed: Iterable[str] | None = None
) -> str | None:
    """The first measurement (in the task's order, among ``allowed``) whose kinds ``answered`` covers."""
    got = set(answered)
    names = list(allowed) if allowed is not None else list(task_measurements(task_cls))
    meas = task_measurements(task_cls)
    return next((n for n in names if n in meas and meas[n].kinds <= got), None)


#: model kinds that answer whatever a recorded run contains, and the null model
_NULL_KINDS = ("replay", "random")


def working_model_kinds(task_cls: Any, allowed: Iterable[str] | None = None) -> list[str]:
    """Every model kind on which the task makes one of the ``allowed`` measurements (null models too)."""
    out = []
    for kind, answered in backend_request_kinds().items():
        if answered is not None and chosen_measurement(task_cls, answered, allowed) is not None:
            out.append(kind)
    return out


def require_kinds(task: Any, allowed: Iterable[str] | None = None, hint: str = "") -> str:
    """Return the measurement ``task`` makes with the run's model, or raise a clear UsageError.

    ``allowed`` restricts the acceptable measurements (default: all the task declares).  The error
    names the model kind, what it answers, what the task needs and every model kind that works.
    """
    cls = type(task)
    names = list(allowed) if allowed is not None else list(task_measurements(cls))
    got = task.ctx.request_kinds
    hit = chosen_measurement(cls, got, names)
    if hit is not None:
        return hit
    meas = task_measurements(cls)
    works = working_model_kinds(cls, names)
    model = task.ctx.model_kind or "this model"
    answers = ", ".join(sorted(got)) or "nothing"
    needs = " or ".join("+".join(sorted(meas[n].kinds)) for n in names if n in meas)
    if model in works:  # the kind could, this model cannot (an hf-causal model without a chat template)
        msg = (
            f"task {cls.name} cannot run on this {model} model: it answers {answers}, but {cls.name} "
            f"needs {needs} ({KIND_ONLY_SOME_MODELS})"
        )
    else:
        msg = (
            f"task {cls.name} cannot run on {model} models: they answer {answers}, but {cls.name} needs "
            f"{needs}; model kinds that work: {', '.join(works) or 'none installed'}"
        )
    raise UsageError(msg + (f" ({hint})" if hint else ""))


def matrix_rows() -> list[dict[str, Any]]:
    """One row per task: {task, cells: {model kind: measurement text, '' for kind w/o text, None: no}}."""
    kinds = backend_request_kinds()
    rows = []
    for name, cls in lookup.task_classes():
        meas = task_measurements(cls)
        cells: dict[str, Any] = {}
        for kind, answered in kinds.items():
            if answered is None:
                cells[kind] = "(not installed)"
                continue
            k = chosen_measurement(cls, answered)
            if k is None:
                cells[kind] = None
            elif kind == "replay":
                cells[kind] = "recorded answers"
            elif kind == "random":
                cells[kind] = "null model"
            else:
                cells[kind] = meas[k].text
        rows.append({"task": name, "cells": cells})
    return rows


def matrix_markdown() -> str:
    """The matrix as a Markdown table (for docs/usage.md)."""
    rows = matrix_rows()
    kinds = list(backend_request_kinds())
    lines = ["| task | " + " | ".join(f"`{k}`" for k in kinds) + " |", "|---" * (len(kinds) + 1) + "|"]
    for r in rows:
        lines.append(f"| `{r['task']}` | " + " | ".join(r["cells"][k] or "—" for k in kinds) + " |")
    return "\n".join(lines)


def _wide_table(kinds: list[str], rows: list[dict[str, Any]]) -> Any:
    """Tasks as rows, model kinds as columns (needs a wide terminal)."""
    from rich.table import Table

    table = Table(title="which task runs on which model kind (— = not meaningful)", show_lines=True)
    table.add_column("task", style="bold", no_wrap=True)
    for k in kinds:
        table.add_column(k, overflow="fold", min_width=len(k))
    for r in rows:
        table.add_row(r["task"], *(r["cells"][k] or "[dim]—[/dim]" for k in kinds))
    return table


def _long_table(kinds: list[str], rows: list[dict[str, Any]]) -> Any:
    """One block per task: the model kinds that run it, how each measures, and the kinds that do not
    (readable in 80 columns)."""
    from rich.table import Table

    table = Table(title="which task runs on which model kind")
    table.add_column("task", style="bold", no_wrap=True)
    table.add_column("model kind", no_wrap=True)
    table.add_column("how it measures", overflow="fold")
    for r in rows:
        works = [k for k in kinds if r["cells"][k]]
        not_meaningful = [k for k in kinds if not r["cells"][k]]
        for i, k in enumerate(works):
            table.add_row(r["task"] if i == 0 else "", k, r["cells"][k])
        if not_meaningful:  # the kinds in the model-kind column, one per line; the verdict beside them
            table.add_row(
                r["task"] if not works else "",
                "[dim]" + "\n".join(not_meaningful) + "[/dim]",
                "[dim]— not meaningful[/dim]",
            )
        table.add_section()
    return table


def matrix_table(width: int | None = None) -> Any:
    """The matrix as a rich table for ``genderscope tasks --matrix``: model kinds as columns when that
    fits in ``width`` columns without breaking a word (None: always), else one block per task."""
    kinds = list(backend_request_kinds())
    rows = matrix_rows()
    if width is None or _unbroken_width(kinds, rows) <= width:
        return _wide_table(kinds, rows)
    return _long_table(kinds, rows)


def _unbroken_width(kinds: list[str], rows: list[dict[str, Any]]) -> int:
    """Columns the wide table needs so that no word breaks: per column its longest word (whole task
    names) plus padding and borders (3 per column, 1 for the last border)."""
    columns = [max(len(r["task"]) for r in rows)]
    for k in kinds:
        words = [w for r in rows for w in str(r["cells"][k] or "—").split()]
        columns.append(max([len(k), *map(len, words)]))
    return sum(columns) + 3 * len(columns) + 1


def kinds_markdown() -> str:
    """The table of request kinds in docs/architecture.md, from :data:`genderscope.core.primitives.KINDS`
    and the backends' ``request_kinds`` (the null and replay models, which answer every kind, left out)."""
    from genderscope.core.primitives import KINDS

    answered = {k: v for k, v in backend_request_kinds().items() if k not in _NULL_KINDS}
    lines = ["| kind | payload | response | answered by |", "|---|---|---|---|"]
    for name, spec in KINDS.items():
        by = ", ".join(f"`{b}`" for b, kinds in answered.items() if kinds is not None and name in kinds)
        lines.append(f"| `{name}` | {spec.payload_doc} | {spec.response_doc} | {by or 'none'} |")
    return "\n".join(lines)


if __name__ == "__main__":  # python -m genderscope.core.matrix [kinds] -> the table of docs/usage.md
    import sys

    print(kinds_markdown() if sys.argv[1:] == ["kinds"] else matrix_markdown())
