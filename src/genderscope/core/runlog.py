"""The run log: typed, versioned ``run.json`` (how a run was made) and ``results.json`` (what it found).

Every command that measures something writes both files through :func:`write_run_log`, and
report, compare and export read them only through :func:`read_run_log`.  Folders written before
the schema had a version (no ``schema_version`` key) read as version 0: same fields, and
``run.json`` may be absent (bordia folders), in which case :func:`read_run_log` gives ``None``.

A command that is not :func:`~genderscope.core.engine.run_tasks` (here ``bordia score``) logs so::

    from genderscope.core.runlog import MetricEntry, ResultsFile, RunManifest, TaskManifest
    from genderscope.core.runlog import TaskResults, new_manifest, write_run_log

    manifest = new_manifest(command="genderscope bordia score ptb:valid", model=None, seed=0)
    manifest.tasks["bordia-score"] = TaskManifest(options={"window": 10}, datasets={"ptb/valid.txt": sha})
    results = ResultsFile(model="corpus:ptb:valid")
    results.tasks["bordia-score"] = TaskResults(
        metrics={"fixed.mu": MetricEntry(0.12, 0.10, 0.14)}, extra={"contexts": {...}})
    write_run_log(out_dir, manifest, results)  # run.json + results.json, atomically
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
import platform
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from genderscope.core.errors import DataError, UsageError

#: version of the run.json / results.json layout written by this genderscope
SCHEMA_VERSION = 1
#: versions this reader understands (0 = folders written before the schema carried a version)
READABLE_VERSIONS = (0, 1)

RUN_FILE = "run.json"
RESULTS_FILE = "results.json"


# ------------------------------------------------------------------------------------------- helpers
def _num(x: Any) -> Any:
    """JSON-safe number, as :class:`~genderscope.core.task.Metric` writes it: NaN/inf -> None, Python
    ints stay ints, other numbers (numpy scalars included) become floats, non-numbers are unchanged."""
    if x is None or isinstance(x, (bool, str)):
        return x
    try:
        f = float(x)
    except (TypeError, ValueError):
        return x
    if math.isnan(f) or math.isinf(f):
        return None
    return int(x) if isinstance(x, int) else f


def _need(cond: bool, source: str, what: str) -> None:
    if not cond:
        raise DataError(f"{source}: {what} (see the Outputs section of docs/architecture.md)")


def _version(data: Mapping[str, Any], source: str) -> int:
    v = data.get("schema_version", 0)
    if isinstance(v, bool) or not isinstance(v, int) or v not in READABLE_VERSIONS:
        raise DataError(
            f"{source}: unknown schema_version {v!r} (this genderscope reads "
            f"{', '.join(map(str, READABLE_VERSIONS))}); upgrade genderscope to read it"
        )
    return v


def _this_version() -> str:
    from genderscope import __version__

    return __version__


def _dict(x: Any, source: str, what: str) -> dict[str, Any]:
    if x is None:
        return {}
    _need(isinstance(x, dict), source, f"{what} must be an object, not {type(x).__name__}")
    return dict(x)


# -------------------------------------------------------------------------------------- results.json
@dataclass
class MetricEntry:
    """One number of results.json with its 95% interval (same units), or the reason it has none."""

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
            _need(data is None or isinstance(data, (int, float, str)), source, "a metric must be a number")
            return cls(data)
        _need("value" in data, source, "a metric needs a 'value'")
        return cls(data.get("value"), data.get("ci_low"), data.get("ci_high"), data.get("no_ci"))

    @classmethod
    def of(cls, metric: Any) -> MetricEntry:
        """From any object with ``value``/``ci_low``/``ci_high`` (e.g. core.task.Metric); values are
        kept as they are (cleaned when written), so the JSON is what ``Metric.to_json`` writes."""
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
    metric names to show first (empty: the report picks).
    """

    metrics: dict[str, MetricEntry] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    headline: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        from genderscope.core.jsonutil import clean_json

        out: dict[str, Any] = {"metrics": {k: m.to_json() for k, m in self.metrics.items()}}
        out.update(clean_json({k: v for k, v in self.extra.items() if k not in ("metrics", "headline")}))
        if self.headline:
            out["headline"] = list(self.headline)
        return out

    @classmethod
    def from_json(cls, data: Any, source: str = "task") -> TaskResults:
        block = _dict(data, source, "a task entry")
        metrics = _dict(block.pop("metrics", None), source, "'metrics'")
        headline = block.pop("headline", None) or []
        _need(isinstance(headline, list), source, "'headline' must be a list of metric names")
        return cls(
            {n: MetricEntry.from_json(m, f"{source}: metric {n!r}") for n, m in metrics.items()},
            block,
            [str(h) for h in headline],
        )

    @classmethod
    def of(cls, result: Any) -> TaskResults:
        """From a :class:`~genderscope.core.task.TaskResult` (its per-attempt records are not kept here)."""
        return cls(
            {k: MetricEntry.of(m) for k, m in result.metrics.items()},
            dict(result.extra),
            list(result.headline),
        )

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
    genderscope_version: str = field(default_factory=lambda: _this_version())
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
        _need(isinstance(data, dict), source, "expected an object {'model', 'tasks': {...}}")
        version = _version(data, source)
        tasks = data.get("tasks")
        _need(isinstance(tasks, dict), source, "expected {'model', 'tasks': {...}}")
        model = data.get("model")
        if model is not None and not isinstance(model, str):
            model = json.dumps(model)
        return cls(
            model or "",
            {n: TaskResults.from_json(b, f"{source}: task {n!r}") for n, b in tasks.items()},
            str(data.get("genderscope_version") or ""),
            version,
        )


# ------------------------------------------------------------------------------------------ run.json
@dataclass
class ModelInfo:
    """The model of a run: ``spec`` (``kind:target``) plus what the backend describes (never secrets).

    ``details``: further keys of the backend's ``describe()`` (e.g. dtype, device, revision).
    """

    spec: str
    kind: str = ""
    target: str = ""
    options: dict[str, Any] = field(default_factory=dict)
    fingerprint: str | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "spec": self.spec,
            "kind": self.kind,
            "target": self.target,
            "options": self.options,
            "fingerprint": self.fingerprint,
            **self.details,
        }

    @classmethod
    def from_json(cls, data: Any, source: str = "model") -> ModelInfo:
        d = _dict(data, source, "'model'")
        return cls(
            str(d.pop("spec", "") or ""),
            str(d.pop("kind", "") or ""),
            str(d.pop("target", "") or ""),
            _dict(d.pop("options", None), source, "'model.options'"),
            d.pop("fingerprint", None),
            d,
        )

    @classmethod
    def describe(cls, spec: str, description: Mapping[str, Any]) -> ModelInfo:
        """From a backend's ``describe()`` dict."""
        return cls.from_json({"spec": spec, **description})


@dataclass
class TaskManifest:
    """How one task ran: its resolved options (never ``auto``), dataset sha256 by logical name,
    attempt counts (attempts, cache_hits, requests, errors, skipped, seconds) and the measurement
    (e.g. the request kinds its attempts used)."""

    options: dict[str, Any] = field(default_factory=dict)
    datasets: dict[str, str] = field(default_factory=dict)
    counts: dict[str, Any] = field(default_factory=dict)
    measurement: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out = {"options": self.options, "datasets": self.datasets, "counts": self.counts}
        if self.measurement:
            out["measurement"] = self.measurement
        return out

    @classmethod
    def from_json(cls, data: Any, source: str = "task") -> TaskManifest:
        d = _dict(data, source, "a task entry")
        return cls(
            _dict(d.get("options"), source, "'options'"),
            {str(k): str(v) for k, v in _dict(d.get("datasets"), source, "'datasets'").items()},
            _dict(d.get("counts"), source, "'counts'"),
            _dict(d.get("measurement"), source, "'measurement'"),
        )


@dataclass
class RunManifest:
    """run.json: everything needed to repeat the run.  ``model`` is None for corpus-only commands."""

    created: str
    genderscope_version: str
    command: str | None = None
    versions: dict[str, str] = field(default_factory=dict)
    model: ModelInfo | None = None
    backend_stats: dict[str, Any] = field(default_factory=dict)
    seed: int | None = None
    trials: int | None = None
    limit: int | None = None
    use_cache: bool | None = None
    generation: dict[str, Any] = field(default_factory=dict)
    tasks: dict[str, TaskManifest] = field(default_factory=dict)
    seconds: float | None = None
    schema_version: int = SCHEMA_VERSION

    def to_json(self) -> dict[str, Any]:
        from genderscope.core.jsonutil import clean_json

        return clean_json(
            {
                "schema_version": SCHEMA_VERSION,
                "genderscope_version": self.genderscope_version,
                "created": self.created,
                "command": self.command,
                "versions": self.versions,
                "model": self.model.to_json() if self.model else None,
                "backend_stats": self.backend_stats,
                "seed": self.seed,
                "trials": self.trials,
                "limit": self.limit,
                "use_cache": self.use_cache,
                "generation": self.generation,
                "tasks": {n: t.to_json() for n, t in self.tasks.items()},
                "seconds": self.seconds,
            }
        )

    @classmethod
    def from_json(cls, data: Any, source: str = RUN_FILE) -> RunManifest:
        _need(isinstance(data, dict), source, "expected an object")
        version = _version(data, source)
        tasks = _dict(data.get("tasks"), source, "'tasks'")
        for key in ("seed", "trials", "limit"):
            v = data.get(key)
            _need(
                v is None or (isinstance(v, int) and not isinstance(v, bool)),
                source,
                f"'{key}' must be an integer",
            )
        return cls(
            created=str(data.get("created") or ""),
            genderscope_version=str(data.get("genderscope_version") or ""),
            command=data.get("command"),
            versions={str(k): str(v) for k, v in _dict(data.get("versions"), source, "'versions'").items()},
            model=ModelInfo.from_json(data["model"], f"{source}: model") if data.get("model") else None,
            backend_stats=_dict(data.get("backend_stats"), source, "'backend_stats'"),
            seed=data.get("seed"),
            trials=data.get("trials"),
            limit=data.get("limit"),
            use_cache=data.get("use_cache"),
            generation=_dict(data.get("generation"), source, "'generation'"),
            tasks={n: TaskManifest.from_json(t, f"{source}: task {n!r}") for n, t in tasks.items()},
            seconds=data.get("seconds"),
            schema_version=version,
        )


def package_versions() -> dict[str, str]:
    """Python and the installed versions of the packages that can change a number."""
    from importlib import metadata

    out = {"python": platform.python_version()}
    for pkg in ("numpy", "scipy", "pandas", "aiohttp", "torch", "transformers"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            pass
    return out


def command_line() -> str | None:
    """The genderscope command line of this process (None when called from Python)."""
    return " ".join(sys.argv) if sys.argv and "genderscope" in sys.argv[0] else None


def new_manifest(
    *, model: ModelInfo | None = None, command: str | None = None, started: float | None = None, **fields: Any
) -> RunManifest:
    """A manifest stamped now (or at ``started``, a ``time.time()``) with this genderscope's and the
    packages' versions; ``command`` defaults to this process's command line; ``fields`` set the rest."""
    when = _dt.datetime.fromtimestamp(started) if started is not None else _dt.datetime.now()
    return RunManifest(
        created=when.isoformat(timespec="seconds"),
        genderscope_version=_this_version(),
        command=command if command is not None else command_line(),
        versions=package_versions(),
        model=model,
        **fields,
    )


# ------------------------------------------------------------------------------------ reading/writing
def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def write_run_log(out_dir: str | Path, manifest: RunManifest | None, results: ResultsFile) -> None:
    """Write ``results.json`` and (unless ``manifest`` is None) ``run.json`` into ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    _atomic_write(out / RESULTS_FILE, json.dumps(results.to_json(), indent=1, ensure_ascii=False))
    if manifest is not None:
        _atomic_write(out / RUN_FILE, json.dumps(manifest.to_json(), indent=1, ensure_ascii=False))


def _load_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}:{exc.lineno}: invalid JSON ({exc.msg})") from None
    except UnicodeDecodeError:
        raise DataError(f"{path}: not UTF-8 text") from None


def run_folder(path: str | Path) -> Path:
    """The run folder of ``path`` (a folder, or its results.json/run.json); clear error if it is not one."""
    p = Path(path)
    if p.is_file() and p.name in (RESULTS_FILE, RUN_FILE):
        p = p.parent
    if not p.exists():
        raise UsageError(f"{p}: no such run folder")
    if not (p / RESULTS_FILE).is_file():
        raise UsageError(
            f"{p}: not a run folder (no results.json); pass the --out folder of "
            "`genderscope run` or of a bordia command"
        )
    return p


def read_manifest(path: str | Path) -> RunManifest | None:
    """run.json of a run folder, or None when the folder has none (folders of old bordia commands)."""
    f = run_folder(path) / RUN_FILE
    return RunManifest.from_json(_load_json(f), str(f)) if f.is_file() else None


def read_results(path: str | Path) -> ResultsFile:
    """results.json of a run folder."""
    f = run_folder(path) / RESULTS_FILE
    return ResultsFile.from_json(_load_json(f), str(f))


def read_run_log(out_dir: str | Path) -> tuple[RunManifest | None, ResultsFile]:
    """(run.json, results.json) of a run folder; run.json is None when absent (old bordia folders)."""
    return read_manifest(out_dir), read_results(out_dir)
