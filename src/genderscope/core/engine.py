"""One run: tasks x one model -> results.json, attempts.jsonl and run.json in an output folder.

The CLI and the Python API both build a :class:`~genderscope.core.runspec.RunSpec` and call
:func:`run_spec` (:func:`run_tasks` builds the spec from keyword arguments).
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as _dt
import json
import pickle
import re
import time
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from genderscope.common.errors import MissingResponsesError, UsageError
from genderscope.core.options import as_dict
from genderscope.core.requests import GIVEN, AttemptResult, request_sha256
from genderscope.core.runlog import (
    ATTEMPT_ENGINE_KEYS,
    ATTEMPTS_FILE,
    ATTEMPTS_SCHEMA_VERSION,
    ModelInfo,
    RunManifest,
    TaskManifest,
    new_manifest,
    write_run_log,
)
from genderscope.core.results_file import ResultsFile, TaskResults, run_status, status_of
from genderscope.core.runspec import (
    RunSpec,
    typed_options,
)
from genderscope.core.runner import RunCounts, paused_gc
from genderscope.core.scheduler import run_together
from genderscope.core.store import ResponseStore
from genderscope.core.task import RunContext, Task, TaskResult
from genderscope.data.registry import DataRegistry
from genderscope.core.finish import finish_result


@dataclasses.dataclass
class TaskRun:
    """One task's outcome inside a run."""

    task: Task
    result: TaskResult
    results: list[AttemptResult]
    counts: RunCounts
    #: the task's memo key when its outputs may be kept for a rerun (:mod:`genderscope.core.taskmemo`)
    memo_key: str | None = None
    #: its outputs taken from a memo (``results`` is then empty; the attempt lines are the memo's)
    memo: Any = None
    #: its attempts.jsonl lines (and their rerun form for a memo), encoded as soon as it was scored
    encoded: tuple[bytes, list[str] | None] | None = None

    def encode(self) -> tuple[bytes, list[str] | None]:
        """This task's attempts.jsonl text and, if a memo may keep it, the lines a rerun writes
        (:func:`_attempt_lines`); worked out once."""
        if self.encoded is None:
            lines, again = _attempt_lines(_records(self), self.results, memo=self.memo_key is not None)
            self.encoded = ("".join(line + "\n" for line in lines).encode("utf-8"), again)
        return self.encoded


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
    #: the spec the run was built from
    spec: RunSpec | None = None

    def backend(self) -> Any:
        """The model backend (loads nothing heavy until it answers)."""
        return self.backend_cls(self.target, self.backend_options)


def prepare_run(
    spec: RunSpec | Sequence[str],
    model: str = "random",
    *,
    data: DataRegistry | None = None,
    **fields: Any,
) -> PreparedRun:
    """Build the tasks of ``spec`` (or of :meth:`RunSpec.build` ``(spec, model, **fields)``) with their
    typed options; UsageError on unsupported combinations, before any model loads."""
    if not isinstance(spec, RunSpec):
        spec = RunSpec.build(spec, model, **fields)
    typed = typed_options(spec)
    kind, target = typed.kind, typed.target
    data = data or DataRegistry()
    ctx = RunContext(
        seed=spec.seed,
        trials=spec.trials,
        limit=spec.limit,
        request_kinds=typed.backend_cls.kinds_for(target),
        model_kind=kind,
        model_target=target,
        generation=spec.generation,
        data=data,
    )
    built = [c(o, ctx) for c, o in zip(typed.task_classes, typed.task_options)]
    for t in built:  # fail early on unsupported combinations, before loading any model
        t.check_model()
    return PreparedRun(
        built,
        typed.backend_cls,
        kind,
        target,
        typed.backend_options,
        data,
        spec.generation,
        typed.left_out,
        typed.from_suites,
        spec,
    )


def run_tasks(
    tasks: Sequence[str],
    model: str = "random",
    *,
    out: str | Path | None = None,
    progress: bool | None = None,
    store_path: str | Path | None = None,
    data: DataRegistry | None = None,
    write: bool = True,
    console: Any = None,
    options: dict[str, Any] | None = None,
    **fields: Any,
) -> "RunOutput":
    """Run ``tasks`` against ``model`` and write the output folder; returns a :class:`RunOutput`.

    ``options`` (task and backend ``--name value`` pairs) and ``fields`` (``trials``, ``limit``, ``seed``,
    ``temperature``, ``max_tokens``, ``use_cache``, ``label``) make the run's :class:`RunSpec`
    (:meth:`RunSpec.build`); the rest says where and how to write.
    """
    spec = RunSpec.build(tasks, model, options=options, **fields)
    return run_spec(spec, out=out, progress=progress, store_path=store_path, data=data, write=write)


def run_spec(
    spec: RunSpec,
    *,
    out: str | Path | None = None,
    progress: bool | None = None,
    store_path: str | Path | None = None,
    data: DataRegistry | None = None,
    write: bool = True,
    reuse: bool = False,
    overwrite: bool = True,
) -> "RunOutput":
    """Run ``spec`` and write the output folder (``out``, default :func:`default_out_dir`); run.json
    stores the spec verbatim, so :func:`~genderscope.core.runspec.load_spec` of it repeats the run.

    ``reuse`` (the CLI's ``run``): with the store in use, a task whose inputs and stored answers are
    those of an earlier run's memo takes its outputs from it (its ``TaskRun.results`` stay empty), and
    the tasks run here leave memos when ``write`` (:mod:`genderscope.core.taskmemo`).

    ``overwrite=False`` (the CLI's ``run`` without ``--overwrite``, the Python API): an ``out`` folder
    holding a run of another spec is refused (:func:`~genderscope.core.outdir.check_out_folder`)."""
    from genderscope.core.outdir import check_out
    from genderscope.core.progress import make_progress

    check_out(out, spec, write, overwrite)  # the one check of --out, before any model loads
    prep = prepare_run(spec, data=data)
    built, backend_cls, data = prep.tasks, prep.backend_cls, prep.data
    model, use_cache = spec.model, spec.use_cache
    out_dir = Path(out) if out else default_out_dir(spec.tasks, model)
    started = time.time()
    backend = prep.backend()
    store = ResponseStore(store_path) if (backend_cls.cacheable and use_cache) else None
    runs: list[TaskRun] = []
    scored: dict[int, TaskRun] = {}
    memo_keys: dict[int, str] = {}

    def drop(task: Task, exc: BaseException) -> bool:
        """A replay that holds no answer at all for a suite's task leaves that task out."""
        missing = isinstance(exc, MissingResponsesError) and exc.answered == 0
        if not missing or task.name not in prep.from_suites:
            return False
        prep.left_out[task.name] = f"{model} holds no answer for it"
        return True

    try:
        backend.bind_store(store)
        # cheap in-process backends (not cacheable: replay, random) answer in one allocation burst
        pause = contextlib.nullcontext() if backend_cls.cacheable else paused_gc()
        if reuse and store is not None:
            memo_keys = _reuse_memos(built, backend.fingerprint, data, store, scored)
        todo = [t for t in built if id(t) not in scored]

        def finish(task: Task, ex: Any) -> None:
            """Score a task whose answers are all in (on the scheduler's helper thread while the other
            tasks' requests are in flight, with a cacheable backend)."""
            t0 = time.perf_counter()
            with paused_gc():
                result = finish_result(task, task.score(ex.results), ex.results)
            ex.counts.seconds += time.perf_counter() - t0
            run = TaskRun(task, result, ex.results, ex.counts, memo_keys.get(id(task)))
            if write:  # its attempt lines too, while the other tasks' requests are in flight
                with paused_gc():
                    run.encode()
            scored[id(task)] = run

        if todo:
            with make_progress(progress) as prog, pause:
                run_together(todo, backend, store, use_cache, progress=prog, drop=drop, finish=finish)
        runs.extend(scored[id(t)] for t in built if id(t) in scored)
    finally:
        backend.close()
        if store is not None:
            store.close()
    if not runs and built:
        raise UsageError(f"{model} holds no answer for any of the tasks ({', '.join(prep.left_out)})")
    manifest = _run_manifest(spec, prep, runs, backend, started)
    output = RunOutput(out_dir=out_dir, runs=runs, manifest=manifest, left_out=prep.left_out)
    if write:
        with paused_gc():
            output.write()
    return output


def _run_manifest(spec: RunSpec, prep: PreparedRun, runs: list[TaskRun], backend: Any, started: float) -> Any:
    """run.json's manifest of a finished run: the model, the spec, each task's entry and the totals."""
    kind, target = prep.kind, prep.target
    task_entries = {r.task.name: _task_manifest(r, prep.data) for r in runs}
    return new_manifest(
        started=started,
        model=ModelInfo.describe(f"{kind}:{target}" if target else kind, backend.describe()),
        backend_stats=backend.stats(),
        seed=spec.seed,
        trials=spec.trials,
        limit=spec.limit,
        use_cache=spec.use_cache,
        generation=spec.generation,
        tasks=task_entries,
        seconds=round(time.time() - started, 3),
        label=(spec.label or "").strip() or None,
        attempts_schema_version=ATTEMPTS_SCHEMA_VERSION,
        status=run_status([t.status or "" for t in task_entries.values()], bool(prep.left_out)),
        counts=run_totals(runs),
        spec=spec.to_json(),
    )


def _reuse_memos(
    tasks: Sequence[Task],
    fingerprint: str,
    data: DataRegistry,
    store: ResponseStore,
    runs: dict[int, TaskRun],
) -> dict[int, str]:
    """Each task's memo key (by ``id``); the tasks whose memo holds (unchanged inputs and answers) go
    into ``runs`` with their outputs from it."""
    from genderscope.core.taskmemo import load_memo, memo_key

    keys = {}
    for t in tasks:
        t0 = time.perf_counter()
        key = keys[id(t)] = memo_key(t, fingerprint, data)
        memo = load_memo(key, store)
        if memo is None:
            continue
        counts = RunCounts(attempts=memo.attempts, cache_hits=memo.from_store, rounds=memo.rounds)
        counts.seconds = time.perf_counter() - t0
        runs[id(t)] = TaskRun(t, memo.result, [], counts, key, memo)
    return keys


def _task_manifest(run: TaskRun, data: DataRegistry) -> TaskManifest:
    """run.json's entry of one task: resolved options, dataset hashes, counts, request kinds used."""
    kinds = sorted({str(getattr(ar.attempt.request, "kind", "")) for ar in run.results} - {""})
    if run.memo is not None:
        kinds = list(run.memo.request_kinds)
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
            backend=m.model.answer_facts() if m.model else None,
            counts=dict(m.counts),
        )

    def results_json(self) -> dict[str, Any]:
        """results.json of the run as written."""
        return self.results_file().to_json()

    def _records(self, runs: Sequence[TaskRun] | None = None) -> Iterator[tuple[dict[str, Any], Any]]:
        """(the engine's fields, the task's fields or None) per attempt, in order (runs from a memo
        have none: their lines are the memo's)."""
        for r in self.runs if runs is None else runs:
            yield from _records(r)

    def attempt_records(self) -> list[dict[str, Any]]:
        rows = []
        for r in self.runs:
            if r.memo is not None:
                rows.extend(json.loads(line) for line in r.memo.text().splitlines())
                continue
            for rec, extra in self._records([r]):
                if extra is not None:
                    rec.update(extra)
                rows.append(rec)
        return rows

    def write(self) -> None:
        """attempts.jsonl, results.json and run.json into ``out_dir``; a task run with a memo key and
        every answer through the store leaves its memo (:mod:`genderscope.core.taskmemo`)."""
        self.out_dir.mkdir(parents=True, exist_ok=True)
        chunks = []
        for r in self.runs:
            if r.memo is not None:
                chunks.append(r.memo.data())
                continue
            text, again = r.encode()
            chunks.append(text)
            if again is not None and _memo_eligible(r):
                _keep_memo(r, again)
        with open(self.out_dir / ATTEMPTS_FILE, "wb") as fh:
            fh.write(b"".join(chunks))
        write_run_log(self.out_dir, self.manifest, self.results_file())


def _records(r: TaskRun) -> Iterator[tuple[dict[str, Any], Any]]:
    """(the engine's fields, the task's fields or None) per attempt of ``r``, in order."""
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


def _keep_memo(r: TaskRun, lines: list[str]) -> None:
    """Write ``r``'s memo; a memo that cannot be written (a value that does not pickle, a full disk) is
    left out, the run goes on."""
    from genderscope.core.taskmemo import build_memo, save_memo

    kinds = sorted({str(ar.attempt.request.kind) for ar in r.results} - {""})
    keyed = [(ar.key, ar.response) for ar in r.results if ar.key is not None]
    try:
        save_memo(str(r.memo_key), build_memo(r.result, keyed, lines, len(r.results), r.counts.rounds, kinds))
    except (OSError, pickle.PicklingError, TypeError, AttributeError, RecursionError):
        pass


def _memo_eligible(r: TaskRun) -> bool:
    """Would a rerun answer every attempt of ``r`` from the store (nothing failed, skipped or not
    stored)?"""
    c = r.counts
    if c.errors or c.skipped or c.invalid_cached:
        return False
    return all(
        ar.error is None and not ar.skipped and (ar.key is not None or ar.attempt.request.kind == GIVEN)
        for ar in r.results
    )


#: where a record's ``cache_hit`` sits when it was answered by the backend (a rerun reads it from the store)
_FRESH = '"cache_hit": false, "request_kind": '
#: the engine's fields before ``cache_hit`` in a record
_BEFORE_HIT = ("task", "item_id", "trial", "prompt", "response")


def _attempt_lines(
    records: Iterable[tuple[dict[str, Any], Any]], results: Sequence[AttemptResult], memo: bool
) -> tuple[list[str], list[str] | None]:
    """The attempts.jsonl lines of one task and, if ``memo`` and every line allows it, the same lines as
    a rerun from the store writes them (``cache_hit`` true but for ``given`` answers)."""
    from genderscope.core.jsonutil import JoinedRecord, clean_json, encode_json

    lines: list[str] = []
    again: list[str] | None = [] if memo else None
    for (rec, extra), ar in zip(records, results):
        flip = not ar.cache_hit and ar.attempt.request.kind != GIVEN
        try:  # plain JSON values (the usual case) are written directly, ~3x faster than cleaning first
            members = extra.json_members(_ENGINE_KEYS) if isinstance(extra, JoinedRecord) else None
            if members is not None or extra is None:  # task fields pre-encoded once per shared part
                head = encode_json(rec)
                lines.append(head[:-1] + ", " + members + "}" if members else head)
                if again is not None and flip:
                    i = head.rfind(_FRESH)
                    head = head[:i] + '"cache_hit": true' + head[i + 18 :] if i > 0 else ""
                if again is not None and head:
                    again.append(head[:-1] + ", " + members + "}" if members else head)
                else:
                    again = None
                continue
            if type(extra) is dict and "cache_hit" not in extra:  # the record in two parts around cache_hit
                merged = {**rec, **extra}
                pre = encode_json({k: merged[k] for k in _BEFORE_HIT})
                rest = {k: v for k, v in merged.items() if k not in _BEFORE_HIT and k != "cache_hit"}
                post = encode_json(rest)
                flag = "true" if ar.cache_hit else "false"
                lines.append(f'{pre[:-1]}, "cache_hit": {flag}, {post[1:]}')
                if again is not None:
                    again.append(f'{pre[:-1]}, "cache_hit": true, {post[1:]}' if flip else lines[-1])
                continue
            again = None
            if extra is not None:
                rec.update(extra)
            lines.append(encode_json(rec))
        except (TypeError, ValueError):  # NaN/inf or numpy values: convert first
            again = None
            if extra is not None:
                rec.update(extra)
            lines.append(json.dumps(clean_json(rec), ensure_ascii=False))
    return lines, again
