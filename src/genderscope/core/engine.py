"""One run: tasks x one model -> results.json, attempts.jsonl and run.json in an output folder.

The CLI and the Python API both call :func:`run_tasks`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as _dt
import json
import re
import time
from pathlib import Path
from typing import Any, Iterator, Sequence

from genderscope.core.errors import MissingResponsesError, UsageError
from genderscope.core.options import as_dict, build_options, field_for
from genderscope.core.requests import AttemptResult, request_sha256
from genderscope.core.runlog import (
    ATTEMPT_ENGINE_KEYS,
    ATTEMPTS_FILE,
    ATTEMPTS_SCHEMA_VERSION,
    ModelInfo,
    ResultsFile,
    RunManifest,
    TaskManifest,
    TaskResults,
    new_manifest,
    run_status,
    status_of,
    write_run_log,
)
from genderscope.core.runner import RunCounts, execute_task, paused_gc
from genderscope.core.store import ResponseStore
from genderscope.core.task import RunContext, Task, TaskResult
from genderscope.data.registry import DataRegistry
from genderscope.core import lookup


@dataclasses.dataclass
class TaskRun:
    """One task's outcome inside a run."""

    task: Task
    result: TaskResult
    results: list[AttemptResult]
    counts: RunCounts


def split_options(
    task_classes: Sequence[type], backend_cls: type, values: dict[str, Any]
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Route ``--name value`` pairs to every task that has the option, else to the backend (a name as
    :func:`~genderscope.core.options.field_for` reads it: ``--name``, an alias, ``--no-name`` for a bool)."""
    per_task: list[dict[str, Any]] = [{} for _ in task_classes]
    backend_vals: dict[str, Any] = {}
    for key, val in values.items():
        name = key.lstrip("-").replace("-", "_")
        hit = False
        for i, cls in enumerate(task_classes):
            if field_for(cls.Options, key) is not None:
                per_task[i][key] = val
                hit = True
        if field_for(backend_cls.Options, key) is not None:
            backend_vals[key] = val
            hit = True
        if not hit:
            names = ", ".join(c.name for c in task_classes)
            raise UsageError(
                f"no task ({names}) and no {backend_cls.kind} backend option is called "
                f"--{name.replace('_', '-')}; see `genderscope tasks --options` and "
                "`genderscope run --help`"
            )
    return per_task, backend_vals


def default_out_dir(tasks: Sequence[str], model: str) -> Path:
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", model.split("/")[-1])[:40]
    return Path("runs") / f"{stamp}-{'+'.join(tasks)}-{slug}"


@dataclasses.dataclass
class PreparedRun:
    """Tasks built for one model, before any model is loaded (:func:`prepare_run`)."""

    tasks: list[Task]
    backend_cls: type
    kind: str
    target: str
    backend_options: Any
    data: DataRegistry
    generation: dict[str, Any]
    #: tasks of a suite that the model cannot run -> why (not run)
    left_out: dict[str, str] = dataclasses.field(default_factory=dict)
    #: tasks that came from a suite (not named on their own)
    from_suites: set[str] = dataclasses.field(default_factory=set)

    def backend(self) -> Any:
        """The model backend (loads nothing heavy until it answers)."""
        return self.backend_cls(self.target, self.backend_options)


#: the largest --trials (repetitions per prompt) a run accepts
MAX_TRIALS = 10_000


def check_run_values(
    *, trials: Any, limit: Any, seed: Any, temperature: Any = None, max_tokens: Any = None
) -> None:
    """One :class:`UsageError` line for a bad ``--trials``, ``--limit``, ``--seed``, ``--temperature`` or
    ``--max-tokens`` (None: the task's default), before any data or model is loaded."""
    from genderscope.core import validate

    validate.whole_number(
        "--trials", trials, maximum=MAX_TRIALS, fix="repetitions per prompt; omit it for the task's default"
    )
    validate.whole_number("--limit", limit, fix="the number of items to evaluate; omit it for all items")
    validate.whole_number("--seed", seed, minimum=0, maximum=2**63 - 1, fix="e.g. --seed 123")
    validate.real_number(
        "--temperature", temperature, minimum=0, fix="0 = greedy; omit it for the task's default"
    )
    validate.whole_number("--max-tokens", max_tokens, fix="new tokens per answer; omit it for the default")


def prepare_run(
    tasks: Sequence[str],
    model: str,
    *,
    trials: int | None = None,
    limit: int | None = None,
    seed: int = 123,
    options: dict[str, Any] | None = None,
    temperature: float | None = None,
    max_tokens: int | None = None,
    data: DataRegistry | None = None,
) -> PreparedRun:
    """Build ``tasks`` for ``model`` with the routed options; UsageError on unsupported combinations."""
    from genderscope.core.suites import expand

    if not tasks:
        raise UsageError("name at least one task or suite (see `genderscope tasks`)")
    check_run_values(trials=trials, limit=limit, seed=seed, temperature=temperature, max_tokens=max_tokens)
    backend_cls = lookup.backend_class(model)
    kind, target = lookup.parse_model_spec(model)
    named = list(tasks)
    suites = expand(named, frozenset(backend_cls.request_kinds), kind)
    tasks = suites.tasks
    task_classes = [lookup.task_class(t) for t in tasks]
    task_vals, backend_vals = split_options(task_classes, backend_cls, {**suites.options, **(options or {})})
    backend_opts = build_options(backend_cls.Options, backend_vals, f"model kind {kind!r}")
    task_opts = [build_options(c.Options, v, f"task {c.name!r}") for c, v in zip(task_classes, task_vals)]
    data = data or DataRegistry()
    generation = {
        k: v for k, v in (("temperature", temperature), ("max_tokens", max_tokens)) if v is not None
    }
    ctx = RunContext(
        seed=seed,
        trials=trials,
        limit=limit,
        request_kinds=backend_cls.request_kinds,
        model_kind=kind,
        model_target=target,
        generation=generation,
        data=data,
    )
    built = [c(o, ctx) for c, o in zip(task_classes, task_opts)]
    for t in built:  # fail early on unsupported combinations, before loading any model
        t.check_model()
    return PreparedRun(
        built, backend_cls, kind, target, backend_opts, data, generation, suites.left_out, suites.from_suites
    )


def run_tasks(
    tasks: Sequence[str],
    model: str,
    *,
    trials: int | None = None,
    limit: int | None = None,
    seed: int = 123,
    out: str | Path | None = None,
    use_cache: bool = True,
    options: dict[str, Any] | None = None,
    temperature: float | None = None,
    max_tokens: int | None = None,
    progress: bool | None = None,
    store_path: str | Path | None = None,
    data: DataRegistry | None = None,
    write: bool = True,
    console: Any = None,
    label: str | None = None,
) -> "RunOutput":
    """Run ``tasks`` against ``model`` and write the output folder; returns a :class:`RunOutput`.

    ``label``: a short name for the run, stored in run.json (reports show it instead of the model spec).
    """
    from genderscope.core.progress import make_progress
    from genderscope.core.validate import writable_path

    if out:
        writable_path("--out", out, folder=True)
    prep = prepare_run(
        tasks,
        model,
        trials=trials,
        limit=limit,
        seed=seed,
        options=options,
        temperature=temperature,
        max_tokens=max_tokens,
        data=data,
    )
    built, backend_cls, kind, target, data, generation = (
        prep.tasks,
        prep.backend_cls,
        prep.kind,
        prep.target,
        prep.data,
        prep.generation,
    )
    out_dir = Path(out) if out else default_out_dir(tasks, model)
    started = time.time()
    backend = prep.backend()
    store = ResponseStore(store_path) if (backend_cls.cacheable and use_cache) else None
    runs: list[TaskRun] = []
    try:
        backend.bind_store(store)
        for t in built:
            # cheap in-process backends (not cacheable: replay, random) answer in one allocation burst
            pause = contextlib.nullcontext() if backend_cls.cacheable else paused_gc()
            try:
                with make_progress(progress) as prog, pause:
                    ex = execute_task(t, backend, store, use_cache=use_cache, progress=prog, label=t.name)
            except MissingResponsesError as exc:
                if exc.answered != 0 or t.name not in prep.from_suites:
                    raise
                prep.left_out[t.name] = f"{model} holds no answer for it"
                continue
            t0 = time.perf_counter()
            with paused_gc():
                result = t.score(ex.results)
            ex.counts.seconds += time.perf_counter() - t0
            runs.append(TaskRun(t, result, ex.results, ex.counts))
    finally:
        backend.close()
        if store is not None:
            store.close()
    if not runs and built:
        raise UsageError(f"{model} holds no answer for any of the tasks ({', '.join(prep.left_out)})")
    task_entries = {r.task.name: _task_manifest(r, data) for r in runs}
    manifest = new_manifest(
        started=started,
        model=ModelInfo.describe(f"{kind}:{target}" if target else kind, backend.describe()),
        backend_stats=backend.stats(),
        seed=seed,
        trials=trials,
        limit=limit,
        use_cache=use_cache,
        generation=generation,
        tasks=task_entries,
        seconds=round(time.time() - started, 3),
        label=(label or "").strip() or None,
        attempts_schema_version=ATTEMPTS_SCHEMA_VERSION,
        status=run_status([t.status or "" for t in task_entries.values()], bool(prep.left_out)),
        counts=run_totals(runs),
    )
    output = RunOutput(out_dir=out_dir, runs=runs, manifest=manifest, left_out=prep.left_out)
    if write:
        with paused_gc():
            output.write()
    return output


def _task_manifest(run: TaskRun, data: DataRegistry) -> TaskManifest:
    """run.json's entry of one task: resolved options, dataset hashes, counts, request kinds used."""
    kinds = sorted({str(getattr(ar.attempt.request, "kind", "")) for ar in run.results} - {""})
    names = run.task.datasets()
    c = run.counts
    return TaskManifest(
        options=as_dict(run.task.options),
        datasets={n: data.sha256(n) for n in names},
        licences={n: data.entry(n).license for n in names},
        counts=c.to_json(),
        measurement={"request_kinds": kinds} if kinds else {},
        version=str(getattr(run.task, "version", "1")),
        status=status_of(c.attempts, c.errors + c.skipped),
    )


#: the counts results.json carries (what was measured; how answers were fetched - requests, cache hits,
#: seconds - stays in run.json, so that a cached rerun or a replay writes the same results.json)
MEASURED = ("attempts", "errors", "skipped")


def measured_counts(counts: Any) -> dict[str, int]:
    """:data:`MEASURED` of a :class:`~genderscope.core.runner.RunCounts` (or its run.json dict)."""
    get = counts.get if isinstance(counts, dict) else (lambda k, d=0: getattr(counts, k, d))
    return {k: int(get(k, 0)) for k in MEASURED}


def run_totals(runs: Sequence[TaskRun]) -> dict[str, Any]:
    """The run's totals: tasks run and the sums of :data:`MEASURED` over them."""
    out: dict[str, Any] = {"tasks": len(runs)}
    for key in MEASURED:
        out[key] = sum(getattr(r.counts, key) for r in runs)
    return out


#: the engine's own fields of an attempts.jsonl record (a task's field of the same name replaces the value)
_ENGINE_KEYS = frozenset(ATTEMPT_ENGINE_KEYS)


@dataclasses.dataclass
class RunOutput:
    """Everything a run produced; :meth:`write` puts it into ``out_dir``."""

    out_dir: Path
    runs: list[TaskRun]
    manifest: RunManifest
    #: tasks of a suite that the model cannot run -> why (not run)
    left_out: dict[str, str] = dataclasses.field(default_factory=dict)
    #: tasks that came from a suite (not named on their own)
    from_suites: set[str] = dataclasses.field(default_factory=set)

    def results_file(self) -> ResultsFile:
        """results.json of the run, typed: the task blocks with the engine's entries of run.json (task
        version, status, data pins, counts), the run's status, source revision, model and totals."""
        m = self.manifest
        tasks = {}
        for r in self.runs:
            block = TaskResults.of(r.result, r.task.report_facts)
            entry = m.tasks.get(r.task.name)
            if entry is not None:
                block.version, block.status = entry.version, entry.status
                block.data_pins, block.engine_counts = dict(entry.datasets), measured_counts(entry.counts)
            tasks[r.task.name] = block
        return ResultsFile(
            m.model.spec if m.model else "",
            tasks,
            m.genderscope_version,
            status=m.status,
            source_revision=m.source_revision,
            backend=m.model.to_json() if m.model else None,
            counts=dict(m.counts),
        )

    def results_json(self) -> dict[str, Any]:
        """results.json of the run as written."""
        return self.results_file().to_json()

    def _records(self) -> Iterator[tuple[dict[str, Any], Any]]:
        """(the engine's fields, the task's fields or None) per attempt, in order."""
        for r in self.runs:
            extra = r.result.records
            for i, ar in enumerate(r.results):
                a = ar.attempt
                rec: dict[str, Any] = {
                    "task": r.task.name,
                    "item_id": a.item_id,
                    "trial": a.trial,
                    "prompt": a.request.prompt_text,
                    "response": ar.response,
                    "cache_hit": ar.cache_hit,
                    "request_kind": a.request.kind,
                    "request_sha256": request_sha256(a.request),
                }
                if ar.error is not None:
                    rec["error"] = ar.error
                if ar.skipped:
                    rec["skipped"] = True
                yield rec, (extra[i] if i < len(extra) else None)

    def attempt_records(self) -> list[dict[str, Any]]:
        rows = []
        for rec, extra in self._records():
            if extra is not None:
                rec.update(extra)
            rows.append(rec)
        return rows

    def write(self) -> None:
        from genderscope.core.jsonutil import JoinedRecord, clean_json, encode_json

        self.out_dir.mkdir(parents=True, exist_ok=True)
        lines = []
        for rec, extra in self._records():
            try:  # plain JSON values (the usual case) are written directly, ~3x faster than cleaning first
                members = extra.json_members(_ENGINE_KEYS) if isinstance(extra, JoinedRecord) else None
                if members is not None:  # task fields pre-encoded once per shared part (JoinedRecord)
                    head = encode_json(rec)
                    lines.append(head[:-1] + ", " + members + "}" if members else head)
                    continue
                if extra is not None:
                    rec.update(extra)
                lines.append(encode_json(rec))
            except (TypeError, ValueError):  # NaN/inf or numpy values: convert first
                if extra is not None:
                    rec.update(extra)
                lines.append(json.dumps(clean_json(rec), ensure_ascii=False))
        with open(self.out_dir / ATTEMPTS_FILE, "w", encoding="utf-8") as fh:
            fh.write("".join(line + "\n" for line in lines))
        write_run_log(self.out_dir, self.manifest, self.results_file())
