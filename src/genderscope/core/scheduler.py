"""Answer the rounds of every task of a run together, so that a model server sees one stream.

A task asks in rounds (``attempts()``, then ``next_attempts(results)`` until it returns nothing).  The
scheduler works in waves: each wave takes the current round of every unfinished task and answers them in
one pass (:func:`genderscope.core.runner.execute_parts`: one store lookup, one ``backend.answer`` call,
identical requests of different tasks asked once), gives each task its own results, then asks each task
for its next round.  So the requests of all tasks are in flight together and the backend's worker pool
drains once per wave instead of once per task round.  With such a (cacheable) backend, a task whose round
has all its answers is asked for its next round, and scored (``finish``) once it asks nothing more, on one
helper thread while the other tasks' requests are still in flight.

Backends that are not cacheable (in-process: ``random``, ``replay``) gain nothing from a shared call; they
get one call per task round, exactly the batches of a task-by-task run, so their answers and errors (a
replay's missing answers) stay those of that task.  Answers are committed to the store as they arrive,
as in a task-by-task run, so a killed run resumes through the store at any wave.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from genderscope.core.backend import Backend
from genderscope.core.requests import Attempt, AttemptResult
from genderscope.core.runner import Execution, Part, RunCounts, execute_parts, paused_gc
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
    states = []
    for t in tasks:
        with paused_gc():
            states.append(_Rounds(t, list(t.attempts())))
    if backend.cacheable:
        with ThreadPoolExecutor(1, thread_name_prefix="genderscope-rounds") as helper:
            try:
                _waves(states, backend, store, use_cache, progress, drop, helper, finish)
            except BaseException:
                helper.shutdown(wait=True, cancel_futures=True)
                raise
    else:
        _waves(states, backend, store, use_cache, progress, drop, None, None)
        for s in states:
            if finish is not None and not s.dropped:
                finish(s.task, Execution(s.results, s.counts))
    return [None if s.dropped else Execution(s.results, s.counts) for s in states]


def _waves(
    states: list[_Rounds],
    backend: Backend,
    store: ResponseStore | None,
    use_cache: bool,
    progress: Any,
    drop: DropTask | None,
    helper: ThreadPoolExecutor | None,
    finish: Finish | None,
) -> None:
    """Answer waves until no task asks anything more.  With a ``helper`` thread, a task's next round (and,
    when it has none, ``finish``) is worked out there as soon as its round's last answer is in, while the
    other tasks' requests are still in flight."""
    while True:
        active = [s for s in states if s.pending and not s.dropped]
        if not active:
            return
        calls = [active] if backend.cacheable else [[s] for s in active]
        waiting: list[Future[None]] = []
        for call in calls:
            if helper is None:
                _answer(call, backend, store, use_cache, progress, drop, None)
                continue

            def on_done(
                n: int, ex: Execution, call: list[_Rounds] = call, pool: ThreadPoolExecutor = helper
            ) -> None:
                _add(call[n], ex)
                waiting.append(pool.submit(_advance, call[n], finish))  # noqa: B023 - one wave's list

            _answer(call, backend, store, use_cache, progress, drop, on_done)
        for f in waiting:
            f.result()  # a task's error (next round, scoring) stops the run here, as before
        for s in active:
            if helper is None and not s.dropped:
                _advance(s, None)
            if not s.pending and not s.dropped and progress is not None:
                progress.finish(s.label)


def _advance(s: _Rounds, finish: Finish | None) -> None:
    """Ask ``s``'s task for its next round; ``finish`` it when it asks nothing more."""
    with paused_gc():
        s.pending = list(s.task.next_attempts(s.results))
    if not s.pending and finish is not None:
        finish(s.task, Execution(s.results, s.counts))


def _add(s: _Rounds, ex: Execution) -> None:
    s.counts.add(ex.counts)
    s.counts.rounds += 1
    s.results.extend(ex.results)


def _answer(
    call: list[_Rounds],
    backend: Backend,
    store: ResponseStore | None,
    use_cache: bool,
    progress: Any,
    drop: DropTask | None,
    on_done: Callable[[int, Execution], None] | None,
) -> None:
    """One pass over the current rounds of ``call``'s tasks; each task's results and counts added to it
    (by ``on_done`` as each task's round completes, if given)."""
    parts = [Part(s.pending, s.label, s.label) for s in call]
    try:
        done = execute_parts(parts, backend, store, use_cache=use_cache, progress=progress, on_done=on_done)
    except Exception as exc:
        if len(call) == 1 and drop is not None and drop(call[0].task, exc):
            call[0].dropped = True
            return
        raise
    if on_done is None:
        for s, ex in zip(call, done):
            _add(s, ex)
