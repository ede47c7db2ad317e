"""results.json, typed: :class:`ResultsFile` -> :class:`TaskResults` -> :class:`MetricEntry`, and the
validation helpers run.json shares (see :mod:`genderscope.core.runlog`, which re-exports these names)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, Mapping

from genderscope.core.errors import DataError
from genderscope.core.evidence import Evidence, ReportFacts
from genderscope.core.textfmt import snap_zero

#: version of the run.json / results.json layout written by this genderscope
SCHEMA_VERSION = 1
#: versions this reader understands (0 = folders written before the schema carried a version)
READABLE_VERSIONS = (0, 1)

RESULTS_FILE = "results.json"
#: a task block's entry holding the resolved :class:`~genderscope.core.evidence.ReportFacts`
FACTS_KEY = "report_facts"
_OWN_KEYS = ("metrics", "headline", FACTS_KEY)


# ------------------------------------------------------------------------------------------- helpers
def _num(x: Any) -> Any:
    """JSON-safe number, as :class:`MetricEntry` writes it: NaN/inf -> None, Python
    ints stay ints, other numbers (numpy scalars included) become floats (float noise around zero: 0.0,
    :func:`~genderscope.core.textfmt.snap_zero`), non-numbers are unchanged."""
    if x is None or isinstance(x, (bool, str)):
        return x
    try:
        f = float(x)
    except (TypeError, ValueError):
        return x
    if math.isnan(f) or math.isinf(f):
        return None
    return int(x) if isinstance(x, int) else snap_zero(f)


def need(cond: bool, source: str, what: str) -> None:
    if not cond:
        raise DataError(f"{source}: {what} (see the Outputs section of docs/architecture.md)")


def schema_version_of(data: Mapping[str, Any], source: str) -> int:
    v = data.get("schema_version", 0)
    if isinstance(v, bool) or not isinstance(v, int) or v not in READABLE_VERSIONS:
        raise DataError(
            f"{source}: unknown schema_version {v!r} (this genderscope reads "
            f"{', '.join(map(str, READABLE_VERSIONS))}); upgrade genderscope to read it"
        )
    return v


def this_version() -> str:
    from genderscope._version import __version__

    return __version__


def as_object(x: Any, source: str, what: str) -> dict[str, Any]:
    if x is None:
        return {}
    need(isinstance(x, dict), source, f"{what} must be an object, not {type(x).__name__}")
    return dict(x)


# -------------------------------------------------------------------------------------- results.json
@dataclass
class MetricEntry:
    """One number of results.json with its 95% interval (same units), or the reason it has none.

    The one metric type: tasks build it (``genderscope.core.task.Metric`` is this class), results.json
    stores it, the report reads it."""

    value: float | int | None
    ci_low: float | None = None
    ci_high: float | None = None
    no_ci: str | None = None

    @property
    def has_ci(self) -> bool:
        return self.ci_low is not None or self.ci_high is not None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"value": _num(self.value)}
        if self.has_ci:
            out["ci_low"] = _num(self.ci_low)
            out["ci_high"] = _num(self.ci_high)
        if self.no_ci is not None:
            out["no_ci"] = self.no_ci
        return out

    @classmethod
    def from_json(cls, data: Any, source: str = "metric") -> MetricEntry:
        """From ``{value, ci_low?, ci_high?, no_ci?}``; a bare number (old bordia files) is accepted."""
        if not isinstance(data, dict):
            need(data is None or isinstance(data, (int, float, str)), source, "a metric must be a number")
            return cls(data)
        need("value" in data, source, "a metric needs a 'value'")
        return cls(data.get("value"), data.get("ci_low"), data.get("ci_high"), data.get("no_ci"))

    @classmethod
    def of(cls, metric: Any) -> MetricEntry:
        """A copy of any object with ``value``/``ci_low``/``ci_high``/``no_ci``; values are kept as they are
        (cleaned when written)."""
        return cls(
            metric.value,
            getattr(metric, "ci_low", None),
            getattr(metric, "ci_high", None),
            getattr(metric, "no_ci", None),
        )


@dataclass
class TaskResults:
    """A task's block of results.json.

    ``metrics``: name -> :class:`MetricEntry`; ``extra``: the task's further entries (tables as lists of
    row dicts, parameters, marks), written next to ``metrics`` in the same block; ``headline``: the
    metric names to show first (empty: the report picks); ``facts``: what the report's verdict needs
    (the task's :class:`~genderscope.core.evidence.ReportFacts` resolved; written as ``report_facts``;
    None in files written before that entry existed).
    """

    metrics: dict[str, MetricEntry] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    headline: list[str] = field(default_factory=list)
    facts: Evidence | None = None

    def to_json(self) -> dict[str, Any]:
        from genderscope.core.jsonutil import clean_json

        out: dict[str, Any] = {"metrics": {k: m.to_json() for k, m in self.metrics.items()}}
        out.update(clean_json({k: v for k, v in self.extra.items() if k not in _OWN_KEYS}))
        if self.headline:
            out["headline"] = list(self.headline)
        if self.facts is not None:
            out[FACTS_KEY] = clean_json(self.facts.to_json())
        return out

    @classmethod
    def from_json(cls, data: Any, source: str = "task") -> TaskResults:
        block = as_object(data, source, "a task entry")
        metrics = as_object(block.pop("metrics", None), source, "'metrics'")
        headline = block.pop("headline", None) or []
        need(isinstance(headline, list), source, "'headline' must be a list of metric names")
        facts = block.pop(FACTS_KEY, None)
        need(facts is None or isinstance(facts, dict), source, f"'{FACTS_KEY}' must be an object")
        return cls(
            {n: MetricEntry.from_json(m, f"{source}: metric {n!r}") for n, m in metrics.items()},
            block,
            [str(h) for h in headline],
            Evidence.from_json(facts),
        )

    @classmethod
    def of(cls, result: Any, declared: ReportFacts | None = None) -> TaskResults:
        """From a :class:`~genderscope.core.task.TaskResult` (its per-attempt records are not kept here);
        ``declared``: the task's report facts, resolved against the result into ``facts``."""
        metrics = {k: MetricEntry.of(m) for k, m in result.metrics.items()}
        extra = dict(result.extra)
        facts = declared.resolve(metrics, extra) if declared is not None else None
        return cls(metrics, extra, list(result.headline), facts)

    def evidence(self, declared: ReportFacts) -> Evidence:
        """The facts written with the block, else (files written before them) ``declared`` resolved."""
        return self.facts if self.facts is not None else declared.resolve(self.metrics, self.extra)

    def headline_names(self, limit: int = 8) -> list[str]:
        """``headline`` names that exist, else metrics with an interval first, at most ``limit``."""
        names = [n for n in self.headline if n in self.metrics]
        if names:
            return names
        with_ci = [n for n, m in self.metrics.items() if m.ci_low is not None]
        return (with_ci + [n for n in self.metrics if n not in with_ci])[:limit]

    def tables(self, depth: int = 2) -> dict[str, list[dict[str, Any]]]:
        """Every list of row dicts in ``extra`` (nested dicts searched ``depth`` levels), by dotted key."""
        return _list_tables(self.extra, "", depth)


def _list_tables(entry: Mapping[str, Any], prefix: str, depth: int) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for key, val in entry.items():
        name = f"{prefix}{key}"
        if isinstance(val, list) and val and all(isinstance(v, dict) for v in val):
            out[name] = val
        elif isinstance(val, dict) and depth > 1:
            out.update(_list_tables(val, f"{name}.", depth - 1))
    return out


@dataclass
class ResultsFile:
    """results.json: the model spec (or what was scored, e.g. ``corpus:ptb:valid``) and one block per task."""

    model: str
    tasks: dict[str, TaskResults] = field(default_factory=dict)
    genderscope_version: str = field(default_factory=lambda: this_version())
    schema_version: int = SCHEMA_VERSION

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "genderscope_version": self.genderscope_version,
            "model": self.model,
            "tasks": {n: t.to_json() for n, t in self.tasks.items()},
        }

    @classmethod
    def from_json(cls, data: Any, source: str = RESULTS_FILE) -> ResultsFile:
        need(isinstance(data, dict), source, "expected an object {'model', 'tasks': {...}}")
        version = schema_version_of(data, source)
        tasks = data.get("tasks")
        need(isinstance(tasks, dict), source, "expected {'model', 'tasks': {...}}")
        model = data.get("model")
        if model is not None and not isinstance(model, str):
            model = json.dumps(model)
        return cls(
            model or "",
            {n: TaskResults.from_json(b, f"{source}: task {n!r}") for n, b in tasks.items()},
            str(data.get("genderscope_version") or ""),
            version,
        )
