"""Several servers behind one ``--base-url URL1,URL2``: spreading, per-server limits, failover and pausing,
every-server-down, per-server statistics, and a store keyed by model (a run moves between fleets)."""

from __future__ import annotations

import asyncio
import json
import socket
import sys
from pathlib import Path
from typing import Any

import pytest

from genderscope.backends.openai.chat import OpenAIChatBackend, OpenAIOptions
from genderscope.backends.openai.pool import Pool, Server
from genderscope.common.errors import BackendError, UsageError
from genderscope.core.request_value import CHAT, Request
from genderscope.core.requests import Job, Outcome
from genderscope_dev.fake_openai import FakeConfig, FakeOpenAIServer, expected_answer

FAST = {"backoff_base": 0.01, "backoff_max": 0.05, "send_seed": False}


def jobs(n: int, prefix: str = "p") -> list[Job]:
    return [
        Job(
            index=i,
            request=Request(CHAT, {"messages": [{"role": "user", "content": f"{prefix} {i}"}]}),
            trial=1,
            item_id=f"i{i}",
        )
        for i in range(n)
    ]


def answer(backend: OpenAIChatBackend, js: list[Job]) -> dict[int, Outcome]:
    got: dict[int, Outcome] = {}
    backend.answer(js, lambda job, out: got.__setitem__(job.index, out))
    return got


def fleet(*servers: Any, **opts: Any) -> OpenAIChatBackend:
    urls = ",".join(s if isinstance(s, str) else s.url for s in servers)
    return OpenAIChatBackend("fake", OpenAIOptions(base_url=urls, **{**FAST, **opts}))


def dead_url() -> str:
    with socket.socket() as s:  # a port with nobody listening
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/v1"


@pytest.fixture
def two():
    with FakeOpenAIServer(FakeConfig(latency=0.01)) as a, FakeOpenAIServer(FakeConfig(latency=0.01)) as b:
        yield a, b


def test_requests_spread_over_servers_within_the_per_server_limit(two: tuple[Any, Any]) -> None:
    a, b = two
    backend = fleet(a, b, concurrency=3)
    js = jobs(120)
    got = answer(backend, js)
    assert all(got[j.index].response == expected_answer(f"p {j.index}") for j in js)
    sa, sb = a.stats(), b.stats()
    assert sa["requests"] + sb["requests"] == 120
    assert 40 <= sa["requests"] <= 80, "both servers take a share"
    assert sa["max_in_flight"] == 3 and sb["max_in_flight"] == 3, "--concurrency is per server"
    per = backend.stats()["servers"]
    assert [s["http_requests"] for s in per] == [sa["requests"], sb["requests"]]


@pytest.mark.parametrize("fault", ["500", "drop"])
def test_a_failing_server_is_paused_and_its_work_goes_to_the_other(two: tuple[Any, Any], fault: str) -> None:
    a, b = two
    a.configure(fault_rate=1.0, faults=[fault])
    backend = fleet(a, b, concurrency=4, pause_seconds=30.0)
    got = answer(backend, jobs(100))
    assert all(o.ok for o in got.values())
    bad, good = backend.stats()["servers"]
    assert bad["ok"] == 0 and bad["pauses"] >= 1
    assert bad["http_requests"] <= 4 + 3, "paused after --pause-after failures (plus those in flight)"
    assert good["ok"] == 100
    assert backend.stats()["failed_jobs"] == 0


def test_a_dead_server_in_the_list_costs_nothing_but_a_few_retries(two: tuple[Any, Any]) -> None:
    a, _b = two
    backend = fleet(dead_url(), a, concurrency=4)
    got = answer(backend, jobs(50))
    assert all(o.ok for o in got.values())
    assert backend.stats()["servers"][1]["ok"] == 50


def test_every_server_down_stops_the_run_with_one_line() -> None:
    backend = fleet(dead_url(), dead_url(), max_retries=2)
    with pytest.raises(BackendError, match=r"every server gave no answer after 3 attempts") as exc:
        answer(backend, jobs(20))
    assert "\n" not in str(exc.value)


def test_a_server_back_from_a_pause_gets_work_again(two: tuple[Any, Any]) -> None:
    a, b = two
    a.configure(fault_rate=1.0, faults=["500"])
    backend = fleet(a, b, concurrency=2, pause_seconds=0.05)
    answer(backend, jobs(20, "x"))
    a.configure(fault_rate=0.0)
    a.reset()
    import time

    time.sleep(0.1)
    answer(backend, jobs(60, "y"))
    assert a.stats()["requests"] >= 10, "the healed server is used again after its pause"


def test_pool_prefers_the_least_loaded_server_and_avoids_the_failed_one() -> None:
    async def scenario() -> list[str]:
        s1, s2 = Server("http://a/v1", 2), Server("http://b/v1", 2)
        pool = Pool([s1, s2], pause_after=3, pause_seconds=1.0)
        x = await pool.acquire()
        y = await pool.acquire()
        assert {x.base, y.base} == {"http://a/v1", "http://b/v1"}, "spread before stacking"
        pool.release(x)
        pool.release(y)
        z = await pool.acquire(avoid=s1)
        return [z.base, s1.url("/v1/completions"), s1.url("/tokenize")]

    assert asyncio.run(scenario()) == ["http://b/v1", "http://a/v1/completions", "http://a/tokenize"]


def test_the_last_server_standing_is_never_paused_for_failures() -> None:
    s1, s2 = Server("http://a/v1", 1), Server("http://b/v1", 1)
    pool = Pool([s1, s2], pause_after=2, pause_seconds=10.0)
    for _ in range(3):
        pool.failed(s1, "500")
    assert s1.paused_until > 0 and s1.counts["pauses"] == 2
    for _ in range(3):
        pool.failed(s2, "500")
    assert s2.paused_until == 0.0, "with no other server healthy, s2 keeps backing off instead"
    pool.failed(s2, "429", retry_after=1.0)
    assert s2.paused_until > 0, "an explicit Retry-After pauses even the last server"


def test_duplicate_or_bad_urls_are_usage_errors() -> None:
    with pytest.raises(UsageError, match="twice"):
        fleet("http://127.0.0.1:1/v1", "http://127.0.0.1:1/v1/")
    with pytest.raises(UsageError, match="not an http"):
        fleet("http://127.0.0.1:1/v1", "127.0.0.1:2/v1")


def _cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> int:
    import genderscope.cli.app as cli_mod

    monkeypatch.setattr(sys, "argv", ["genderscope", *args, "--no-progress"])
    with pytest.raises(SystemExit) as exc:
        cli_mod.main()
        raise SystemExit(0)
    capsys.readouterr()
    return int(exc.value.code or 0)


def test_a_run_moved_to_another_fleet_resumes_with_zero_requests(
    two: tuple[Any, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = two
    with FakeOpenAIServer(FakeConfig()) as c:
        base = ["run", "gest", "--model", "openai:fake", "--limit", "8"]
        assert (
            _cli(monkeypatch, capsys, *base, "--base-url", f"{a.url},{b.url}", "--out", str(tmp_path / "1"))
            == 0
        )
        assert a.stats()["requests"] + b.stats()["requests"] == 48
        assert _cli(monkeypatch, capsys, *base, "--base-url", c.url, "--out", str(tmp_path / "2")) == 0
        assert c.stats()["requests"] == 0, "the store is keyed by model fingerprint, not by URL"
        r1, r2 = (json.loads((tmp_path / d / "results.json").read_text()) for d in ("1", "2"))
        assert r1 == r2
        run = json.loads((tmp_path / "1" / "run.json").read_text())
        assert [s["url"] for s in run["backend_stats"]["servers"]] == [a.url, b.url]
        assert run["model"]["base_url"] == f"{a.url},{b.url}"
