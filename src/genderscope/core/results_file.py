"""results.json, typed: :class:`ResultsFile` -> :class:`TaskResults` -> :class:`MetricEntry`, and the
validation helpers run.json shares (see :mod:`genderscope.core.runlog`, which re-exports these names)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Mapping

from genderscope.common.errors import DataError
from genderscope.core.evidence import Evidence, ReportFacts
from genderscope.core.metrics import MetricEntry, need

#: version of the run.json / results.json layout written by this genderscope (2: run status, source
#: revision, backend facts and counts; per task its version, status, data pins and engine counts;
#: docs/results.schema.json)
SCHEMA_VERSION = 2
#: versions this reader understands (0 = folders written before the schema carried a version)
READABLE_VERSIONS = (0, 1, 2)

#: a run's or a task's status: every attempt answered / some not (errors, skipped) / none answered
COMPLETE, PARTIAL, FAILED = "complete", "partial", "failed"
STATUSES = (COMPLETE, PARTIAL, FAILED)

RESULTS_FILE = "results.json"
#: a task block's entry holding the resolved :class:`~genderscope.core.evidence.ReportFacts`
FACTS_KEY = "report_facts"
#: a task block's entries written by the engine (schema version 2), never part of the task's ``extra``
RUN_KEYS = ("task_version", "task_status", "data_pins", "engine_counts")
_OWN_KEYS = ("metrics", "headline", FACTS_KEY, *RUN_KEYS)


# ------------------------------------------------------------------------------------------- helpers
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


@lru_cache(maxsize=1)
def source_revision() -> str | None:
    """The git commit of the genderscope source running now when it is a checkout (``src/genderscope``
    of a repository with its own pyproject.toml), ``+dirty`` when ``src/`` has uncommitted changes; None
    for an installed package or when git cannot tell."""
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    if not ((root / ".git").exists() and (root / "pyproject.toml").is_file() and (root / "src").is_dir()):
        return None
    git = ["git", "-C", str(root)]
    try:
        rev = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10)
        dirty = subprocess.run(
            [*git, "status", "--porcelain", "--untracked-files=no", "--", "src"],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if rev.returncode != 0 or not rev.stdout.strip():
        return None
    return rev.stdout.strip() + ("+dirty" if dirty.returncode == 0 and dirty.stdout.strip() else "")


def status_of(attempts: int, unanswered: int) -> str:
    """A task's status from its attempt count and how many of them got no answer (errors, skipped)."""
    if unanswered <= 0:
        return COMPLETE
    return FAILED if unanswered >= attempts else PARTIAL


def run_status(task_statuses: list[str], left_out: bool = False) -> str:
    """A run's status: complete when every task is (and no task of a suite was left out), failed when every
    task failed, else partial."""
    if task_statuses and all(s == FAILED for s in task_statuses):
        return FAILED
    return COMPLETE if all(s == COMPLETE for s in task_statuses) and not left_out else PARTIAL


def optional_str(data: Mapping[str, Any], key: str, source: str) -> str | None:
    v = data.get(key)
    need(v is None or isinstance(v, str), source, f"'{key}' must be a string")
    return v


def optional_status(data: Mapping[str, Any], key: str, source: str) -> str | None:
    v = optional_str(data, key, source)
    need(v is None or v in STATUSES, source, f"'{key}' must be one of {', '.join(STATUSES)}")
    return v


def as_object(x: Any, source: str, what: str) -> dict[str, Any]:
    if x is None:
        return {}
    need(isinstance(x, dict), source, f"{what} must be an object, not {type(x).__name__}")
    return dict(x)


# -------------------------------------------------------------------------------------- results.json
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
    #: the engine's entries (None / empty in files before schema version 2 and for command entries):
    #: the task's ``version``, its status, dataset -> sha256 of the files used, the engine's counts
    version: str | None = None
    status: str | None = None
    data_pins: dict[str, str] = field(default_factory=dict)
    engine_counts: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        from genderscope.core.jsonutil import clean_json

        out: dict[str, Any] = {"metrics": {k: m.to_json() for k, m in self.metrics.items()}}
        out.update(clean_json({k: v for k, v in self.extra.items() if k not in _OWN_KEYS}))
        if self.headline:
            out["headline"] = list(self.headline)
        if self.facts is not None:
            out[FACTS_KEY] = clean_json(self.facts.to_json())
        if self.version is not None:
            out["task_version"] = self.version
        if self.status is not None:
            out["task_status"] = self.status
        if self.version is not None or self.data_pins:
            out["data_pins"] = dict(self.data_pins)
        if self.engine_counts:
            out["engine_counts"] = clean_json(self.engine_counts)
        return out

    @classmethod
    def from_json(cls, data: Any, source: str = "task") -> TaskResults:
        block = as_object(data, source, "a task entry")
        metrics = as_object(block.pop("metrics", None), source, "'metrics'")
        headline = block.pop("headline", None) or []
        need(isinstance(headline, list), source, "'headline' must be a list of metric names")
        facts = block.pop(FACTS_KEY, None)
        need(facts is None or isinstance(facts, dict), source, f"'{FACTS_KEY}' must be an object")
        run = {k: block.pop(k) for k in RUN_KEYS if k in block}
        pins = as_object(run.get("data_pins"), source, "'data_pins'")
        return cls(
            {n: MetricEntry.from_json(m, f"{source}: metric {n!r}") for n, m in metrics.items()},
            block,
            [str(h) for h in headline],
            Evidence.from_json(facts),
            optional_str(run, "task_version", source),
            optional_status(run, "task_status", source),
            {str(k): str(v) for k, v in pins.items()},
            as_object(run.get("engine_counts"), source, "'engine_counts'"),
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
    #: complete / partial / failed (None: a file written before schema version 2)
    status: str | None = COMPLETE
    #: the git commit of the genderscope source that wrote it (None: an installed package, or unknown)
    source_revision: str | None = field(default_factory=lambda: source_revision())
    #: the model: spec, kind, target, options, fingerprint and what the backend describes (None: a
    #: command without a model, or a file before schema version 2)
    backend: dict[str, Any] | None = None
    #: the run's totals: tasks, attempts, requests, cache_hits, errors, skipped
    counts: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        from genderscope.core.jsonutil import clean_json

        return {
            "schema_version": SCHEMA_VERSION,
            "genderscope_version": self.genderscope_version,
            "source_revision": self.source_revision,
            "status": self.status,
            "model": self.model,
            "backend": clean_json(self.backend) if self.backend is not None else None,
            "counts": clean_json(self.counts),
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
        backend = data.get("backend")
        need(backend is None or isinstance(backend, dict), source, "'backend' must be an object")
        return cls(
            model or "",
            {n: TaskResults.from_json(b, f"{source}: task {n!r}") for n, b in tasks.items()},
            str(data.get("genderscope_version") or ""),
            version,
            optional_status(data, "status", source),
            optional_str(data, "source_revision", source),
            backend,
            as_object(data.get("counts"), source, "'counts'"),
        )
