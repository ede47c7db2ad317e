"""Fault injection on the fake server's ``/v1/completions`` (429 with Retry-After, 5xx, timeouts, dropped
connections, malformed JSON, answers without log-probs), its concurrency cap, and the
``openai-completions:`` backend riding through every fault to the numbers of a clean run."""

from __future__ import annotations

import http.client
import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from genderscope import catalogue as registry  # noqa: E402
from genderscope_dev.fake_openai import FakeConfig, FakeOpenAIServer  # noqa: E402

WORDS = "<s> The nurse said that she he was tired . and the doctor".split()
BODY = {"model": "tiny", "echo": True, "logprobs": 1, "max_tokens": 1, "temperature": 0}


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory) -> Path:
    from genderscope.demo_models import build_tiny_causal

    return build_tiny_causal(tmp_path_factory.mktemp("faults"), WORDS, seed=3, add_bos=True)


def complete(url: str, prompt: Any, timeout: float = 10, **extra: Any) -> tuple[int, dict[str, str], bytes]:
    """POST /v1/completions; (status, headers, body)."""
    host, port = url.split("//")[1].split("/")[0].split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=timeout)
    try:
        conn.request("POST", "/v1/completions", json.dumps({**BODY, "prompt": prompt, **extra}))
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


def test_every_fault_kind_on_completions(model_dir: Path) -> None:
    schedule = ["429", "500", "502", "503", "malformed", "null", "no_logprobs", "drop", "timeout"]
    cfg = FakeConfig(model_dir=str(model_dir), schedule=schedule, retry_after="7", timeout_sleep=0.5)
    with FakeOpenAIServer(cfg) as srv:
        p = "The nurse said that she was tired ."
        status, head, _ = complete(srv.url, p)
        assert status == 429 and head["retry-after"] == "7"
        for code in (500, 502, 503):
            status, _, body = complete(srv.url, p)
            assert status == code and json.loads(body)["error"]["type"] == "server_error"
        status, _, body = complete(srv.url, p)
        assert status == 200
        with pytest.raises(ValueError):
            json.loads(body)
        status, _, body = complete(srv.url, p)
        assert status == 200 and json.loads(body)["choices"][0]["logprobs"] is None
        status, _, body = complete(srv.url, p)
        assert status == 200 and "logprobs" not in json.loads(body)["choices"][0]
        with pytest.raises((http.client.RemoteDisconnected, ConnectionError)):
            complete(srv.url, p)
        with pytest.raises(TimeoutError):
            complete(srv.url, p, timeout=0.2)
        status, _, body = complete(srv.url, p)  # the schedule is spent: a real answer
        lp = json.loads(body)["choices"][0]["logprobs"]
        assert status == 200 and lp["tokens"][:3] == ["<s>", "The", " nurse"]
        deadline = time.monotonic() + 10
        while (st := srv.stats())["in_flight"] and time.monotonic() < deadline:  # the late timeout answer
            time.sleep(0.05)
        assert st["by_prompt"][p] == len(schedule) + 1
        assert st["faults"] == {f: 1 for f in schedule}
        # the last answer, plus the late timeout answer unless the client had already hung up (a race
        # under load: the server counts an answer only on an open connection)
        assert st["answered_by_prompt"][p] in (1, 2)


def test_errors_without_a_model_or_with_a_bad_prompt(model_dir: Path) -> None:
    with FakeOpenAIServer(FakeConfig()) as srv:
        status, _, body = complete(srv.url, "x")
        assert status == 404 and "--model-dir" in json.loads(body)["error"]["message"]
    with FakeOpenAIServer(FakeConfig(model_dir=str(model_dir))) as srv:
        for bad in (
            {"prompt": "", "add_special_tokens": False},
            {"prompt": [10**6]},
            {"logprobs": 9},
            {"max_tokens": 500},
            {"prompt": {}},
        ):
            status, _, body = complete(srv.url, **{"prompt": "The nurse", **bad})
            assert status == 400 and json.loads(body)["error"]["message"], bad
        assert srv.stats()["requests"] == 0  # refused before counting


def test_no_echo_server_answers_generated_tokens_only(model_dir: Path) -> None:
    """``echo_logprobs=False`` behaves like the llama.cpp server: ``echo`` is ignored."""
    with FakeOpenAIServer(FakeConfig(model_dir=str(model_dir), echo_logprobs=False)) as srv:
        _, _, body = complete(srv.url, "The nurse said")
        ch = json.loads(body)["choices"][0]
        assert len(ch["logprobs"]["tokens"]) == 1 and not ch["text"].startswith("The")


def _burst(url: str, n: int, prompt: str = "The nurse") -> list[int]:
    codes: list[int] = [0] * n

    def one(i: int) -> None:
        codes[i] = complete(url, f"{prompt} {'she' if i % 2 else 'he'}")[0]

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    return codes


def test_concurrency_cap_queues_or_refuses(model_dir: Path) -> None:
    cfg = FakeConfig(model_dir=str(model_dir), latency=0.2, max_concurrency=2)
    with FakeOpenAIServer(cfg) as srv:
        t0 = time.monotonic()
        codes = _burst(srv.url, 6)
        took = time.monotonic() - t0
        st = srv.stats()
        assert codes == [200] * 6 and st["max_in_flight"] == 2 and st["max_waiting"] >= 1
        assert took >= 3 * 0.2 - 0.05  # 6 requests, 2 at a time, 0.2 s each from admission
        srv.reset()
        srv.configure(over_capacity="429", latency=1.0)  # the burst arrives well within one latency
        codes = _burst(srv.url, 6)
        assert codes.count(200) >= 2 and codes.count(429) == srv.stats()["rejected"] >= 1


needs_backend = pytest.mark.skipif(
    "openai-completions" not in registry.BACKENDS, reason="openai-completions backend not registered yet"
)


def _run(url: str, out: Path, **opts: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    from genderscope.core.engine import run_tasks

    options = {"bootstrap_cycles": 50, "base_url": url, "backoff_base": 0.01, "backoff_max": 0.05, **opts}
    res = run_tasks(
        ["winobias-lm"],
        "openai-completions:tiny",
        limit=4,
        out=out,
        progress=False,
        use_cache=False,
        options=options,
    )
    results = json.loads((res.out_dir / "results.json").read_text())["tasks"]["winobias-lm"]
    recs = [json.loads(x) for x in (res.out_dir / "attempts.jsonl").read_text().splitlines()]
    return results, recs


@needs_backend
def test_backend_rides_through_every_fault(model_dir: Path, tmp_path: Path) -> None:
    """Each prompt meets 429, 500, 503, a dropped connection, malformed JSON, a missing and a null
    ``logprobs``, and a timeout before its answer: the run still equals a clean run.  The start-up
    probe's prompts are exempt (a 200 answer without log-probs there rightly means "no echo")."""
    with FakeOpenAIServer(FakeConfig(model_dir=str(model_dir))) as srv:
        clean, clean_recs = _run(srv.url, tmp_path / "clean")
        task_prompts = {r["prompt"] for r in clean_recs}
        probe = [k for k in srv.stats()["by_prompt"] if not any(k.endswith(t) for t in task_prompts)]
        assert 1 <= len(probe) <= 4, probe
        schedule = ["429", "500", "drop", "malformed", "no_logprobs", "null", "503", "timeout"]
        srv.reset()
        srv.configure(schedule=schedule, timeout_sleep=2.0, retry_after="0", fault_exempt=probe)
        got, recs = _run(srv.url, tmp_path / "faulty", timeout=0.5, max_retries=len(schedule) + 2)
        st = srv.stats()
    assert all(st["faults"][f] >= 4 for f in schedule), st["faults"]
    assert [r for r in recs if r.get("error")] == []
    assert [r["response"] for r in recs] == [r["response"] for r in clean_recs]
    assert got["metrics"] == clean["metrics"]


@needs_backend
def test_persistent_server_errors_end_in_attempt_errors_not_a_hang(model_dir: Path, tmp_path: Path) -> None:
    from genderscope.common.errors import BackendError

    with FakeOpenAIServer(FakeConfig(model_dir=str(model_dir), status=503)) as srv:
        t0 = time.monotonic()
        try:
            _, recs = _run(srv.url, tmp_path / "down", max_retries=1)
        except BackendError as exc:  # refused at start-up (the probe cannot reach the model)
            assert "503" in str(exc) or "server" in str(exc).lower()
        else:
            assert recs and all(r.get("error") for r in recs)
        assert time.monotonic() - t0 < 60
