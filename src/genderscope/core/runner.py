"""Answer a task's attempts through the response store and a backend.

Flow: look every attempt up in the store (unless ``use_cache`` is off), send the
rest to the backend once per distinct key (identical request + trial = one model
call, shared by the attempts that ask it), commit the answers as the backend emits
them (a writer thread, :class:`StoreWriter`, commits what has arrived in one transaction
every :data:`COMMIT_SECONDS`, or as soon as :data:`COMMIT_ROWS` wait, and at the end of
the pass, also when it is interrupted), and return one :class:`AttemptResult` per
attempt, in order.  An interrupted run (Ctrl-C) loses nothing that was emitted; a killed
one (SIGKILL) at most the answers emitted less than :data:`COMMIT_SECONDS` (plus one
commit's duration) before it: the next run finds the rest in the store and asks only for
those.  The commits run beside the backend: an HTTP backend's event loop never waits
for SQLite.
"""

from __future__ import annotations

import contextlib
import gc
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Sequence

from genderscope.core.backend import Backend
from genderscope.common.errors import UnsupportedKindError
from genderscope.core.primitives import ProtocolError, check_payload, response_problem
from genderscope.core.progress import generation_hint
from genderscope.core.requests import GIVEN, Attempt, AttemptResult, Job, Outcome, store_key
from genderscope.core.store import ResponseStore


#: answers are committed to the store at least this often (seconds) while a backend answers ...
COMMIT_SECONDS = 0.1
#: ... or once this many are waiting (one SQLite transaction each: a commit per answer cost ~1-2 ms)
COMMIT_ROWS = 512


class StoreWriter:
    """Commits store rows on its own thread: :meth:`add` queues a row (from any thread) and returns at
    once; the thread commits everything queued every :data:`COMMIT_SECONDS`, or as soon as
    :data:`COMMIT_ROWS` rows wait; :meth:`close` commits the rest and waits for the thread.  A commit that
    fails is raised by the next :meth:`add` and by :meth:`close`."""

    def __init__(self, store: ResponseStore):
        self.store = store
        self._rows: list[tuple[str, str, str, int, str, Any]] = []
        self._wake = threading.Condition()
        self._closing = False
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="genderscope-store", daemon=True)
        self._thread.start()

    def add(self, row: tuple[str, str, str, int, str, Any]) -> None:
        if self._error is not None:
            raise self._error
        with self._wake:
            self._rows.append(row)
            if len(self._rows) == 1 or len(self._rows) >= COMMIT_ROWS:
                self._wake.notify()

    def _take(self) -> list[tuple[str, str, str, int, str, Any]]:
        """The rows to commit next: none queued, it sleeps until one is (no wake-ups while a slow server
        is thinking: polling cost ~1 ms of CPU per second); then it gathers rows for up to
        :data:`COMMIT_SECONDS`, or until :data:`COMMIT_ROWS` wait."""
        with self._wake:
            while not self._closing and not self._rows:
                self._wake.wait()
            if not self._closing and len(self._rows) < COMMIT_ROWS:
                self._wake.wait(COMMIT_SECONDS)
            batch, self._rows = self._rows, []
            return batch

    def _run(self) -> None:
        while not self._closing:
            batch = self._take()
            try:
                if batch:
                    self.store.put_many(batch)
            except BaseException as exc:  # kept for add()/close(); the rows stay for close() to retry
                with self._wake:
                    self._rows[:0] = batch
                self._error = exc
                return

    def close(self) -> None:
        """Stop the thread and commit what is left on the calling thread (raises a failed commit)."""
        with self._wake:
            self._closing = True
            self._wake.notify()
        self._thread.join()
        rows, self._rows = self._rows, []
        if rows:
            self.store.put_many(rows)
        if self._error is not None:
            raise self._error


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


@dataclass
class Part:
    """One task's attempts of a round inside a shared pass (:func:`execute_parts`)."""

    attempts: Sequence[Attempt]
    label: str = ""  # its progress label
    task: str = ""  # the task named by a kind error (default ``label``)


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
    return execute_parts([Part(attempts, label, task)], backend, store, use_cache, progress)[0]


def execute_parts(
    parts: Sequence[Part],
    backend: Backend,
    store: ResponseStore | None,
    use_cache: bool = True,
    progress: Any = None,
    on_done: Callable[[int, Execution], None] | None = None,
    planner: Callable[..., PassPlan] | None = None,
) -> list[Execution]:
    """Answer the attempts of several parts (tasks) in one pass: one store lookup, one ``backend.answer``
    call, identical requests of different parts asked once.  Returns one :class:`Execution` per part, its
    results in its attempt order, its counts its own (a request shared by parts counts as a request of
    the part that asked it first and as ``shared`` for the others; ``seconds``: from the start of the
    pass until the part's last answer).  Kinds are checked for every part before anything is sent.
    ``on_done(n, execution)`` is called once per part as soon as its last answer is in (from inside the
    backend's call: it must return at once), else when the pass ends.  ``planner`` (default
    :func:`plan_pass`, same arguments) works the pass out."""
    for part in parts:
        check_request_kinds(part.attempts, backend, part.task or part.label)
    plan = (planner or plan_pass)(parts, backend, store, use_cache)
    return run_pass(plan, backend, store, progress, on_done)


@dataclass
class PassPlan:
    """One pass worked out before anything is sent (:func:`plan_pass`): its attempts, their results so far
    (given answers, store hits), the distinct requests to ask (``jobs``; ``Job.index`` points into
    ``pending_keys``) and the attempts each request answers (``groups``)."""

    parts: Sequence[Part]
    attempts: list[Attempt]
    owner: list[int]  # attempt -> its part
    counts: list[RunCounts]
    results: list[AttemptResult]
    ready: list[int]  # attempts per part answered before the backend is asked
    groups: dict[str, list[int]]
    pending_keys: list[str]
    jobs: list[Job]
    bad: list[tuple[Job, str]]
    caching: bool
    fingerprint: str


def plan_pass(
    parts: Sequence[Part], backend: Backend, store: ResponseStore | None, use_cache: bool = True
) -> PassPlan:
    """Work out a pass of :func:`execute_parts`: store keys, store lookup, one job per distinct request
    (a request with an invalid payload goes to ``bad``).  Sends nothing."""
    attempts = [a for part in parts for a in part.attempts]
    owner = [n for n, part in enumerate(parts) for _ in part.attempts]
    counts = [RunCounts(attempts=len(part.attempts)) for part in parts]
    results = [AttemptResult(a) for a in attempts]
    caching = backend.cacheable and store is not None and use_cache
    fp = backend.fingerprint
    # ``given`` requests carry their own answer (precomputed scores): neither backend nor store
    given = {i for i, a in enumerate(attempts) if a.request.kind == GIVEN}
    ready = [0] * len(parts)
    for i in given:
        results[i].response = attempts[i].request.payload.get("value")
        ready[owner[i]] += 1

    groups: dict[str, list[int]] = {}
    if caching:
        keys = [store_key(fp, a.request, a.trial) for a in attempts]
        for i, k in enumerate(keys):
            if i not in given:
                groups.setdefault(k, []).append(i)
                results[i].key = k
        stored = store.get_many(list(groups))  # type: ignore[union-attr]
        for k in [
            k for k, resp in stored.items() if response_problem(attempts[groups[k][0]].request.kind, resp)
        ]:
            del stored[k]  # a stored answer that is not a valid answer of its kind is asked again
            counts[owner[groups[k][0]]].invalid_cached += 1
        for k, resp in stored.items():
            for i in groups[k]:
                results[i].response = resp
                results[i].cache_hit = True
                counts[owner[i]].cache_hits += 1
                ready[owner[i]] += 1
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
        for i in groups[k][1:]:
            counts[owner[i]].shared += 1
        try:  # a request enters a backend only with a valid payload of its kind
            check_payload(a.request.kind, a.request.payload)
        except ProtocolError as exc:
            bad.append((job, f"invalid {a.request.kind} request: {exc}"))
            continue
        counts[owner[first]].requests += 1
        jobs.append(job)
    return PassPlan(
        parts, attempts, owner, counts, results, ready, groups, pending_keys, jobs, bad, caching, fp
    )


def run_pass(
    plan: PassPlan,
    backend: Backend,
    store: ResponseStore | None,
    progress: Any = None,
    on_done: Callable[[int, Execution], None] | None = None,
) -> list[Execution]:
    """Ask the backend for ``plan``'s jobs, committing answers as they come (:func:`execute_parts`)."""
    t0 = time.perf_counter()
    parts, results, counts, owner, groups = plan.parts, plan.results, plan.counts, plan.owner, plan.groups
    pending_keys, fp = plan.pending_keys, plan.fingerprint
    labels = [part.label or "answering" for part in parts]
    left = [len(part.attempts) - plan.ready[n] for n, part in enumerate(parts)]  # attempts still unanswered
    out: list[Execution] = []
    start = 0
    for n, part in enumerate(parts):
        out.append(Execution(results[start : start + len(part.attempts)], counts[n]))
        start += len(part.attempts)
    reported = [False] * len(parts)

    def done(n: int) -> None:
        if not reported[n]:
            reported[n] = True
            counts[n].seconds = time.perf_counter() - t0
            if on_done is not None:
                on_done(n, out[n])

    if progress is not None:
        for n, part in enumerate(parts):
            progress.add(labels[n], total=len(part.attempts), cached=plan.ready[n])

    writer: StoreWriter | None = None  # started just before the backend is asked

    def emit(job: Job, outcome: Outcome) -> None:
        idx = groups[pending_keys[job.index]]
        if outcome.ok and outcome.response is not _SKIP:
            problem = response_problem(job.request.kind, outcome.response)
            if problem is not None:  # never store or score a malformed answer
                outcome = Outcome(error=problem)
        if outcome.ok and outcome.response is not _SKIP:
            if writer is not None:  # committed within COMMIT_SECONDS: a rerun does not ask it again
                k = pending_keys[job.index]
                writer.add((k, fp, job.request.kind, job.trial, job.request.canonical(), outcome.response))
            for i in idx:
                results[i].response = outcome.response
        elif outcome.response is _SKIP:
            for i in idx:
                results[i].skipped = True
                counts[owner[i]].skipped += 1
        else:
            for i in idx:
                results[i].error = outcome.error
                counts[owner[i]].errors += 1
        for i in idx:
            o = owner[i]
            left[o] -= 1
            if progress is not None:
                progress.advance(1, labels[o])
            if not left[o]:
                done(o)

    for n in range(len(parts)):
        if not left[n]:  # nothing to ask (all from the store or given)
            done(n)
    for job, problem in plan.bad:
        emit(job, Outcome(error=problem))
    if plan.jobs:
        hint = generation_hint(plan.jobs, backend)  # a local CPU model asked for many new tokens
        if hint and progress is not None:
            progress.hint(hint)
        if plan.caching:
            writer = StoreWriter(store)  # type: ignore[arg-type]
        try:
            backend.answer(plan.jobs, emit)
        finally:  # also on Ctrl-C or a backend error: what was emitted is kept
            if writer is not None:
                writer.close()
    for n in range(len(parts)):
        done(n)  # a part whose answers the backend left out (never emitted) is done now
    return out


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


def settle_gc() -> None:
    """Move every object the cyclic collector tracks into its oldest generation without a pass over them
    (``gc.freeze`` then ``gc.unfreeze``), after a burst such as importing torch and loading a model: the
    young-generation passes that would walk its few hundred thousand objects (~0.6 s) are skipped, and
    they are collected at the next full pass like any old object.  Inside :func:`frozen_gc`, or wherever
    objects are frozen already, they are frozen along with those and released when those are."""
    frozen_before = gc.get_freeze_count() > 0
    gc.freeze()
    if not frozen_before:
        gc.unfreeze()


@contextlib.contextmanager
def frozen_gc() -> Iterator[None]:
    """Keep the objects alive now (a run's attempts: ~10 per request, a million for a suite) out of the
    cyclic garbage collector's passes until the end of the block (``gc.freeze``): each full pass over
    them cost ~0.1 s of an HTTP run's event loop.  They rejoin the collected generations afterwards."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


class _SkipMarker:
    """Response value a replay backend emits for an answer it does not have (``--replay-missing skip``)."""

    def __repr__(self) -> str:
        return "SKIP"


_SKIP = _SkipMarker()
SKIP = _SKIP
