"""SIGKILL a ``genderscope run counterfactual`` over the fake OpenAI server midway, then run it again: the
resumed run asks only the generations that were not stored (nothing generated is lost) and its results
equal those of an uninterrupted run in a fresh store."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from genderscope_dev.fake_openai import FakeConfig, FakeOpenAIServer

PROMPTS = 150
SAMPLES = 2
TOTAL = PROMPTS * 2 * SAMPLES  # original and swapped version of each prompt


def _cmd(url: str, prompts: Path, out: Path) -> list[str]:
    return [
        sys.executable,
        "-c",
        "from genderscope.cli.app import main; main()",
        "run",
        "counterfactual",
        "--model",
        "openai:fake",
        "--base-url",
        url,
        "--concurrency",
        "8",
        "--prompts",
        str(prompts),
        "--samples",
        str(SAMPLES),
        "--scorers",
        "length,refusal",
        "--n-boot",
        "200",
        "--no-progress",
        "--out",
        str(out),
    ]


def _stored(home: Path) -> int:
    path = home / "store.sqlite"
    if not path.exists():
        return 0
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)
    try:
        return int(db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])
    except sqlite3.OperationalError:
        return 0
    finally:
        db.close()


def test_killed_run_resumes_with_only_the_missing_generations(tmp_path: Path) -> None:
    home = Path(os.environ["GENDERSCOPE_HOME"])
    prompts = tmp_path / "p.txt"
    prompts.write_text("".join(f"Tell me about his job, number {i}.\n" for i in range(PROMPTS)))
    with FakeOpenAIServer(FakeConfig(latency=0.15)) as srv:
        proc = subprocess.Popen(
            _cmd(srv.url, prompts, tmp_path / "first"),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 120
        while _stored(home) < TOTAL // 4:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "no progress"
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        before = _stored(home)
        assert TOTAL // 4 <= before < TOTAL
        srv.reset()
        srv.configure(latency=0.0)
        second = subprocess.run(
            _cmd(srv.url, prompts, tmp_path / "second"), capture_output=True, text=True, timeout=300
        )
        assert second.returncode == 0, second.stderr
        assert srv.stats()["requests"] == TOTAL - before, "only the generations not stored are asked"
        srv.reset()
        env = {**os.environ, "GENDERSCOPE_HOME": str(tmp_path / "fresh")}
        whole = subprocess.run(
            _cmd(srv.url, prompts, tmp_path / "whole"), capture_output=True, text=True, timeout=300, env=env
        )
        assert whole.returncode == 0, whole.stderr
        assert srv.stats()["requests"] == TOTAL
    got = [
        json.loads((tmp_path / d / "results.json").read_text())["tasks"]["counterfactual"]
        for d in ("second", "whole")
    ]
    assert got[0]["metrics"] == got[1]["metrics"] and got[0]["counts"] == got[1]["counts"]
