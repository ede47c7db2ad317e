"""Suites: a name that stands for several tasks and their options (``genderscope run all``).

A suite is data, one entry of :data:`genderscope.core.lookup.SUITES`: ``{"description": ..., "tasks":
[task names] or "*" (every registered task), "options": {option: value}}``.  Running a suite runs the
tasks of its list that the model kind can answer (:func:`genderscope.core.matrix.chosen_measurement`) and
names the others with the reason; the suite's options are defaults for the tasks that have them (a value
given on the command line wins).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from genderscope.core import lookup
from genderscope.common.errors import UsageError
from genderscope.common.packages import missing_packages


@dataclass(frozen=True)
class Suite:
    """One entry of :data:`genderscope.core.lookup.SUITES`, typed."""

    name: str
    description: str
    tasks: tuple[str, ...]
    options: Mapping[str, Any] = field(default_factory=dict)


def suite(name: str) -> Suite:
    """The suite registered as ``name`` ("*" expanded to every task)."""
    entry = lookup.SUITES[name]
    names = entry.get("tasks", "*")
    tasks = tuple(n for n, _ in lookup.task_classes()) if names == "*" else tuple(names)
    return Suite(name, str(entry.get("description", "")), tasks, dict(entry.get("options") or {}))


def all_suites() -> list[Suite]:
    return [suite(n) for n in lookup.SUITES]


@dataclass
class Expansion:
    """Task names to run, the suites' option defaults for them, and the suites' tasks left out (why)."""

    tasks: list[str]
    options: dict[str, Any]
    left_out: dict[str, str] = field(default_factory=dict)
    #: the tasks that came from a suite, not named on their own (a replay without answers for one of
    #: them leaves it out instead of failing the run)
    from_suites: set[str] = field(default_factory=set)


def _option_names(task: str) -> set[str]:
    return {f.name for f in dataclasses.fields(lookup.task_class(task).Options)}


def task_missing_packages(task_cls: Any) -> str | None:
    """Why a suite leaves ``task_cls`` out when an optional package it declares (``needs_packages``:
    (module, extra) pairs) is not installed; None when all are. Named on its own, the task says so itself."""
    return missing_packages(getattr(task_cls, "needs_packages", ()))


def expand(
    names: Sequence[str],
    request_kinds: frozenset[str],
    model_kind: str,
    declared: frozenset[str] | None = None,
) -> Expansion:
    """Replace suite names in ``names`` by their tasks that a model answering ``request_kinds`` can run;
    ``declared``: the kinds its backend answers for other models (a task it could run there is left out
    because of this model, and the reason says so)."""
    from genderscope.core.matrix import KIND_ONLY_SOME_MODELS, chosen_measurement

    def why_not(task_cls: Any) -> str:
        if declared and chosen_measurement(task_cls, declared):
            lacking = sorted(declared - request_kinds)
            return (
                f"this {model_kind} model does not answer {', '.join(lacking)} requests "
                f"({KIND_ONLY_SOME_MODELS})"
            )
        return f"not meaningful on {model_kind} models (see `genderscope tasks --matrix`)"

    tasks: list[str] = []
    options: dict[str, Any] = {}
    left_out: dict[str, str] = {}
    named = {n for n in names if not lookup.is_suite(n)}
    for name in names:
        if name in named:
            if name not in tasks:
                tasks.append(name)
            continue
        s = suite(name)
        runnable = [t for t in s.tasks if chosen_measurement(lookup.task_class(t), request_kinds)]
        for t in s.tasks:
            if t not in runnable:
                left_out[t] = why_not(lookup.task_class(t))
        for t in list(runnable):
            missing = task_missing_packages(lookup.task_class(t))
            if missing:
                runnable.remove(t)
                left_out[t] = missing
        if not runnable:
            reasons = sorted({left_out[t] for t in s.tasks if t in left_out})
            why = f" ({reasons[0]})" if len(reasons) == 1 else ""
            raise UsageError(f"suite {name!r}: none of its tasks runs on {model_kind} models{why}")
        tasks += [t for t in runnable if t not in tasks]
        for key, value in s.options.items():
            if any(key.replace("-", "_") in _option_names(t) for t in runnable):
                options.setdefault(key, value)
    left = {t: why for t, why in left_out.items() if t not in tasks}
    return Expansion(tasks, options, left, set(tasks) - named)
