"""Answer the rounds of every task of a run together, so that a model server sees one stream.

A task asks in rounds (``attempts()``, then ``next_attempts(results)`` until it returns nothing).  The
scheduler works in waves: each wave takes the current round of every unfinished task and answers them in
one pass (:func:`genderscope.core.runner.execute_parts`: one store lookup, one ``backend.answer`` call,
identical requests of different tasks asked once), gives each task its own results, then asks each task
for its next round.  So the requests of all tasks are in flight together and the backend's worker pool
drains once per wave instead of once per task round.

Backends that are not cacheable (in-process: ``random``, ``replay``) gain nothing from a shared call; they
get one call per task round, exactly the batches of a task-by-task run, so their answers and errors (a
replay's missing answers) stay those of that task.  Answers are committed to the store as they arrive,
as in a task-by-task run, so a killed run resumes through the store at any wave.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from genderscope.core.backend import Backend
from genderscope.core.requests import Attempt, AttemptResult
from genderscope.core.runner import Execution, Part, RunCounts, execute_parts, paused_gc
from genderscope.core.store import ResponseStore

#: called with a task and the exception its own backend call raised: True leaves the task out of the run
#: (the others go on), False re-raises
DropTask = Callable[[Any, BaseException], bool]


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
) -> list[Execution | None]:
    """Answer every round of ``tasks`` in waves (module docstring); one :class:`Execution` per task, in
    task order, its results in the order of its rounds, or None for a task that ``drop`` left out."""
    states = []
    for t in tasks:
        with paused_gc():
            states.append(_Rounds(t, list(t.attempts())))
    while True:
        active = [s for s in states if s.pending and not s.dropped]
        if not active:
            break
        calls = [active] if backend.cacheable else [[s] for s in active]
        for call in calls:
            _answer(call, backend, store, use_cache, progress, drop)
        for s in active:
            if s.dropped:
                continue
            with paused_gc():
                s.pending = list(s.task.next_attempts(s.results))
            if not s.pending and progress is not None:
                progress.finish(s.label)
    return [None if s.dropped else Execution(s.results, s.counts) for s in states]


def _answer(
    call: list[_Rounds],
    backend: Backend,
    store: ResponseStore | None,
    use_cache: bool,
    progress: Any,
    drop: DropTask | None,
) -> None:
    """One pass over the current rounds of ``call``'s tasks; each task's results and counts added to it."""
    parts = [Part(s.pending, s.label, s.label) for s in call]
    try:
        done = execute_parts(parts, backend, store, use_cache=use_cache, progress=progress)
    except Exception as exc:
        if len(call) == 1 and drop is not None and drop(call[0].task, exc):
            call[0].dropped = True
            return
        raise
    for s, ex in zip(call, done):
        s.counts.add(ex.counts)
        s.counts.rounds += 1
        s.results.extend(ex.results)
