"""The suite scheduler: every task's rounds answered together in waves (one store lookup and one backend
call per wave for a cacheable backend), each task's results in its own order with its own counts."""

from __future__ import annotations

from typing import Any, Sequence

import pytest

from genderscope.core.backend import Backend, Emit, handles
from genderscope.common.errors import MissingResponsesError, UnsupportedKindError
from genderscope.core.primitives import CHAT, GENERATE
from genderscope.core.requests import Attempt, AttemptResult, Job, Outcome
from genderscope.core.request_value import Request
from genderscope.core.runner import execute_task
from genderscope.core.scheduler import run_together
from genderscope.core.store import ResponseStore


def chat(text: str) -> Request:
    return Request(CHAT, {"messages": [{"role": "user", "content": text}]})


class Echo(Backend):
    """Answers a chat with its prompt upper-cased (errors for prompts starting with "bad"); records calls."""

    kind = "echo"
    description = "test backend"
    cacheable = True

    def __init__(self, target: str = "m", options: Any = None):
        super().__init__(target, options)
        self.calls: list[list[str]] = []

    @property
    def fingerprint(self) -> str:
        return "echo"

    @handles(CHAT)
    def chat_jobs(self, jobs: list[Job], emit: Emit) -> None:
        self.calls.append([j.request.payload["messages"][-1]["content"] for j in jobs])
        for j in jobs:
            text = j.request.payload["messages"][-1]["content"]
            emit(j, Outcome(error="no") if text.startswith("bad") else Outcome(response=text.upper()))


class InProcess(Echo):
    kind = "in-process"
    cacheable = False


class Chain:
    """A task of ``rounds`` rounds; round r asks ``width`` prompts built from round r-1's answers."""

    def __init__(self, name: str, rounds: int, width: int = 2, prefix: str = "", fail_at: int | None = None):
        self.name, self.rounds, self.width, self.prefix, self.fail_at = name, rounds, width, prefix, fail_at

    def _round(self, r: int, seen: Sequence[AttemptResult]) -> list[Attempt]:
        if r == self.fail_at:
            raise RuntimeError(f"{self.name} broke at round {r}")
        if r >= self.rounds:
            return []
        last = [str(ar.response) for ar in seen if ar.attempt.round == r - 1]
        head = self.prefix or self.name
        return [
            Attempt(f"{self.name}-{r}-{i}", 1, chat(f"{head} {r} {i} {'|'.join(last)}"), round=r)
            for i in range(self.width)
        ]

    def attempts(self) -> list[Attempt]:
        return self._round(0, [])

    def next_attempts(self, results: Sequence[AttemptResult]) -> list[Attempt]:
        return self._round(results[-1].attempt.round + 1, results)


def alone(tasks: list[Chain], backend: Backend, store: ResponseStore | None) -> list[Any]:
    return [execute_task(t, backend, store, label=t.name) for t in tasks]


def test_tasks_of_different_round_counts_interleave_and_answer_as_alone(tmp_path):
    tasks = [Chain("one", 1), Chain("three", 3), Chain("two", 2, width=3)]
    b = Echo()
    got = run_together(tasks, b, ResponseStore(tmp_path / "a.sqlite"))
    # wave 1: every task's first round in one call; then the tasks that have rounds left
    assert [len(c) for c in b.calls] == [2 + 2 + 3, 2 + 3, 2]
    assert b.calls[0][:2] == ["one 0 0 ", "one 0 1 "]
    ref = alone(tasks, Echo(), ResponseStore(tmp_path / "b.sqlite"))
    for ex, want in zip(got, ref):
        assert ex is not None
        pairs = [(r.attempt, r.response) for r in want.results]
        assert [(r.attempt, r.response) for r in ex.results] == pairs
        assert ex.counts.rounds == want.counts.rounds and ex.counts.requests == want.counts.requests
        assert ex.counts.attempts == want.counts.attempts == len(ex.results)


def test_identical_requests_of_two_tasks_are_asked_once(tmp_path):
    tasks = [Chain("a", 1, prefix="same"), Chain("b", 1, prefix="same"), Chain("c", 1)]
    b = Echo()
    store = ResponseStore(tmp_path / "s.sqlite")
    got = run_together(tasks, b, store)
    assert b.calls == [["same 0 0 ", "same 0 1 ", "c 0 0 ", "c 0 1 "]]
    a, bb, c = (ex.counts for ex in got if ex is not None)
    assert (a.requests, a.shared, bb.requests, bb.shared, c.requests) == (2, 0, 0, 2, 2)
    assert [r.response for r in got[1].results] == ["SAME 0 0 ", "SAME 0 1 "]  # type: ignore[union-attr]
    assert store.info()["responses"] == 4
    again = Echo()
    cached = run_together(tasks, again, store)
    assert again.calls == [] and all(ex is not None and ex.counts.cache_hits == 2 for ex in cached)


def test_in_process_backends_get_one_call_per_task_round():
    tasks = [Chain("one", 1), Chain("two", 2)]
    b = InProcess()
    got = run_together(tasks, b, None)
    assert [len(c) for c in b.calls] == [2, 2, 2]  # the batches of a task-by-task run
    ref = alone(tasks, InProcess(), None)
    want = [[r.response for r in ex.results] for ex in ref]
    assert [[r.response for r in ex.results] for ex in got if ex is not None] == want


def test_a_task_errors_stay_its_own(tmp_path):
    tasks = [Chain("good", 2), Chain("bad", 2)]
    got = run_together(tasks, Echo(), ResponseStore(tmp_path / "s.sqlite"))
    good, bad = got
    assert good is not None and bad is not None
    assert good.counts.errors == 0 and all(r.ok for r in good.results)
    assert bad.counts.errors == 4 and all(r.error == "no" for r in bad.results)


def test_a_failing_task_loses_no_answer_of_the_others(tmp_path):
    store = ResponseStore(tmp_path / "s.sqlite")
    with pytest.raises(RuntimeError, match="late broke at round 1"):
        run_together([Chain("early", 3), Chain("late", 3, fail_at=1)], Echo(), store)
    # the first wave (both tasks' round 0) was committed as it arrived: a rerun asks only the rest
    b = Echo()
    got = run_together([Chain("early", 3), Chain("late", 3)], b, store)
    assert all(ex is not None for ex in got)
    assert [len(c) for c in b.calls] == [2 + 2, 2 + 2]  # rounds 1 and 2; round 0 came from the store
    assert got[0].counts.cache_hits == 2  # type: ignore[union-attr]


def test_a_kind_error_names_its_task_before_anything_is_sent(tmp_path):
    class Generates(Chain):
        def attempts(self) -> list[Attempt]:
            return [Attempt("g", 1, Request(GENERATE, {"prompt": "x", "max_tokens": 3, "seed": 1}))]

    b = Echo()
    store = ResponseStore(tmp_path / "s.sqlite")
    with pytest.raises(UnsupportedKindError, match="^task gen asks 'generate' requests"):
        run_together([Chain("fine", 1), Generates("gen", 1)], b, store)
    assert b.calls == [] and store.info()["responses"] == 0


def test_drop_leaves_a_task_out_and_the_others_go_on():
    class Missing(InProcess):
        @handles(CHAT)
        def chat_jobs(self, jobs: list[Job], emit: Emit) -> None:
            if jobs[0].item_id.startswith("gone"):
                raise MissingResponsesError("no answers", answered=0)
            super().chat_jobs(jobs, emit)

    dropped: list[str] = []

    def drop(task: Any, exc: BaseException) -> bool:
        dropped.append(task.name)
        return isinstance(exc, MissingResponsesError)

    got = run_together([Chain("kept", 2), Chain("gone", 2)], Missing(), None, drop=drop)
    assert dropped == ["gone"] and got[1] is None and got[0] is not None and len(got[0].results) == 4
    with pytest.raises(MissingResponsesError):
        run_together([Chain("gone", 1)], Missing(), None)


def test_a_finished_task_is_scored_while_the_others_are_answered(tmp_path):
    import threading

    scored = threading.Event()

    class Slow(Echo):
        """Answers the tasks' jobs in order; before the last task's, waits until the first is scored."""

        @handles(CHAT)
        def chat_jobs(self, jobs: list[Job], emit: Emit) -> None:
            self.calls.append([])
            for j in jobs:
                if j.item_id.startswith("later") and not self.calls[-1]:
                    self.calls[-1].append("waited" if scored.wait(5) else "timed out")
                emit(j, Outcome(response="x"))

    order: list[str] = []

    def finish(task: Any, ex: Any) -> None:
        order.append(task.name)
        if task.name == "first":
            scored.set()

    b = Slow()
    got = run_together(
        [Chain("first", 1), Chain("later", 1)], b, ResponseStore(tmp_path / "s"), finish=finish
    )
    assert b.calls == [["waited"]] and order == ["first", "later"] and all(ex is not None for ex in got)
    # in-process backends: finished after the last wave, in task order
    order.clear()
    run_together([Chain("two", 2), Chain("one", 1)], InProcess(), None, finish=finish)
    assert order == ["two", "one"]


def test_answers_are_committed_in_batches_and_when_the_backend_is_interrupted(tmp_path, monkeypatch):
    import genderscope.core.runner as runner

    monkeypatch.setattr(runner, "COMMIT_ROWS", 3)
    monkeypatch.setattr(runner, "COMMIT_SECONDS", 3600.0)
    store = ResponseStore(tmp_path / "s.sqlite")
    commits: list[int] = []
    put_many = store.put_many
    monkeypatch.setattr(store, "put_many", lambda rows: (commits.append(len(rows)), put_many(rows)))

    class Interrupted(Echo):
        @handles(CHAT)
        def chat_jobs(self, jobs: list[Job], emit: Emit) -> None:
            for j in jobs[:5]:
                emit(j, Outcome(response="x"))
            raise KeyboardInterrupt

    attempts = [Attempt(f"i{n}", 1, chat(f"p{n}")) for n in range(8)]
    with pytest.raises(KeyboardInterrupt):
        runner.execute(attempts, Interrupted(), store)
    # the writer thread commits once COMMIT_ROWS wait (it may find more by then), and the rest at the end
    assert sum(commits) == 5 and 1 <= len(commits) <= 2 and commits[0] >= 3
    b = Echo()
    got = runner.execute(attempts, b, store)
    assert got.counts.cache_hits == 5 and b.calls == [["p5", "p6", "p7"]]
