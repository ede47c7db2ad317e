"""Batch files for other runners: write the requests a run still needs, read the answers back.

``write_requests``: each task is walked round by round through the store (as ``genderscope run`` does);
the first round with requests the store lacks is written, one line per distinct request (custom id =
store key), and each written request is recorded in the store's ``batch_requests`` table.  A
multi-round task whose later round needs these answers is written again after ``read_answers``.

``read_answers``: every line of an output file is matched by custom id to a recorded request, turned into
that request's answer by the backend (as the online route reads it), checked against its kind and stored;
the following ``genderscope run`` with the same options finds it in the store.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from genderscope.core.backend import BatchFiles
from genderscope.core.batch_ledger import BatchLedger
from genderscope.core.engine import prepare_run
from genderscope.common.errors import UsageError
from genderscope.core.primitives import response_problem
from genderscope.core.requests import Job, Outcome
from genderscope.core.request_value import Request
from genderscope.core.runner import execute, paused_gc
from genderscope.core.store import ResponseStore


@dataclass
class TaskRound:
    """What ``write_requests`` did for one task: the round written (1-based; 0 = nothing left)."""

    task: str
    round: int
    attempts: int
    from_store: int
    written: int


@dataclass
class WriteSummary:
    path: Path
    lines: int
    tasks: list[TaskRound]


@dataclass
class ReadSummary:
    """``stored``: answers stored now; ``known``: already in the store; ``failed``: (custom id, error)."""

    lines: int = 0
    stored: int = 0
    known: int = 0
    failed: list[tuple[str, str]] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    other_model: list[str] = field(default_factory=list)


class _Recorder:
    """Stands in for the backend inside the runner: records the jobs the store lacks, answers none."""

    cacheable = True

    def __init__(self, backend: Any):
        self.kind, self.target = backend.kind, backend.target
        self.request_kinds = backend.request_kinds
        self.fingerprint = backend.fingerprint
        self.jobs: list[Job] = []

    def answer(self, jobs: Sequence[Job], emit: Any) -> None:
        self.jobs.extend(jobs)


def _batch_backend(backend_cls: type, target: str, options: Any, spec: str) -> Any:
    """The backend of ``spec`` built for files only (``offline``); UsageError if it has no file format."""
    if not issubclass(backend_cls, BatchFiles):
        raise UsageError(f"{spec}: only openai: and openai-completions: models have a batch file format")
    return backend_cls(target, options, offline=True)


def write_requests(
    tasks: Sequence[str],
    model: str,
    out: str | Path,
    *,
    store_path: str | Path | None = None,
    **run_options: Any,
) -> WriteSummary:
    """Write the requests ``genderscope run TASKS --model MODEL`` still needs to ``out`` (JSONL)."""
    prep = prepare_run(tasks, model, **run_options)
    backend = _batch_backend(prep.backend_cls, prep.target, prep.backend_options, model)
    store = ResponseStore(store_path)
    out = Path(out)
    rounds: list[TaskRound] = []
    jobs: dict[str, Job] = {}
    try:
        for task in prep.tasks:
            with paused_gc():
                attempts = task.attempts()
            results: list[Any] = []
            n = 0
            while attempts:
                n += 1
                recorder = _Recorder(backend)
                ex = execute(attempts, recorder, store, label=task.name)  # type: ignore[arg-type]
                if recorder.jobs:
                    for job in recorder.jobs:
                        jobs.setdefault(_key(recorder.fingerprint, job), job)
                    rounds.append(
                        TaskRound(task.name, n, len(attempts), ex.counts.cache_hits, len(recorder.jobs))
                    )
                    break
                results.extend(ex.results)
                with paused_gc():
                    attempts = task.next_attempts(results)
            else:
                rounds.append(TaskRound(task.name, 0, 0, 0, 0))
        out.parent.mkdir(parents=True, exist_ok=True)
        with open(out, "wb") as fh:
            keys = backend.write_batch(list(jobs.values()), fh)
        fp = backend.fingerprint  # type: ignore[attr-defined]
        BatchLedger(store).put_requests(
            (k, fp, j.request.kind, j.trial, j.request.canonical()) for k, j in zip(keys, jobs.values())
        )
    finally:
        store.close()
    return WriteSummary(out, len(jobs), rounds)


def _key(fingerprint: str, job: Job) -> str:
    from genderscope.core.requests import store_key

    return store_key(fingerprint, job.request, job.trial)


def read_answers(
    path: str | Path,
    model: str,
    *,
    options: dict[str, Any] | None = None,
    store_path: str | Path | None = None,
) -> ReadSummary:
    """Store the answers of a batch output file (OpenAI's or vLLM run-batch's format)."""
    from genderscope.core import lookup
    from genderscope.core.options import build_options

    backend_cls = lookup.backend_class(model)
    kind, target = lookup.parse_model_spec(model)
    values = {k.lstrip("-").replace("-", "_"): v for k, v in (options or {}).items()}
    opts = build_options(backend_cls.Options, values, f"model kind {kind!r}")
    backend = _batch_backend(backend_cls, target, opts, model)
    fp = backend.fingerprint  # type: ignore[attr-defined]
    path = Path(path)
    if not path.is_file():
        raise UsageError(f"{path}: no such file (the output file of the batch runner)")
    summary = ReadSummary()
    store = ResponseStore(store_path)
    try:
        ledger = BatchLedger(store)
        try:
            lines = list(backend.read_batch(path))
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        summary.lines = len(lines)
        written = ledger.get_requests([cid for cid, _line in lines])
        stored = store.get_many([cid for cid, _line in lines if cid in written])
        rows = []
        for n, (cid, line) in enumerate(lines):
            if cid not in written:
                summary.unknown.append(cid)
                continue
            wfp, rkind, trial, canonical = written[cid]
            if wfp != fp:
                summary.other_model.append(cid)
                continue
            if cid in stored:
                summary.known += 1
                continue
            req = json.loads(canonical)
            job = Job(index=n, request=Request(rkind, req["payload"]), trial=trial, item_id="")
            outcome: Outcome = backend.batch_outcome(job, line)
            problem = response_problem(rkind, outcome.response) if outcome.ok else outcome.error
            if problem is not None:
                summary.failed.append((cid, problem))
                continue
            rows.append((cid, fp, rkind, trial, canonical, outcome.response))
        store.put_many(rows)
        summary.stored = len(rows)
    finally:
        store.close()
    return summary
