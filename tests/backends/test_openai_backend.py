"""The openai backend against the loopback fake server: retries, matching, fail-fast, caching."""

from __future__ import annotations

import email.utils
import json
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from genderscope.backends.openai.chat import (
    built_chat_body,
    OpenAIChatBackend,
    OpenAIOptions,
    chat_body,
    chat_content,
)
from genderscope.backends.openai.http import backoff_delay, parse_retry_after
from genderscope.backends.openai.http import client_error_hint
from genderscope.common.errors import BackendError, UsageError
from genderscope.core.options import build_options
from genderscope.core.request_value import CHAT, Request
from genderscope.core.requests import Job, Outcome, request_seed
from genderscope_dev.fake_openai import FakeConfig, FakeOpenAIServer, expected_answer, prompt_ref

FAST = {"backoff_base": 0.01, "backoff_max": 0.05}


@pytest.fixture
def server():
    with FakeOpenAIServer(FakeConfig()) as srv:
        yield srv


def make_jobs(n: int, trials: int = 1, prefix: str = "prompt") -> list[Job]:
    jobs = []
    for i in range(n):
        req = Request(
            CHAT,
            {
                "messages": [{"role": "user", "content": f"{prefix} {i}: who said it?"}],
                "temperature": 1.0,
                "max_tokens": 300,
                "top_p": 1.0,
            },
        )
        for t in range(1, trials + 1):
            jobs.append(Job(index=len(jobs), request=req, trial=t, item_id=f"item/{i}"))
    return jobs


def answer_all(backend: OpenAIChatBackend, jobs: list[Job]) -> dict[int, list[Outcome]]:
    got: dict[int, list[Outcome]] = {}
    backend.answer(jobs, lambda job, out: got.setdefault(job.index, []).append(out))
    return got


def backend_for(srv: Any, model: str = "fake", **opts: Any) -> OpenAIChatBackend:
    return OpenAIChatBackend(model, OpenAIOptions(base_url=srv.url, **opts))


def cli(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[int, str, str]:
    """Run the real CLI entry point in this process; returns (exit code, stdout, stderr)."""
    import genderscope.cli.app as cli_mod

    monkeypatch.setattr(sys, "argv", ["genderscope", *args, "--no-progress"])
    capsys.readouterr()
    with pytest.raises(SystemExit) as exc:
        cli_mod.main()
        raise SystemExit(0)
    out, err = capsys.readouterr()
    return int(exc.value.code or 0), out, err


def run_gest(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    server: FakeOpenAIServer,
    out: Path,
    limit: int,
    *extra: str,
) -> tuple[int, str, str]:
    """``genderscope run gest --model openai:fake`` against ``server`` with ``--limit``, ``extra``
    options and ``--out``; returns (exit code, stdout, stderr)."""
    return cli(
        monkeypatch,
        capsys,
        *("run", "gest", "--model", "openai:fake", "--base-url", server.url, "--limit", str(limit)),
        *extra,
        *("--out", str(out)),
    )


def store_rows(home: Path) -> list[tuple[str, str, str]]:
    db = sqlite3.connect(home / "store.sqlite")
    rows = db.execute("SELECT key, request, response FROM responses").fetchall()
    db.close()
    return rows


# -- answers and concurrency ---------------------------------------------------------------


def test_answers_match_prompts_under_concurrency_64(server: FakeOpenAIServer) -> None:
    server.configure(latency=0.01)
    jobs = make_jobs(400, trials=2)
    got = answer_all(backend_for(server, concurrency=64), jobs)
    assert sorted(got) == [j.index for j in jobs]
    for job in jobs:
        assert len(got[job.index]) == 1, "every job is emitted exactly once"
        prompt = job.request.payload["messages"][-1]["content"]
        assert got[job.index][0].response == expected_answer(
            prompt, seed=request_seed(job.request, job.trial)
        )
        assert f"[{prompt_ref(prompt)}]" in got[job.index][0].response
    s = server.stats()
    assert s["requests"] == len(jobs)
    assert 32 <= s["max_in_flight"] <= 64, "requests overlap, but never more than --concurrency"


def test_concurrency_bound_is_respected(server: FakeOpenAIServer) -> None:
    server.configure(latency=0.02)
    answer_all(backend_for(server, concurrency=5), make_jobs(60))
    assert server.stats()["max_in_flight"] == 5


def test_request_payload_carries_sampling_parameters_and_seed(server: FakeOpenAIServer) -> None:
    jobs = make_jobs(1, trials=3)
    answer_all(backend_for(server, model="my-model"), jobs[2:])
    body = server.stats()["last_body"]
    assert body["model"] == "my-model"
    assert (body["temperature"], body["max_tokens"], body["top_p"], body["seed"]) == (
        1.0,
        300,
        1.0,
        request_seed(jobs[2].request, 3),
    )
    assert body["messages"] == jobs[0].request.payload["messages"]
    server.reset()
    answer_all(backend_for(server, send_seed=False), jobs)
    s = server.stats()
    assert s["with_seed"] == 0 and "seed" not in s["last_body"]
    answer_all(backend_for(server, max_tokens_field="max_completion_tokens"), jobs[:1])
    body = server.stats()["last_body"]
    assert body["max_completion_tokens"] == 300 and "max_tokens" not in body


# -- retries -------------------------------------------------------------------------------


@pytest.mark.parametrize("fault", ["429", "500", "503", "malformed", "drop", "timeout"])
def test_retries_recover_from(server: FakeOpenAIServer, fault: str) -> None:
    server.configure(schedule=[fault, fault], timeout_sleep=3.0)
    jobs = make_jobs(16)
    backend = backend_for(server, concurrency=16, max_retries=3, timeout=0.3, **FAST)
    got = answer_all(backend, jobs)
    for job in jobs:
        prompt = job.request.payload["messages"][-1]["content"]
        assert [o.response for o in got[job.index]] == [
            expected_answer(prompt, seed=request_seed(job.request, 1))
        ]
    s = server.stats()
    assert set(s["by_prompt"].values()) == {3}, "two failures then one success per prompt"
    assert backend.stats()["retries"] == 32 and backend.stats()["failed_jobs"] == 0
    reason = {
        "429": "429",
        "500": "500",
        "503": "503",
        "malformed": "malformed",
        "drop": "connection",
        "timeout": "timeout",
    }[fault]
    assert backend.stats()["retry_reasons"] == {reason: 32}


def test_a_request_that_keeps_timing_out_names_the_fix(server: FakeOpenAIServer) -> None:
    """Retries spent on timeouts: the job's error says the server was slower than --timeout and what to
    change (the default is lm-eval's 300 s)."""
    assert backend_for(server).options.timeout == 300.0
    jobs = make_jobs(2)
    backend = backend_for(server, concurrency=1, max_retries=2, timeout=0.2, **FAST)
    assert all(o.ok for outs in answer_all(backend, jobs[:1]).values() for o in outs)
    server.configure(schedule=["timeout"] * 3, timeout_sleep=2.0)
    got = answer_all(backend, jobs[1:])
    errors = [o.error for outs in got.values() for o in outs if not o.ok]
    assert errors == [
        "timeout after 0.2 s (gave up after 3 attempts; the server was slower than --timeout 0.2: "
        "raise it or lower --concurrency)"
    ]


def test_retry_after_is_honoured(server: FakeOpenAIServer) -> None:
    server.configure(schedule=["429"], retry_after="1")
    t0 = time.perf_counter()
    got = answer_all(backend_for(server, backoff_base=0.0), make_jobs(3))
    assert time.perf_counter() - t0 >= 1.0
    assert all(o[0].ok for o in got.values())


def test_seeded_random_faults_recover_and_nothing_is_stored_twice(
    server: FakeOpenAIServer, tmp_path: Path, monkeypatch, capsys
) -> None:
    server.configure(fault_rate=0.3, seed=7, faults=["429", "500", "malformed", "drop"], latency=0.002)
    retries = ("--concurrency", "64", "--backoff-base", "0.01", "--max-retries", "8")
    code, _out, err = run_gest(monkeypatch, capsys, server, tmp_path / "r", 40, *retries)
    assert code == 0, err
    s = server.stats()
    assert sum(s["faults"].values()) > 20
    home = Path(__import__("os").environ["GENDERSCOPE_HOME"])
    rows = store_rows(home)
    assert len(rows) == len({r[0] for r in rows}) == 240 == len(s["by_prompt"])
    assert s["requests"] == 240 + sum(s["faults"].values())
    for _key, request, response in rows:
        prompt = json.loads(request)["payload"]["messages"][-1]["content"]
        assert f"[{prompt_ref(prompt)}]" in json.loads(response), "answers stay matched to their prompts"
    db = sqlite3.connect(home / "store.sqlite")
    stored = db.execute("SELECT trial, request, response FROM responses").fetchall()
    db.close()
    for trial, request, response in stored:
        req = Request(**json.loads(request))
        seed = request_seed(req, trial)
        assert 0 <= seed < 2**31
        assert json.loads(response) == expected_answer(req.prompt_text, seed=seed), (
            "seeded per (request, trial)"
        )
    run = json.loads((tmp_path / "r" / "run.json").read_text())
    assert run["backend_stats"]["retries"] == sum(s["faults"].values())


def test_exhausted_retries_give_an_error_outcome_and_exit_code_3(server: FakeOpenAIServer) -> None:
    jobs = make_jobs(2)
    got: dict[int, Outcome] = {}

    def emit(job: Job, out: Outcome) -> None:
        got[job.index] = out
        server.configure(status=500)  # the server breaks after the first answer

    backend = backend_for(server, concurrency=1, max_retries=2, **FAST)
    backend.answer(jobs, emit)
    assert got[0].ok and not got[1].ok
    assert "HTTP 500" in got[1].error and "3 attempts" in got[1].error
    assert backend.stats()["failed_jobs"] == 1


def test_cli_exit_code_3_when_some_attempts_fail(
    server: FakeOpenAIServer, tmp_path: Path, monkeypatch, capsys
) -> None:
    server.configure(status=503, status_after=4)
    retries = ("--concurrency", "1", "--max-retries", "1", "--backoff-base", "0")
    code, _out, err = run_gest(monkeypatch, capsys, server, tmp_path / "r", 2, *retries)
    assert code == 3 and "incomplete" in err
    recs = [json.loads(line) for line in (tmp_path / "r" / "attempts.jsonl").read_text().splitlines()]
    assert sum("error" in r for r in recs) == 8 and sum(r["response"] is not None for r in recs) == 4


def test_unreachable_server_fails_fast_with_one_message() -> None:
    import socket

    with socket.socket() as s:  # a port with nobody listening
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    backend = OpenAIChatBackend(
        "fake", OpenAIOptions(base_url=f"http://127.0.0.1:{port}/v1", max_retries=2, **FAST)
    )
    with pytest.raises(BackendError, match=r"gave no answer after 3 attempts.*--base-url"):
        answer_all(backend, make_jobs(50))


def test_null_content_is_stored_as_none_and_counted_undetected(
    server: FakeOpenAIServer, tmp_path: Path, monkeypatch, capsys
) -> None:
    server.configure(schedule=["null"])
    code, _out, err = run_gest(monkeypatch, capsys, server, tmp_path / "r", 3)
    assert code == 0, err
    res = json.loads((tmp_path / "r" / "results.json").read_text())
    assert res["tasks"]["gest"]["metrics"]["undetected_rate_attempts"]["value"] == 1.0


# -- fail fast -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "status,hint",
    [(400, "rejected the request"), (401, "OPENAI_API_KEY"), (403, "no access"), (404, "model name")],
)
def test_non_retryable_status_fails_fast_through_the_cli(
    server: FakeOpenAIServer, tmp_path: Path, monkeypatch, capsys, status: int, hint: str
) -> None:
    server.configure(status=status, status_after=30)
    code, _out, err = run_gest(monkeypatch, capsys, server, tmp_path / "r", 20, "--concurrency", "4")
    assert code == 2
    lines = [ln for ln in err.strip().splitlines() if ln.strip()]
    assert len(lines) == 1 and f"HTTP {status}" in lines[0] and hint in lines[0], err
    s = server.stats()
    assert s["requests"] <= 30 + 4, "no retries after a non-retryable status"
    home = Path(__import__("os").environ["GENDERSCOPE_HOME"])
    stored = len(store_rows(home))
    # answers emitted before the failure stay stored (a few answers still in flight may be dropped)
    assert 30 - 4 <= stored <= 30
    server.configure(status=0)
    server.reset()
    code, _out, err = run_gest(monkeypatch, capsys, server, tmp_path / "r2", 20, "--concurrency", "4")
    assert code == 0, err
    assert server.stats()["requests"] == 120 - stored


def test_unknown_model_404_from_server(server: FakeOpenAIServer) -> None:
    server.configure(models=["real-model"])
    with pytest.raises(BackendError, match=r"HTTP 404 for model 'nope'.*does not exist"):
        answer_all(backend_for(server, model="nope"), make_jobs(3))
    assert answer_all(backend_for(server, model="real-model"), make_jobs(3))[0][0].ok


# -- keys ------------------------------------------------------------------------------------


def test_missing_api_key_is_a_clear_error(monkeypatch, capsys, tmp_path: Path) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    code, _out, err = cli(
        monkeypatch,
        capsys,
        "run",
        "gest",
        "--model",
        "openai:gpt-4o-mini",
        "--limit",
        "2",
        "--out",
        str(tmp_path / "r"),
    )
    assert code == 2 and "OPENAI_API_KEY" in err and len(err.strip().splitlines()) == 1
    monkeypatch.setenv("OPENAI_BASE_URL", "https://llm.example.org/v1")
    with pytest.raises(BackendError, match="MY_KEY"):
        OpenAIChatBackend("m", OpenAIOptions(api_key_env="MY_KEY"))


def test_key_is_sent_but_never_written(server: FakeOpenAIServer, tmp_path: Path, monkeypatch, capsys) -> None:
    secret = "sk-test-5ecret-abc123"
    server.configure(api_key=secret)
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    code, _out, err = run_gest(monkeypatch, capsys, server, tmp_path / "r", 2)
    assert code == 0, err
    s = server.stats()
    assert s["with_auth"] == s["requests"] == 12
    home = Path(__import__("os").environ["GENDERSCOPE_HOME"])
    for f in list((tmp_path / "r").iterdir()) + list(home.glob("store.sqlite*")):
        assert secret.encode() not in f.read_bytes(), f
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong-key-999")
    code, _out, err = run_gest(monkeypatch, capsys, server, tmp_path / "r2", 3)
    assert code == 2 and "HTTP 401" in err and "sk-wrong-key-999" not in err


def test_fingerprint_and_description_hold_no_secret(monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-hidden")
    b = OpenAIChatBackend("gpt-4o-mini", OpenAIOptions(base_url="https://user:pw@api.example.com:8443/v1"))
    assert b.fingerprint == "openai:gpt-4o-mini", "the store is keyed by model, never by server URL"
    text = json.dumps(b.describe())
    assert "sk-hidden" not in text and "pw" not in text


# -- caching ---------------------------------------------------------------------------------


def test_rerun_makes_zero_requests_and_no_cache_bypasses(
    server: FakeOpenAIServer, tmp_path: Path, monkeypatch, capsys
) -> None:
    args = ["run", "gest", "--model", "openai:fake", "--base-url", server.url, "--limit", "10"]
    assert cli(monkeypatch, capsys, *args, "--out", str(tmp_path / "a"))[0] == 0
    assert server.stats()["requests"] == 60
    home = Path(__import__("os").environ["GENDERSCOPE_HOME"])
    assert len(store_rows(home)) == 60
    server.reset()
    assert cli(monkeypatch, capsys, *args, "--out", str(tmp_path / "b"))[0] == 0
    assert server.stats()["requests"] == 0
    assert (tmp_path / "a" / "results.json").read_text() == (tmp_path / "b" / "results.json").read_text()
    assert cli(monkeypatch, capsys, *args, "--no-cache", "--out", str(tmp_path / "c"))[0] == 0
    assert server.stats()["requests"] == 60
    assert len(store_rows(home)) == 60
    # a different sampling parameter is a different request: not served from the store
    assert cli(monkeypatch, capsys, *args, "--temperature", "0", "--out", str(tmp_path / "d"))[0] == 0
    assert server.stats()["requests"] == 120 and len(store_rows(home)) == 120


# -- units -----------------------------------------------------------------------------------


def test_parse_retry_after() -> None:
    assert parse_retry_after("7") == 7.0
    assert parse_retry_after("1.5") == 1.5
    assert parse_retry_after(None) is None and parse_retry_after("soon") is None
    now = time.time()
    date = email.utils.formatdate(now + 30, usegmt=True)
    assert 28 <= parse_retry_after(date, now=now) <= 31
    assert parse_retry_after(email.utils.formatdate(now - 100, usegmt=True), now=now) == 0.0


@given(st.integers(0, 20), st.floats(0, 5), st.floats(0, 60), st.integers(0, 2**32))
def test_backoff_is_full_jitter_within_the_cap(retry: int, base: float, cap: float, seed: int) -> None:
    import random

    d = backoff_delay(retry, base, cap, random.Random(seed))
    assert 0 <= d <= min(cap, base * 2**retry) + 1e-12


def test_chat_content() -> None:
    body = {"choices": [{"message": {"role": "assistant", "content": "(a)"}}]}
    assert chat_content(json.dumps(body).encode()) == "(a)"
    body["choices"][0]["message"]["content"] = None
    assert chat_content(json.dumps(body).encode()) is None
    for bad in (
        b"",
        b"{",
        b"[]",
        b'{"choices": []}',
        b'{"error": {"message": "x"}}',
        b'{"choices": [{"message": {"content": 3}}]}',
    ):
        with pytest.raises(ValueError):
            chat_content(bad)


@settings(max_examples=200)
@given(st.binary(max_size=200))
def test_chat_content_raises_only_value_error_on_garbage(raw: bytes) -> None:
    try:
        out = chat_content(raw)
    except ValueError:
        return
    assert out is None or isinstance(out, str)


def test_bad_options_are_usage_errors() -> None:
    with pytest.raises(UsageError, match="--concurrency"):
        build_options(OpenAIOptions, {"concurrency": "0"}, "model kind 'openai'")
    with pytest.raises(UsageError, match="not an http"):
        OpenAIChatBackend("m", OpenAIOptions(base_url="127.0.0.1:8000/v1"))


def test_answer_works_inside_a_running_event_loop(server: FakeOpenAIServer) -> None:
    """Notebooks run an event loop already; the backend must still answer (on a helper thread)."""
    import asyncio

    async def notebook_cell() -> dict[int, list[Outcome]]:
        return answer_all(backend_for(server), make_jobs(5))

    got = asyncio.run(notebook_cell())
    assert len(got) == 5 and all(o[0].ok for o in got.values())


@given(
    text=st.text(max_size=200),
    temperature=st.floats(0, 2, allow_nan=False),
    trial=st.integers(1, 10**6),
)
@settings(max_examples=300, deadline=None)
def test_request_seed_is_an_int31_that_every_server_accepts(
    text: str, temperature: float, trial: int
) -> None:
    req = Request(CHAT, {"messages": [{"role": "user", "content": text}], "temperature": temperature})
    seed = request_seed(req, trial)
    assert 0 <= seed < 2**31
    assert seed == request_seed(Request(CHAT, dict(req.payload)), trial), "a function of the request alone"


def test_seed_does_not_depend_on_the_item_id() -> None:
    req = Request(CHAT, {"messages": [{"role": "user", "content": "Who said it?"}], "temperature": 1.0})
    a = Job(index=0, request=req, trial=2, item_id="item-1")
    b = Job(index=5, request=req, trial=2, item_id="another-item")
    assert json.loads(chat_body("m", a, True))["seed"] == json.loads(chat_body("m", b, True))["seed"]


@pytest.mark.parametrize(
    "body, field, fix",
    [
        (
            {
                "error": {
                    "message": "1 validation error: body.seed: Input should be less than or equal to "
                    "9223372036854775807",
                    "type": "BadRequestError",
                    "param": None,
                    "code": 400,
                }
            },
            "seed",
            "--send-seed false",
        ),
        ({"error": {"message": "bad", "param": "max_tokens"}}, "max_tokens", "--max-tokens"),
        ({"detail": [{"loc": ("body", "temperature"), "msg": "x"}]}, "temperature", "--temperature"),
    ],
)
def test_a_4xx_that_names_a_field_gives_an_error_naming_it(body: dict, field: str, fix: str) -> None:
    raw = json.dumps(body).encode() if "detail" not in body else repr(body).encode()
    hint = client_error_hint(400, raw)
    assert f"field {field!r}" in hint and fix in hint


def test_a_4xx_without_a_field_keeps_the_status_hint() -> None:
    assert "--max-tokens" in client_error_hint(400, b'{"error": {"message": "nope"}}')


_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)
_VALUE = st.one_of(
    st.none(), st.integers(-5, 5000), st.floats(0, 2, allow_nan=False), _TEXT, st.lists(_TEXT, max_size=3)
)
_MESSAGE = st.fixed_dictionaries({"role": st.sampled_from(["system", "user", "assistant"]), "content": _TEXT})


@settings(max_examples=300, deadline=None)
@given(
    messages=st.lists(_MESSAGE, min_size=1, max_size=3),
    fields=st.dictionaries(
        st.sampled_from(["temperature", "top_p", "stop", "max_tokens", "presence_penalty", "n", "logprobs"]),
        _VALUE,
        max_size=4,
    ),
    model=_TEXT,
    trial=st.integers(1, 30),
    send_seed=st.booleans(),
    field=st.sampled_from(["max_tokens", "max_completion_tokens"]),
)
def test_a_chat_body_spliced_from_the_canonical_text_is_the_json_of_the_built_one(
    messages: list[dict[str, Any]],
    fields: dict[str, Any],
    model: str,
    trial: int,
    send_seed: bool,
    field: str,
) -> None:
    job = Job(0, Request(CHAT, {"messages": messages, **fields}), trial, "item")
    body = chat_body(model, job, send_seed, field)
    assert json.loads(body) == json.loads(built_chat_body(model, job, send_seed, field))


def test_a_typical_chat_body_is_the_canonical_payload_with_model_and_seed_in_front() -> None:
    req = Request(
        CHAT, {"messages": [{"role": "user", "content": "Né “x”"}], "temperature": 1.0, "max_tokens": 9}
    )
    seed = request_seed(req, 2)
    body = chat_body("m", Job(0, req, 2, "i"), True)
    assert (
        body
        == (
            '{"model":"m","seed":%d,"max_tokens":9,"messages":[{"content":"Né “x”","role":"user"}],'
            '"temperature":1.0}' % seed
        ).encode()
    )
    assert chat_body("m", Job(0, req, 2, "i"), True, "max_completion_tokens") == built_chat_body(
        "m", Job(0, req, 2, "i"), True, "max_completion_tokens"
    )
