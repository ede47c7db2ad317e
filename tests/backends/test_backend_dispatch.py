"""One dispatch: backends declare a handler per request kind, the base class routes and owns the one
"cannot answer" error, the runner rejects undeclared kinds before anything is sent."""

from __future__ import annotations

from typing import Any

import pytest

from genderscope import catalogue as registry
from genderscope.core import lookup
from genderscope.backends.openai.chat import OpenAIChatBackend, OpenAIOptions
from genderscope.core.backend import Backend, Emit, handles
from genderscope.common.errors import UnsupportedKindError, UsageError
from genderscope.core.primitives import ALL_KINDS, CHAT, FILL_MASK, GENERATE, TOKEN_LOGPROBS, TOKENIZE
from genderscope.core.requests import GIVEN, Attempt, Job, Outcome
from genderscope.core.request_value import Request
from genderscope.core.runner import execute, execute_task
from genderscope.core.store import ResponseStore
from genderscope_dev.fake_openai import FakeConfig, FakeOpenAIServer


class Recorder(Backend):
    """Answers chat one way, tokenize and token_logprobs in one handler; records every call."""

    kind = "recorder"
    description = "test backend"

    def __init__(self, target: str = "m", options: Any = None):
        super().__init__(target, options)
        self.calls: list[tuple[str, list[str]]] = []
        self.prepared: list[frozenset[str]] = []

    @property
    def fingerprint(self) -> str:
        return "recorder"

    def prepare(self, kinds: frozenset[str]) -> None:
        self.prepared.append(kinds)

    @handles(CHAT)
    def chat_jobs(self, jobs: list[Job], emit: Emit) -> None:
        self.calls.append(("chat", [j.item_id for j in jobs]))
        for j in jobs:
            emit(j, Outcome(response="A"))

    @handles(TOKENIZE, TOKEN_LOGPROBS)
    def text_jobs(self, jobs: list[Job], emit: Emit) -> None:
        self.calls.append(("text", [j.item_id for j in jobs]))
        for j in jobs:
            emit(j, Outcome(error="not really"))


def chat(i: int) -> Request:
    return Request(CHAT, {"messages": [{"role": "user", "content": f"q{i}"}]})


def text(kind: str, i: int) -> Request:
    return Request(kind, {"text": f"t{i}"})


def test_request_kinds_are_derived_from_the_handlers():
    assert Recorder.request_kinds == {CHAT, TOKENIZE, TOKEN_LOGPROBS}
    assert set(Recorder.handlers) == Recorder.request_kinds
    for kind in registry.BACKENDS:  # every registered backend declares kinds through handlers
        cls = lookup.load(registry.BACKENDS[kind])
        assert cls.request_kinds and set(cls.handlers) == cls.request_kinds, kind
    assert lookup.load(registry.BACKENDS["replay"]).request_kinds == ALL_KINDS
    assert lookup.load(registry.BACKENDS["random"]).request_kinds == ALL_KINDS


def test_a_subclass_inherits_handlers_and_may_replace_one():
    class Louder(Recorder):
        @handles(CHAT)
        def shout(self, jobs: list[Job], emit: Emit) -> None:
            for j in jobs:
                emit(j, Outcome(response="B"))

    got: dict[int, Outcome] = {}
    Louder().answer([Job(0, chat(0), 1, "a")], lambda j, o: got.__setitem__(j.index, o))
    assert got[0].response == "B" and Louder.request_kinds == Recorder.request_kinds


def test_the_base_class_routes_each_kind_to_its_handler_in_one_call():
    b = Recorder()
    reqs = [chat(0), text(TOKENIZE, 1), chat(2), text(TOKEN_LOGPROBS, 3), text(TOKENIZE, 4)]
    jobs = [Job(i, r, 1, f"i{i}") for i, r in enumerate(reqs)]
    got: dict[int, Outcome] = {}
    b.answer(jobs, lambda j, o: got.__setitem__(j.index, o))
    # one call per handler with all of its jobs, in job order; one prepare with the kinds present
    assert b.calls == [("chat", ["i0", "i2"]), ("text", ["i1", "i3", "i4"])]
    assert b.prepared == [frozenset({CHAT, TOKENIZE, TOKEN_LOGPROBS})]
    assert [got[i].response for i in (0, 2)] == ["A", "A"] and got[1].error == "not really"
    b.answer([], lambda j, o: None)
    assert len(b.prepared) == 1  # nothing to answer: no prepare (no model load)


def test_the_base_class_owns_the_one_cannot_answer_error():
    b = Recorder()
    jobs = [Job(0, chat(0), 1, "a"), Job(1, Request(FILL_MASK, {"text": "[MASK]"}), 1, "b")]
    with pytest.raises(UnsupportedKindError) as exc:
        b.answer(jobs, lambda j, o: None)
    assert str(exc.value) == (
        "recorder models cannot answer 'fill_mask' requests (they answer chat, token_logprobs, tokenize)"
    )
    assert b.calls == [] and b.prepared == []  # checked before any handler runs
    assert isinstance(exc.value, UsageError)  # the CLI prints it as one line, exit code 2


def test_a_backend_cannot_keep_a_second_list_or_its_own_dispatch():
    with pytest.raises(TypeError, match="one @handles"):

        class Listed(Recorder):
            request_kinds = frozenset({CHAT})

    with pytest.raises(TypeError, match="one @handles"):

        class Routed(Recorder):
            def answer(self, jobs: Any, emit: Emit) -> None:
                pass


class TinyTask:
    name = "tiny"

    def __init__(self, requests: list[Request]):
        self.requests = requests

    def attempts(self) -> list[Attempt]:
        return [Attempt(f"i{n}", 1, r) for n, r in enumerate(self.requests)]

    def next_attempts(self, results: Any) -> list[Attempt]:
        return []


def test_the_runner_rejects_an_undeclared_kind_before_anything_is_sent(tmp_path):
    b = Recorder()
    store = ResponseStore(tmp_path / "store.sqlite")
    task = TinyTask([chat(0), Request(GENERATE, {"prompt": "x", "max_tokens": 3, "seed": 1}), chat(1)])
    with pytest.raises(UnsupportedKindError) as exc:
        execute_task(task, b, store)
    msg = str(exc.value)
    assert msg.startswith("task tiny asks 'generate' requests, which recorder:m cannot answer")
    assert "(recorder models answer chat, token_logprobs, tokenize)" in msg
    able = msg.split("model kinds that answer 'generate': ")[1].split(", ")
    assert {"hf-causal", "openai-completions", "random", "replay", "word-lm"} <= set(able)
    assert "openai" not in able and "hf-mlm" not in able
    assert "\n" not in msg
    assert b.calls == [] and b.prepared == [] and store.info()["responses"] == 0


def test_given_requests_need_no_handler():
    b = Recorder()
    ex = execute([Attempt("g", 1, Request(GIVEN, {"value": 3.5}))], b, None, task="tiny")
    assert ex.results[0].response == 3.5 and b.calls == []


def test_the_runner_sends_no_http_request_for_an_undeclared_kind():
    with FakeOpenAIServer(FakeConfig()) as srv:
        backend = OpenAIChatBackend("fake", OpenAIOptions(base_url=srv.url))
        attempts = [Attempt("a", 1, chat(0)), Attempt("b", 1, Request(TOKEN_LOGPROBS, {"text": "x"}))]
        with pytest.raises(
            UnsupportedKindError,
            match="task gest asks 'token_logprobs' requests, which openai:fake cannot answer",
        ):
            execute(attempts, backend, None, use_cache=False, label="gest")
        assert srv.stats()["requests"] == 0
        # the same backend answers its own kind
        ex = execute(attempts[:1], backend, None, use_cache=False, label="gest")
        assert ex.results[0].ok and srv.stats()["requests"] == 1
