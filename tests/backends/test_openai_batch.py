"""The batch route (--batch) against the fake Files and Batches endpoints: splitting, faults (refused,
expired, error lines, cancelled), resume after a kill without a second upload, run.json's record."""

from __future__ import annotations

from repo_paths import ROOT
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from genderscope.backends.openai.batch import batch_line, parse_result_line
from genderscope.backends.openai.chat import OpenAIChatBackend, chat_body
from genderscope.core.engine import run_tasks
from genderscope.common.errors import BackendError
from genderscope.core.options import build_options
from genderscope.core.request_value import CHAT, Request
from genderscope.core.requests import Job, store_key
from genderscope.core.store import ResponseStore
from genderscope_dev.fake_openai import FakeConfig, FakeOpenAIServer, expected_answer

FAST = {"batch": "true", "batch_poll": "0.01", "backoff_base": "0.01", "backoff_max": "0.05"}


def make_jobs(n: int, prefix: str = "prompt") -> list[Job]:
    return [
        Job(
            index=i,
            request=Request(
                CHAT, {"messages": [{"role": "user", "content": f"{prefix} {i}"}], "temperature": 1.0}
            ),
            trial=1,
            item_id=f"item/{i}",
        )
        for i in range(n)
    ]


def batch_backend(srv: FakeOpenAIServer, store: ResponseStore, **extra: str) -> OpenAIChatBackend:
    opts = build_options(OpenAIChatBackend.Options, {"base_url": srv.url, **FAST, **extra}, "openai")
    backend = OpenAIChatBackend("gpt-x", opts)
    backend.bind_store(store)
    return backend


def answer(backend: OpenAIChatBackend, jobs: list[Job]) -> dict[int, list]:
    got: dict[int, list] = {}
    backend.answer(jobs, lambda job, out: got.setdefault(job.index, []).append(out))
    return got


@pytest.fixture
def store(tmp_path):
    s = ResponseStore(tmp_path / "store.sqlite")
    yield s
    s.close()


def test_lines_are_the_online_bodies_and_answers_match(store):
    jobs = make_jobs(12)
    with FakeOpenAIServer(FakeConfig(batch_polls=2)) as srv:
        backend = batch_backend(srv, store, batch_max_requests="5")
        got = answer(backend, jobs)
        stats = srv.stats()
        uploaded = [c for fid, c in _files(srv) if fid.startswith("file-")]
    assert sorted(got) == list(range(12)) and all(len(v) == 1 and v[0].ok for v in got.values())
    for job in jobs:
        seed = json.loads(chat_body("gpt-x", job, True))["seed"]
        assert got[job.index][0].response == expected_answer(f"prompt {job.index}", seed)
    assert stats["batch"]["counts"]["uploads"] == 3  # 12 lines, 5 per file
    st = backend.stats()
    assert st["route"] == "batch" and len(st["batch_ids"]) == 3 and st["batch_lines"] == 12
    assert st["tokens"]["prompt_tokens"] == 24  # two words per prompt on the fake
    # every line is exactly what the online route would POST, keyed by the store key
    first = uploaded[0].splitlines()[0]
    job = jobs[0]
    key = store_key(backend.fingerprint, job.request, job.trial)
    assert first + b"\n" == batch_line(key, "/v1/chat/completions", chat_body("gpt-x", job, True))


def _files(srv: FakeOpenAIServer) -> list[tuple[str, bytes]]:
    return srv._call(lambda: [(k, v[1]) for k, v in srv._state.batches.files.items() if v[0] == "batch"])


def test_split_by_bytes(store):
    jobs = make_jobs(6)
    with FakeOpenAIServer(FakeConfig()) as srv:
        backend = batch_backend(srv, store, batch_max_bytes="1024")
        got = answer(backend, jobs)
        files = _files(srv)
    assert all(v[0].ok for v in got.values()) and len(got) == 6
    assert len(files) > 1 and all(len(c) <= 1024 for _f, c in files)


def test_expired_lines_are_retried_in_a_follow_up(store):
    with FakeOpenAIServer(FakeConfig(batch_schedule=["expire"])) as srv:
        backend = batch_backend(srv, store)
        got = answer(backend, make_jobs(10))
        batches = srv.stats()["batch"]["batches"]
    assert all(v[0].ok for v in got.values())
    assert [b["status"] for b in batches.values()] == ["expired", "completed"]
    assert [b["total"] for b in batches.values()] == [10, 5]
    assert backend.stats()["follow_up_batches"] == 1


def test_error_lines_retried_then_reported_when_retries_run_out(store):
    with FakeOpenAIServer(FakeConfig(batch_schedule=["error_lines", "error_lines"])) as srv:
        backend = batch_backend(srv, store, batch_retries="1")
        got = answer(backend, make_jobs(9))
    failed = {i: v[0].error for i, v in got.items() if not v[0].ok}
    # 3 of 9 fail in the first batch; 1 of those 3 fails again in the follow-up, then it is reported
    assert len(failed) == 1 and "HTTP 500" in next(iter(failed.values()))
    assert backend.stats()["batch_failed_jobs"] == 1


def test_client_errors_are_not_retried(store):
    with FakeOpenAIServer(FakeConfig(batch_schedule=["bad_request"])) as srv:
        backend = batch_backend(srv, store)
        got = answer(backend, make_jobs(6))
        creates = srv.stats()["batch"]["counts"]["creates"]
    assert creates == 1
    assert sum(not v[0].ok for v in got.values()) == 2
    assert all("HTTP 400" in v[0].error for v in got.values() if not v[0].ok)


def test_cancelled_batch_keeps_what_ran(store):
    with FakeOpenAIServer(FakeConfig(batch_schedule=["cancel"])) as srv:
        backend = batch_backend(srv, store)
        got = answer(backend, make_jobs(8))
    errors = [v[0].error for v in got.values() if not v[0].ok]
    assert len(errors) == 4 and all("cancelled" in e for e in errors)


def test_cancel_endpoint(store):
    with FakeOpenAIServer(FakeConfig(batch_schedule=["stall"])) as srv:
        backend = batch_backend(srv, store)
        route_jobs = make_jobs(4)
        from genderscope.backends.openai.batch import make_route

        route = make_route(backend, store, backend.batch_request, backend.batch_parse)
        recs = route._submit(route_jobs, 0)
        route.api.cancel(recs[0].batch_id)
        got: dict[int, list] = {}
        route.answer(route_jobs, lambda job, out: got.setdefault(job.index, []).append(out))
        assert srv.stats()["batch"]["counts"]["cancels"] == 1
    assert all(not v[0].ok and "cancelled" in v[0].error for v in got.values())


def test_refused_batch_stops_with_its_errors(store):
    with FakeOpenAIServer(FakeConfig(batch_schedule=["fail"])) as srv:
        backend = batch_backend(srv, store)
        with pytest.raises(BackendError, match=r"batch batch_000001 was refused: line 1: injected"):
            answer(backend, make_jobs(3))
    rows = store._db.execute("SELECT state FROM batch_jobs").fetchall()
    assert rows == [("failed",)]


def _post(url: str, data: bytes, ctype: str) -> dict:
    req = urllib.request.Request(url, data=data, headers={"Content-Type": ctype}, method="POST")
    with urllib.request.urlopen(req, timeout=10) as resp:
        return json.loads(resp.read())


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        (b'{"custom_id": "a", "method": "POST", "url": "/v1/chat/completions"}', "body must be an object"),
        (
            b'{"method": "POST", "url": "/v1/chat/completions", "body": {"model": "m"}}',
            "custom_id is missing",
        ),
        (
            b'{"custom_id": "a", "method": "GET", "url": "/v1/chat/completions", "body": {"model": "m"}}',
            "POST",
        ),
        (
            b'{"custom_id": "a", "method": "POST", "url": "/v1/completions", "body": {"model": "m"}}',
            "differs",
        ),
        (b'{"custom_id": "a", "method": "POST", "body": {"model": "m"}}', "url None"),
        (b"not json", "not JSON"),
    ],
)
def test_fake_is_strict_about_lines(line, problem, store):
    """A file the real API refuses is refused by the fake too (line numbers from 1)."""
    from genderscope.backends.openai.batch import BatchAPI

    with FakeOpenAIServer(FakeConfig()) as srv:
        opts = build_options(OpenAIChatBackend.Options, {"base_url": srv.url}, "openai")
        api = BatchAPI(opts, "", True)
        good = batch_line("ok", "/v1/chat/completions", b'{"model": "m", "messages": []}')
        fid = api.upload(good + line + b"\n", "x.jsonl")
        bid = api.create(fid, "/v1/chat/completions", "24h", {})["id"]
        batch = api.retrieve(bid)
    assert batch["status"] == "failed"
    err = batch["errors"]["data"][0]
    assert err["line"] == 2 and problem in err["message"]


def test_run_json_records_the_route(tmp_path):
    with FakeOpenAIServer(FakeConfig()) as srv:
        out = run_tasks(
            ["gest"],
            "openai:gpt-x",
            limit=5,
            out=tmp_path / "run",
            options={"base-url": srv.url, **{k.replace("_", "-"): v for k, v in FAST.items()}},
            store_path=tmp_path / "store.sqlite",
            progress=False,
        )
        again = run_tasks(
            ["gest"],
            "openai:gpt-x",
            limit=5,
            out=tmp_path / "run2",
            options={"base-url": srv.url, **{k.replace("_", "-"): v for k, v in FAST.items()}},
            store_path=tmp_path / "store.sqlite",
            progress=False,
        )
    stats = json.loads((tmp_path / "run" / "run.json").read_text())["backend_stats"]
    assert stats["route"] == "batch" and stats["batch_ids"] == ["batch_000001"]
    assert stats["batch_lines"] == out.runs[0].counts.requests == 30
    assert stats["tokens"]["total_tokens"] > 0
    assert again.runs[0].counts.requests == 0 and again.runs[0].counts.cache_hits == 30


def test_no_cache_refused(tmp_path):
    from genderscope.common.errors import UsageError

    with FakeOpenAIServer(FakeConfig()) as srv, pytest.raises(UsageError, match="--no-cache"):
        run_tasks(
            ["gest"],
            "openai:gpt-x",
            limit=2,
            out=tmp_path / "run",
            use_cache=False,
            options={"base-url": srv.url, "batch": "true"},
            progress=False,
        )


def test_result_lines_of_both_formats():
    ok = parse_result_line(
        b'{"id": "vllm-1", "custom_id": "k", "response": {"status_code": 200, "request_id": "r", '
        b'"body": {"choices": []}}, "error": null}',
        "out.jsonl:1",
    )
    assert ok.ok and json.loads(ok.body) == {"choices": []}
    expired = parse_result_line(
        b'{"id": "b", "custom_id": "k", "response": null, '
        b'"error": {"code": "batch_expired", "message": "late"}}',
        "err.jsonl:1",
    )
    assert not expired.ok and expired.retryable and expired.error == "late"
    refused = parse_result_line(  # vLLM 0.32's run-batch runs only chat lines
        b'{"id": "vllm-1", "custom_id": "k", "response": {"status_code": 400, "request_id": "r"}, '
        b'"error": "URL /v1/completions was used. Supported endpoints: /v1/chat/completions"}',
        "out.jsonl:2",
    )
    assert not refused.ok and not refused.retryable and refused.error.startswith("URL /v1/completions")
    engine = parse_result_line(
        b'{"id": "vllm-2", "custom_id": "k", "response": {"status_code": 400, "request_id": "r"}, '
        b'"error": {"error": {"message": "too long", "type": "BadRequestError", "code": 400}}}',
        "out.jsonl:3",
    )
    assert engine.error == "too long" and not engine.retryable
    with pytest.raises(ValueError, match="out.jsonl:3: no custom_id"):
        parse_result_line(b'{"id": "x"}', "out.jsonl:3")


def _cli(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "genderscope.cli", *args],
        env=env,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_killed_run_resumes_without_a_second_upload(tmp_path):
    env = {**os.environ, "GENDERSCOPE_HOME": str(tmp_path / "home")}
    src = str(ROOT / "src")
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    db = tmp_path / "home" / "store.sqlite"
    with FakeOpenAIServer(FakeConfig(batch_schedule=["stall"])) as srv:
        args = [
            "run",
            "gest",
            "--model",
            "openai:gpt-x",
            "--limit",
            "4",
            "--base-url",
            srv.url,
            "--batch",
            "--batch-poll",
            "0.05",
            "--out",
            "run",
            "--no-progress",
        ]
        proc = _cli(args, env, tmp_path)
        deadline = time.time() + 60
        while time.time() < deadline:  # wait until the batch exists and is being polled
            if srv.stats()["batch"]["counts"].get("retrieves", 0) >= 2:
                break
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        with sqlite3.connect(db) as con:
            assert con.execute("SELECT state, batch_id FROM batch_jobs").fetchall() == [
                ("submitted", "batch_000001")
            ]
        srv.configure(batch_schedule=[""])  # the provider finishes the batch while no one watches
        proc = _cli(args, env, tmp_path)
        stdout, stderr = proc.communicate(timeout=120)
        counts = srv.stats()["batch"]["counts"]
    assert proc.returncode == 0, stderr[-2000:]
    assert "attaching to batch_000001" in stderr
    assert counts["uploads"] == 1 and counts["creates"] == 1
    manifest = json.loads((tmp_path / "run" / "run.json").read_text())
    assert manifest["tasks"]["gest"]["counts"]["errors"] == 0
    assert manifest["backend_stats"]["batch_ids"] == ["batch_000001"]
    assert manifest["backend_stats"]["uploads"] == 0 and manifest["backend_stats"]["attached"] == 1
    assert manifest["backend_stats"]["batch_lines"] == 24  # 4 items x 6 orderings, collected, not re-sent


def test_uploaded_file_without_a_batch_is_created_not_uploaded_again(store):
    """Killed between upload and create: the next run creates the batch from the uploaded file."""
    from genderscope.backends.openai.batch import make_route
    from genderscope.core.batch_ledger import BatchLedger

    jobs = make_jobs(5)
    with FakeOpenAIServer(FakeConfig()) as srv:
        backend = batch_backend(srv, store)
        route = make_route(backend, store, backend.batch_request, backend.batch_parse)
        keys = [store_key(backend.fingerprint, j.request, j.trial) for j in jobs]
        ledger = BatchLedger(store)
        rec = ledger.add(backend.fingerprint, route.api.endpoint, "/v1/chat/completions", 0, keys)
        lines = b"".join(batch_line(k, *backend.batch_request(j)) for k, j in zip(keys, jobs))
        ledger.update(rec, state="uploaded", file_id=route.api.upload(lines, "x.jsonl"))
        got = answer(batch_backend(srv, store), jobs)  # a new process: a new backend on the same store
        counts = srv.stats()["batch"]["counts"]
    assert all(v[0].ok for v in got.values()) and len(got) == 5
    assert counts["uploads"] == 1 and counts["creates"] == 1
    assert [r[0] for r in store._db.execute("SELECT state FROM batch_jobs")] == ["done"]


class TwoRoundTask:
    """A task whose second round asks about the first round's answers (as multi-round tasks do)."""

    name = "two-rounds"

    def attempts(self) -> list:
        from genderscope.core.requests import Attempt

        return [Attempt(f"a{j.index}", 1, j.request) for j in make_jobs(4, "first")]

    def next_attempts(self, results: list) -> list:
        from genderscope.core.requests import Attempt

        if len(results) > 4:
            return []
        return [
            Attempt(
                f"b{n}", 1, Request(CHAT, {"messages": [{"role": "user", "content": f"why {r.response}?"}]})
            )
            for n, r in enumerate(results)
        ]


def test_a_multi_round_task_sends_one_batch_per_round(store):
    from genderscope.core.runner import execute_task

    with FakeOpenAIServer(FakeConfig()) as srv:
        backend = batch_backend(srv, store)
        ex = execute_task(TwoRoundTask(), backend, store)
        batches = srv.stats()["batch"]["batches"]
    assert ex.counts.rounds == 2 and ex.counts.requests == 8 and ex.counts.errors == 0
    assert [b["total"] for b in batches.values()] == [4, 4]
    assert ex.results[4].response == expected_answer(
        f"why {ex.results[0].response}?",
        json.loads(chat_body("gpt-x", Job(0, ex.results[4].attempt.request, 1, ""), True))["seed"],
    )
