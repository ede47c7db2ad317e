"""``genderscope batch write`` / ``batch read`` round trips (the fake's run-batch stand-in answers the file
as vLLM's run-batch would), and ``openai-completions:`` on the batch route: answers equal the online
route's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from genderscope.cli.app import app
from genderscope.core.batchfile import read_answers, write_requests
from genderscope.core.engine import run_tasks
from genderscope.common.errors import UsageError
from genderscope_dev.fake_openai import FakeConfig, FakeOpenAIServer
from genderscope_dev.fake_openai_batch import run_batch_file
from genderscope.demo_models import build_tiny_causal

WORDS = "The nurse said that she he had a doctor told the baker , . ' is was her his".split()
FAST = {"backoff-base": "0.01", "backoff-max": "0.05"}


@pytest.fixture(scope="module")
def tiny(hf: None, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_causal(tmp_path_factory.mktemp("tiny") / "plain", WORDS)


def test_cli_round_trip_then_run_sends_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # files need no key
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    w = runner.invoke(
        app, ["batch", "write", "gest", "--model", "openai:m", "--limit", "6", "-o", "req.jsonl"]
    )
    assert w.exit_code == 0, w.output
    assert "36 requests written" in w.output
    lines = [json.loads(x) for x in Path("req.jsonl").read_text().splitlines()]
    assert len(lines) == 36 and {tuple(sorted(x)) for x in lines} == {("body", "custom_id", "method", "url")}
    assert run_batch_file("req.jsonl", "out.jsonl") == 36
    r = runner.invoke(app, ["batch", "read", "out.jsonl", "--model", "openai:m"])
    assert r.exit_code == 0, r.output
    assert "36 answers stored" in r.output
    with FakeOpenAIServer(FakeConfig()) as srv:
        res = run_tasks(
            ["gest"], "openai:m", limit=6, out=tmp_path / "run", options={"base-url": srv.url}, progress=False
        )
        online = run_tasks(
            ["gest"],
            "openai:m",
            limit=6,
            out=tmp_path / "online",
            options={"base-url": srv.url},
            progress=False,
            use_cache=False,
        )
        assert srv.stats()["requests"] == 36  # only the --no-cache run asked the server
    assert res.runs[0].counts.requests == 0 and res.runs[0].counts.cache_hits == 36
    assert [a.response for a in res.runs[0].results] == [a.response for a in online.runs[0].results]
    again = runner.invoke(
        app, ["batch", "write", "gest", "--model", "openai:m", "--limit", "6", "-o", "r2.jsonl"]
    )
    assert "nothing to write" in again.output and Path("r2.jsonl").read_text() == ""


def test_read_reports_unknown_other_model_and_failed_lines(tmp_path: Path) -> None:
    store = tmp_path / "store.sqlite"
    write_requests(["gest"], "openai:m", tmp_path / "req.jsonl", limit=2, store_path=store)
    run_batch_file(str(tmp_path / "req.jsonl"), str(tmp_path / "out.jsonl"))
    lines = (tmp_path / "out.jsonl").read_text().splitlines()
    bad = json.loads(lines[0])
    bad["response"] = {"status_code": 400, "request_id": "r", "body": {"error": {"message": "too long"}}}
    unknown = json.loads(lines[1]) | {"custom_id": "f" * 64}
    (tmp_path / "mixed.jsonl").write_text(
        "\n".join([json.dumps(bad), json.dumps(unknown), *lines[2:]]) + "\n"
    )
    s = read_answers(tmp_path / "mixed.jsonl", "openai:m", store_path=store)
    assert s.lines == 12 and s.stored == 10 and s.unknown == ["f" * 64]
    assert len(s.failed) == 1 and "HTTP 400: too long" in s.failed[0][1]
    other = read_answers(tmp_path / "out.jsonl", "openai:m", options={"model-id": "rev2"}, store_path=store)
    assert len(other.other_model) == 12 and other.stored == 0
    (tmp_path / "broken.jsonl").write_text(lines[0] + "\n{}\n")
    with pytest.raises(UsageError, match=r"broken.jsonl:2: no custom_id"):
        read_answers(tmp_path / "broken.jsonl", "openai:m", store_path=store)


def test_only_openai_models_have_a_file_format(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="only openai: and openai-completions:"):
        write_requests(["gest"], "random", tmp_path / "x.jsonl", limit=2, store_path=tmp_path / "s.sqlite")


def test_completions_file_needs_a_start_token(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="--start-token TOKEN"):
        write_requests(
            ["winobias-lm"],
            "openai-completions:tiny",
            tmp_path / "x.jsonl",
            limit=2,
            store_path=tmp_path / "s.sqlite",
        )


def test_completions_round_trip_equals_online(tmp_path: Path, tiny: Path) -> None:
    """winobias-lm's token_logprobs through a file give the online route's answers, bit for bit."""
    store = tmp_path / "store.sqlite"
    opts = {"start-token": "none"}
    w = write_requests(
        ["winobias-lm"],
        "openai-completions:tiny",
        tmp_path / "req.jsonl",
        limit=4,
        options=opts,
        store_path=store,
    )
    assert w.lines > 0 and all(
        json.loads(x)["url"] == "/v1/completions" for x in open(tmp_path / "req.jsonl")
    )
    run_batch_file(str(tmp_path / "req.jsonl"), str(tmp_path / "out.jsonl"), str(tiny))
    s = read_answers(tmp_path / "out.jsonl", "openai-completions:tiny", options=opts, store_path=store)
    assert s.stored == w.lines and not s.failed
    with FakeOpenAIServer(FakeConfig(model_dir=str(tiny))) as srv:
        both = {"base-url": srv.url, **opts, **FAST}
        cached = run_tasks(
            ["winobias-lm"],
            "openai-completions:tiny",
            limit=4,
            out=tmp_path / "a",
            options=both,
            store_path=store,
            progress=False,
        )
        online = run_tasks(
            ["winobias-lm"],
            "openai-completions:tiny",
            limit=4,
            out=tmp_path / "b",
            options=both,
            use_cache=False,
            progress=False,
        )
    assert cached.runs[0].counts.requests == 0
    assert [a.response for a in cached.runs[0].results] == [a.response for a in online.runs[0].results]
    a = json.loads((tmp_path / "a" / "results.json").read_text())["tasks"]
    b = json.loads((tmp_path / "b" / "results.json").read_text())["tasks"]
    assert a == b


def test_completions_batch_route_equals_online(tmp_path: Path, tiny: Path) -> None:
    with FakeOpenAIServer(FakeConfig(model_dir=str(tiny))) as srv:
        common = {"base-url": srv.url, "start-token": "none", **FAST}
        batch = run_tasks(
            ["winobias-lm"],
            "openai-completions:tiny",
            limit=3,
            out=tmp_path / "a",
            options={**common, "batch": "true", "batch-poll": "0.01"},
            store_path=tmp_path / "s.sqlite",
            progress=False,
        )
        online = run_tasks(
            ["winobias-lm"],
            "openai-completions:tiny",
            limit=3,
            out=tmp_path / "b",
            options=common,
            use_cache=False,
            progress=False,
        )
    stats = json.loads((tmp_path / "a" / "run.json").read_text())["backend_stats"]
    assert stats["route"] == "batch" and stats["batch_lines"] == batch.runs[0].counts.requests > 0
    assert stats["tokens"]["prompt_tokens"] > 0
    assert json.loads((tmp_path / "b" / "run.json").read_text())["backend_stats"]["route"] == "online"
    assert [a.response for a in batch.runs[0].results] == [a.response for a in online.runs[0].results]
