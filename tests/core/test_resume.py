"""Kill (SIGKILL) or interrupt (SIGINT) a GEST run against the fake server, then resume it.

The resumed run must ask the server only for the attempts that were not stored, and
its metrics must equal those of an uninterrupted run (in a separate GENDERSCOPE_HOME).
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from genderscope_dev.fake_openai import FakeConfig, FakeOpenAIServer

LIMIT = 300
ATTEMPTS = LIMIT * 6  # six orderings per GEST sentence


def run_cmd(url: str, out: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "genderscope.cli.app",
        "run",
        "gest",
        "--model",
        "openai:fake",
        "--base-url",
        url,
        "--limit",
        str(LIMIT),
        "--concurrency",
        "16",
        "--bootstrap-cycles",
        "200",
        "--no-progress",
        "--out",
        str(out),
    ]


def stored_prompts(home: Path) -> set[str]:
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
    return {json.loads(r[0])["payload"]["messages"][-1]["content"] for r in rows}


#: the CLI with Python's own SIGINT handler even where the test runs with SIGINT ignored (a job started with
#: `&` by a non-interactive shell, as some CI launchers do, passes SIG_IGN on, and Python keeps it)
WITH_SIGINT = "import signal; signal.signal(signal.SIGINT, signal.default_int_handler); " \
    "from genderscope.cli.app import main; main()"


def start_and_stop_midway(url: str, out: Path, home: Path, sig: int) -> subprocess.Popen[str]:
    cmd = [sys.executable, "-c", WITH_SIGINT, *run_cmd(url, out)[3:]]  # run_cmd: python -m genderscope.cli
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while len(stored_prompts(home)) < ATTEMPTS // 4:
        assert proc.poll() is None, f"run ended before it could be stopped: {proc.communicate()}"
        assert time.monotonic() < deadline, "run made no progress"
        time.sleep(0.05)
    proc.send_signal(sig)
    proc.wait(30)
    return proc


def metrics(out: Path) -> dict:
    return json.loads((out / "results.json").read_text())["tasks"]


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT], ids=["sigkill", "sigint"])
def test_stopped_run_resumes_with_only_the_missing_requests(tmp_path: Path, sig: int) -> None:
    home = Path(os.environ["GENDERSCOPE_HOME"])
    # answers reach the store in batches (one transaction per 0.1 s, at the next answer), so the store can
    # trail the run by a burst on a loaded machine: a slow first run keeps the stop well before its end
    with FakeOpenAIServer(FakeConfig(latency=0.15)) as srv:
        proc = start_and_stop_midway(srv.url, tmp_path / "first", home, sig)
        _stdout, stderr = proc.communicate()
        if sig == signal.SIGKILL:
            assert proc.returncode == -signal.SIGKILL
        else:
            assert proc.returncode == 130, stderr
            assert "interrupted" in stderr and "resume" in stderr
        before = stored_prompts(home)
        assert ATTEMPTS // 4 <= len(before) < ATTEMPTS, "stopped midway"
        db = sqlite3.connect(home / "store.sqlite")
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        db.close()

        srv.reset()
        srv.configure(latency=0.002)
        second = subprocess.run(
            run_cmd(srv.url, tmp_path / "second"), capture_output=True, text=True, timeout=120, check=False
        )
        assert second.returncode == 0, second.stderr
        sent = srv.stats()["by_prompt"]
        assert sum(sent.values()) == ATTEMPTS - len(before), "only unanswered attempts are sent"
        assert set(sent).isdisjoint(before) and set(sent) | before == stored_prompts(home)
        assert len(stored_prompts(home)) == ATTEMPTS

        srv.reset()
        fresh_home = tmp_path / "fresh-home"
        env = {**os.environ, "GENDERSCOPE_HOME": str(fresh_home)}
        whole = subprocess.run(
            run_cmd(srv.url, tmp_path / "whole"),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            env=env,
        )
        assert whole.returncode == 0, whole.stderr
        assert srv.stats()["requests"] == ATTEMPTS
    assert metrics(tmp_path / "second") == metrics(tmp_path / "whole")
