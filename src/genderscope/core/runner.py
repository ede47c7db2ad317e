"""Answer a task's attempts through the response store and a backend.

Flow: look every attempt up in the store (unless ``use_cache`` is off), send the
rest to the backend once per distinct key (identical request + trial = one model
call, shared by the attempts that ask it), commit each answer the moment the
backend emits it, and return one :class:`AttemptResult` per attempt, in order.
An interrupted run (Ctrl-C, kill) loses nothing that was emitted: the next run
finds those answers in the store and asks only for the rest.
"""

from __future__ import annotations

import contextlib
import gc
import time
from dataclasses import dataclass, field
from typing import Any, Iterator, Sequence

from genderscope.core.backend import Backend
from genderscope.core.errors import UnsupportedKindError
from genderscope.core.primitives import ProtocolError, check_payload, response_problem
from genderscope.core.requests import GIVEN, Attempt, AttemptResult, Job, Outcome, store_key
from genderscope.core.store import ResponseStore


@dataclass
class RunCounts:
    """Request and caching counts of one task run (for ``run.json``)."""

    attempts: int = 0
    cache_hits: int = 0
    requests: int = 0
    shared: int = 0  # attempts answered by another attempt's identical request
    errors: int = 0
    skipped: int = 0
    invalid_cached: int = 0  # stored answers that failed their kind's check and were asked again
    rounds: int = 0
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def add(self, other: "RunCounts") -> None:
        for k, v in other.__dict__.items():
            setattr(self, k, getattr(self, k) + v)


@dataclass
class Execution:
    results: list[AttemptResult]
    counts: RunCounts = field(default_factory=RunCounts)


def check_request_kinds(attempts: Sequence[Attempt], backend: Backend, task: str = "") -> None:
    """Raise :class:`UnsupportedKindError` (one line: the task, the kind, the model and the model kinds
    that answer it) if an attempt asks a kind the backend declares no handler for."""
    kinds = {a.request.kind for a in attempts}
    kinds.discard(GIVEN)
    missing = sorted(kinds - backend.request_kinds)
    if not missing:
        return
    from genderscope.core.matrix import backend_request_kinds

    kind = missing[0]
    able = [k for k, answered in backend_request_kinds().items() if answered and kind in answered]
    model = f"{backend.kind}:{backend.target}" if backend.target else backend.kind
    answers = ", ".join(sorted(backend.request_kinds)) or "nothing"
    raise UnsupportedKindError(
        f"task {task or '?'} asks {kind!r} requests, which {model} cannot answer ({backend.kind} models "
        f"answer {answers}); model kinds that answer {kind!r}: {', '.join(able) or 'none installed'}"
    )


def execute(
    attempts: Sequence[Attempt],
    backend: Backend,
    store: ResponseStore | None,
    use_cache: bool = True,
    progress: Any = None,
    label: str = "",
    task: str = "",
) -> Execution:
    """Answer ``attempts`` (see module docstring); returns results in attempt order.  An attempt of a kind
    the backend does not answer stops the run before anything is looked up or sent
    (:func:`check_request_kinds`; ``task`` names the task in that message, default ``label``)."""
    check_request_kinds(attempts, backend, task or label)
    t0 = time.perf_counter()
    counts = RunCounts(attempts=len(attempts))
    results = [AttemptResult(a) for a in attempts]
    caching = backend.cacheable and store is not None and use_cache
    fp = backend.fingerprint
    # ``given`` requests carry their own answer (precomputed scores): neither backend nor store
    given = {i for i, a in enumerate(attempts) if a.request.kind == GIVEN}
    for i in given:
        results[i].response = attempts[i].request.payload.get("value")

    groups: dict[str, list[int]] = {}
    if caching:
        keys = [store_key(fp, a.request, a.trial) for a in attempts]
        for i, k in enumerate(keys):
            if i not in given:
                groups.setdefault(k, []).append(i)
        stored = store.get_many(list(groups))  # type: ignore[union-attr]
        for k in [
            k for k, resp in stored.items() if response_problem(attempts[groups[k][0]].request.kind, resp)
        ]:
            del stored[k]  # a stored answer that is not a valid answer of its kind is asked again
            counts.invalid_cached += 1
        for k, resp in stored.items():
            for i in groups[k]:
                results[i].response = resp
                results[i].cache_hit = True
        counts.cache_hits = sum(len(groups[k]) for k in stored)
        pending_keys = [k for k in groups if k not in stored]
    else:
        groups = {str(i): [i] for i in range(len(attempts)) if i not in given}
        pending_keys = list(groups)

    jobs = []
    bad: list[tuple[Job, str]] = []
    for n, k in enumerate(pending_keys):
        first = groups[k][0]
        a = attempts[first]
        job = Job(index=n, request=a.request, trial=a.trial, item_id=a.item_id)
        counts.shared += len(groups[k]) - 1
        try:  # a request enters a backend only with a valid payload of its kind
            check_payload(a.request.kind, a.request.payload)
        except ProtocolError as exc:
            bad.append((job, f"invalid {a.request.kind} request: {exc}"))
            continue
        jobs.append(job)

    if progress is not None:
        progress.add(label or "answering", total=len(attempts), cached=counts.cache_hits + len(given))

    def emit(job: Job, outcome: Outcome) -> None:
        k = pending_keys[job.index]
        idx = groups[k]
        if outcome.ok and outcome.response is not _SKIP:
            problem = response_problem(job.request.kind, outcome.response)
            if problem is not None:  # never store or score a malformed answer
                outcome = Outcome(error=problem)
        if outcome.ok and outcome.response is not _SKIP:
            if caching:  # committed now: a killed run never asks an answered request again
                store.put(k, fp, job.request.kind, job.trial, job.request.canonical(), outcome.response)  # type: ignore[union-attr]
            for i in idx:
                results[i].response = outcome.response
        elif outcome.response is _SKIP:
            for i in idx:
                results[i].skipped = True
            counts.skipped += len(idx)
        else:
            for i in idx:
                results[i].error = outcome.error
            counts.errors += len(idx)
        if progress is not None:
            progress.advance(len(idx))

    for job, problem in bad:
        emit(job, Outcome(error=problem))
    if jobs:
        counts.requests = len(jobs)
        backend.answer(jobs, emit)
    counts.seconds = time.perf_counter() - t0
    return Execution(results, counts)


def execute_task(
    task: Any,
    backend: Backend,
    store: ResponseStore | None,
    use_cache: bool = True,
    progress: Any = None,
    label: str = "",
) -> Execution:
    """Answer every round of a task's attempts (``attempts()``, then ``next_attempts()`` until empty)."""
    total = RunCounts()
    results: list[AttemptResult] = []
    with paused_gc():
        attempts = task.attempts()
    while attempts:
        ex = execute(
            attempts, backend, store, use_cache=use_cache, progress=progress, label=label, task=task.name
        )
        total.add(ex.counts)
        total.rounds += 1
        results.extend(ex.results)
        with paused_gc():
            attempts = task.next_attempts(results)
    return Execution(results, total)


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector for an allocation burst without model calls (building, scoring,
    writing or loading tens of thousands of records), where its repeated full passes over the live records
    cost ~15 % of the CPU time; cycles made meanwhile are collected after it is re-enabled."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


class _SkipMarker:
    """Response value a replay backend emits for an answer it does not have (``--replay-missing skip``)."""

    def __repr__(self) -> str:
        return "SKIP"


_SKIP = _SkipMarker()
SKIP = _SKIP
