"""SIGKILL a ``genderscope run abc`` over ``openai-completions:`` (a subprocess) midway, then resume it:
the fake server (which counts every request and every answer per prompt) sees each stored sentence
never again, each missing sentence exactly once, and re-asks only answers that were in flight or not yet
committed when the process died (at most ``--concurrency`` plus one commit interval's answers); the
resumed results equal an uninterrupted run's."""

from __future__ import annotations

import json
import math
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from genderscope import catalogue as registry  # noqa: E402
from genderscope.core.runner import COMMIT_SECONDS  # noqa: E402
from genderscope_dev.fake_openai import FakeConfig, FakeOpenAIServer  # noqa: E402

pytestmark = pytest.mark.skipif(
    "openai-completions" not in registry.BACKENDS, reason="openai-completions backend not registered yet"
)

LIMIT = 40  # abc: 6 sentences per item
SENTENCES = LIMIT * 6
CONCURRENCY = 4
LATENCY = 0.1  # seconds per answer of the first run
#: answers a SIGKILL may cost: those in flight, plus those emitted since the last commit (the store commits
#: once per COMMIT_SECONDS, at the next answer): CONCURRENCY / LATENCY answers/s over COMMIT_SECONDS + one
#: answer's wait
MAY_REPEAT = CONCURRENCY + math.ceil(CONCURRENCY * (COMMIT_SECONDS + LATENCY) / LATENCY)
START = "<s>"  # the BOS the tiny tokenizer adds; the client sends START + text


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory) -> Path:
    from genderscope.data.registry import DataRegistry
    from genderscope.demo_models import build_tiny_causal, likelihood_task_texts, words_of

    words = words_of(likelihood_task_texts(DataRegistry()))
    return build_tiny_causal(tmp_path_factory.mktemp("resume"), words, seed=5, add_bos=True)


def run_cmd(url: str, out: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "genderscope.cli.app",
        "run",
        "abc",
        "--model",
        "openai-completions:tiny",
        "--base-url",
        url,
        "--limit",
        str(LIMIT),
        "--concurrency",
        str(CONCURRENCY),
        "--n-boot",
        "50",
        "--no-progress",
        "--out",
        str(out),
    ]


def stored_texts(home: Path) -> set[str]:
    """Texts of the token_logprobs answers in the response store."""
    path = home / "store.sqlite"
    if not path.exists():
        return set()
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)
    try:
        rows = db.execute("SELECT request FROM responses").fetchall()
    except sqlite3.OperationalError:  # table not created yet
        rows = []
    finally:
        db.close()
    reqs = [json.loads(r[0]) for r in rows]
    return {r["payload"]["text"] for r in reqs if r.get("kind") == "token_logprobs"}


def task_counts(counter: dict[str, int]) -> dict[str, int]:
    """Per-sentence counts (server keys are START + text; start-up probe prompts dropped)."""
    return {k[len(START) :]: n for k, n in counter.items() if k.startswith(START) and "nurse" not in k}


def metrics(out: Path) -> dict:
    return json.loads((out / "results.json").read_text())["tasks"]["abc"]["metrics"]


def test_sigkill_then_resume_repeats_no_answered_request(model_dir: Path, tmp_path: Path) -> None:
    home = Path(os.environ["GENDERSCOPE_HOME"])
    # the store can trail the run by a burst of answers (batched commits) on a loaded machine: a slower
    # server keeps the kill well before the run's end
    with FakeOpenAIServer(FakeConfig(model_dir=str(model_dir), latency=LATENCY)) as srv:
        proc = subprocess.Popen(
            run_cmd(srv.url, tmp_path / "first"), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        deadline = time.monotonic() + 120
        while len(stored_texts(home)) < SENTENCES // 4:
            assert proc.poll() is None, f"run ended before it could be killed: {proc.communicate()}"
            assert time.monotonic() < deadline, "run made no progress"
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
        assert proc.returncode == -signal.SIGKILL
        time.sleep(0.1)  # let answers that were in flight reach the (closed) sockets
        first = srv.stats()
        before = stored_texts(home)
        assert SENTENCES // 4 <= len(before) < SENTENCES, "killed midway"
        answered_first = task_counts(first["answered_by_prompt"])
        assert set(before) <= set(answered_first) and max(answered_first.values()) == 1

        srv.reset()
        second = subprocess.run(
            run_cmd(srv.url, tmp_path / "second"), capture_output=True, text=True, timeout=300, check=False
        )
        assert second.returncode == 0, second.stderr
        sent = task_counts(srv.stats()["by_prompt"])
        assert set(sent).isdisjoint(before), "a stored answer was asked again"
        assert sum(sent.values()) == len(sent) == SENTENCES - len(before), "each missing sentence once"
        repeated = set(sent) & set(answered_first)  # answered, but killed before it was stored
        assert len(repeated) <= MAY_REPEAT, repeated
        assert stored_texts(home) == set(before) | set(sent) and len(set(before) | set(sent)) == SENTENCES

        env = {**os.environ, "GENDERSCOPE_HOME": str(tmp_path / "fresh-home")}
        whole = subprocess.run(
            run_cmd(srv.url, tmp_path / "whole"),
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
            env=env,
        )
        assert whole.returncode == 0, whole.stderr
    assert metrics(tmp_path / "second") == metrics(tmp_path / "whole")
