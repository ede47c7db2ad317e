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
import os
import platform
import shlex
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping

from genderscope.common.errors import DataError, UsageError
from genderscope.core.results_file import (
    COMPLETE,
    RESULTS_FILE,
    SCHEMA_VERSION,
    ResultsFile,
    as_object,
    optional_status,
    optional_str,
    schema_version_of,
    source_revision,
    this_version,
)
from genderscope.core.metrics import need
from genderscope.core.textlines import json_lines

__all__ = [
    "COMPLETE",
    "source_revision",
    "ATTEMPTS_FILE",
    "ATTEMPTS_SCHEMA_VERSION",
    "ATTEMPT_ENGINE_KEYS",
    "RESULTS_FILE",
    "RUN_FILE",
    "SCHEMA_VERSION",
    "ModelInfo",
    "ResultsFile",
    "RunManifest",
    "TaskManifest",
    "new_manifest",
    "read_manifest",
    "read_results",
    "read_run_log",
    "run_folder",
    "write_run_log",
]

RUN_FILE = "run.json"
ATTEMPTS_FILE = "attempts.jsonl"
#: layout of attempts.jsonl written by this genderscope, recorded in run.json as ``attempts_schema_version``.
#: 1 (no key in run.json): task, item_id, trial, prompt, response, cache_hit, error, skipped + the task's
#: fields; 2: also ``request_kind`` and ``request_sha256`` (sha256 hex of the canonical request).
ATTEMPTS_SCHEMA_VERSION = 2
#: the engine's fields of an attempts.jsonl line (everything else is the task's)
ATTEMPT_ENGINE_KEYS = (
    "task",
    "item_id",
    "trial",
    "prompt",
    "response",
    "cache_hit",
    "request_kind",
    "request_sha256",
    "error",
    "skipped",
)


# ------------------------------------------------------------------------------------------ run.json
#: backend options and facts about transport, not about the answers (left out of results.json)
TRANSPORT_FACTS = frozenset({
    "base_url", "concurrency", "timeout", "max_retries", "backoff_base", "backoff_max", "pause_after",
    "pause_seconds", "api_key_env", "api_key_set", "batch", "batch_max_requests", "batch_max_bytes",
    "batch_poll", "batch_retries", "batch_window", "servers",
})  # fmt: skip


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
        """The fields, ``details`` merged in at the top level."""
        out = asdict(self)
        details = out.pop("details")
        return {**out, **details}

    def answer_facts(self) -> dict[str, Any]:
        """:meth:`to_json` without how the answers travelled (server URLs, concurrency, retries, batch
        transport): results.json states what answered, so a run moved to another fleet writes the
        same file."""
        out = {k: v for k, v in self.to_json().items() if k not in TRANSPORT_FACTS}
        out["options"] = {k: v for k, v in self.options.items() if k not in TRANSPORT_FACTS}
        return out

    @classmethod
    def from_json(cls, data: Any, source: str = "model") -> ModelInfo:
        d = as_object(data, source, "'model'")
        return cls(
            str(d.pop("spec", "") or ""),
            str(d.pop("kind", "") or ""),
            str(d.pop("target", "") or ""),
            as_object(d.pop("options", None), source, "'model.options'"),
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
    attempt counts (attempts, cache_hits, requests, errors, skipped, seconds), the measurement
    (e.g. the request kinds its attempts used) and the licence of each dataset (``dataset_licences``,
    written when there are datasets; runs before it had none)."""

    options: dict[str, Any] = field(default_factory=dict)
    datasets: dict[str, str] = field(default_factory=dict)
    counts: dict[str, Any] = field(default_factory=dict)
    measurement: dict[str, Any] = field(default_factory=dict)
    licences: dict[str, str] = field(default_factory=dict)
    #: the task's ``version`` and status (None: written before schema version 2, or a command's entry)
    version: str | None = None
    status: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"options": self.options, "datasets": self.datasets, "counts": self.counts}
        if self.version is not None:
            out["task_version"] = self.version
        if self.status is not None:
            out["task_status"] = self.status
        if self.licences:
            out["dataset_licences"] = self.licences
        if self.measurement:
            out["measurement"] = self.measurement
        return out

    @classmethod
    def from_json(cls, data: Any, source: str = "task") -> TaskManifest:
        d = as_object(data, source, "a task entry")
        return cls(
            as_object(d.get("options"), source, "'options'"),
            {str(k): str(v) for k, v in as_object(d.get("datasets"), source, "'datasets'").items()},
            as_object(d.get("counts"), source, "'counts'"),
            as_object(d.get("measurement"), source, "'measurement'"),
            {
                str(k): str(v)
                for k, v in as_object(d.get("dataset_licences"), source, "'dataset_licences'").items()
            },
            optional_str(d, "task_version", source),
            optional_status(d, "task_status", source),
        )


@dataclass
class RunManifest:
    """run.json: everything needed to repeat the run.  ``model`` is None for corpus-only commands.

    ``label``: the short name the user gave the run (``run --label``), shown by reports instead of the model
    spec; optional (None: not written, and reports derive a label themselves).
    """

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
    label: str | None = None
    #: layout of the folder's attempts.jsonl (None: not written, or written before the layout had a version)
    attempts_schema_version: int | None = None
    #: complete / partial / failed, the source's git commit, the run's totals (schema version 2; None / {}
    #: in older files)
    status: str | None = COMPLETE
    source_revision: str | None = field(default_factory=lambda: source_revision())
    counts: dict[str, Any] = field(default_factory=dict)
    #: the run's :class:`~genderscope.core.runspec.RunSpec` as JSON (``run --spec`` repeats it; None: not a
    #: ``genderscope run``, or written before run specs)
    spec: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        from genderscope.core.jsonutil import clean_json

        optional: dict[str, Any] = {"label": self.label} if self.label else {}
        if self.spec is not None:
            optional["spec"] = self.spec
        if self.attempts_schema_version is not None:
            optional["attempts_schema_version"] = self.attempts_schema_version
        return clean_json(
            {
                "schema_version": SCHEMA_VERSION,
                "genderscope_version": self.genderscope_version,
                "source_revision": self.source_revision,
                "status": self.status,
                "created": self.created,
                "command": self.command,
                **optional,
                "versions": self.versions,
                "model": self.model.to_json() if self.model else None,
                "backend_stats": self.backend_stats,
                "seed": self.seed,
                "trials": self.trials,
                "limit": self.limit,
                "use_cache": self.use_cache,
                "generation": self.generation,
                "tasks": {n: t.to_json() for n, t in self.tasks.items()},
                "counts": self.counts,
                "seconds": self.seconds,
            }
        )

    @classmethod
    def from_json(cls, data: Any, source: str = RUN_FILE) -> RunManifest:
        need(isinstance(data, dict), source, "expected an object")
        version = schema_version_of(data, source)
        tasks = as_object(data.get("tasks"), source, "'tasks'")
        versions = as_object(data.get("versions"), source, "'versions'")
        label = data.get("label")
        need(label is None or isinstance(label, str), source, "'label' must be a string")
        for key in ("seed", "trials", "limit", "attempts_schema_version"):
            v = data.get(key)
            need(
                v is None or (isinstance(v, int) and not isinstance(v, bool)),
                source,
                f"'{key}' must be an integer",
            )
        return cls(
            created=str(data.get("created") or ""),
            genderscope_version=str(data.get("genderscope_version") or ""),
            command=data.get("command"),
            versions={str(k): str(v) for k, v in versions.items()},
            model=ModelInfo.from_json(data["model"], f"{source}: model") if data.get("model") else None,
            backend_stats=as_object(data.get("backend_stats"), source, "'backend_stats'"),
            seed=data.get("seed"),
            trials=data.get("trials"),
            limit=data.get("limit"),
            use_cache=data.get("use_cache"),
            generation=as_object(data.get("generation"), source, "'generation'"),
            tasks={n: TaskManifest.from_json(t, f"{source}: task {n!r}") for n, t in tasks.items()},
            seconds=data.get("seconds"),
            schema_version=version,
            label=label or None,
            attempts_schema_version=data.get("attempts_schema_version"),
            status=optional_status(data, "status", source),
            source_revision=optional_str(data, "source_revision", source),
            counts=as_object(data.get("counts"), source, "'counts'"),
            spec=as_object(data["spec"], source, "'spec'") if data.get("spec") is not None else None,
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
    """The genderscope command line of this process, quoted so that a shell runs it again (None when called
    from Python)."""
    return shlex.join(sys.argv) if sys.argv and "genderscope" in sys.argv[0] else None


def new_manifest(
    *, model: ModelInfo | None = None, command: str | None = None, started: float | None = None, **fields: Any
) -> RunManifest:
    """A manifest stamped now (or at ``started``, a ``time.time()``) with this genderscope's and the
    packages' versions; ``command`` defaults to this process's command line; ``fields`` set the rest."""
    when = _dt.datetime.fromtimestamp(started) if started is not None else _dt.datetime.now()
    return RunManifest(
        created=when.isoformat(timespec="seconds"),
        genderscope_version=this_version(),
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


def read_json_lines(path: Path, invalid: str = "not valid JSON") -> Iterator[tuple[int, Any]]:
    """(line number from 1, parsed value) of each non-blank line of the JSON-lines file ``path``; a line
    that does not parse (or is not UTF-8) is a DataError ``PATH:LINE: {invalid} (reason)``."""
    yield from json_lines(path, invalid)


def _load_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}:{exc.lineno}: invalid JSON ({exc.msg})") from None
    except UnicodeDecodeError:
        raise DataError(f"{path}: not UTF-8 text") from None
    except RecursionError:
        raise DataError(f"{path}: invalid JSON (nested too deeply)") from None


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
