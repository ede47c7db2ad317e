"""Two vLLM servers as one fleet (``--base-url A,B``): SIGKILL one mid-run and the run finishes on the
other with the numbers of an uninterrupted run, no answer lost and none asked twice.  The second server
runs without ``/tokenizer_info``, which is where ``--start-token auto`` must say which flag to pass.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from enginecli import CLI, genderscope, read_run, run_ok
from test_vllm import metric_close

from genderscope_dev import engines

pytestmark = pytest.mark.engines

TASK, LIMIT = "gest-likelihood", "60"
START = ("--start-token", "<|im_start|>")


@pytest.fixture(scope="module")
def second_vllm(smol_fp32: Path, vllm_url: str) -> Iterator[engines.RunningServer]:
    try:
        server = engines.start_vllm(smol_fp32, tokenizer_info=False)
    except engines.EngineUnavailable as exc:
        pytest.skip(f"engines: {exc}".splitlines()[0])
    yield server
    server.stop()


def stored_answers(home: Path) -> int:
    db = home / "store.sqlite"
    if not db.is_file():
        return 0
    con = sqlite3.connect(db)
    try:
        return int(con.execute("SELECT COUNT(*) FROM responses").fetchone()[0])
    except sqlite3.OperationalError:  # the table does not exist yet
        return 0
    finally:
        con.close()


def test_auto_start_token_without_tokenizer_info_names_the_flag(
    second_vllm: engines.RunningServer, tmp_path: Path
) -> None:
    res = genderscope(
        "run", "winobias-lm", "--model", "openai-completions:smol", "--base-url", second_vllm.url,
        "--start-token", "auto", "--limit", "2", "--out", str(tmp_path / "auto"),
    )  # fmt: skip
    assert res.returncode != 0
    last = res.stderr.strip().splitlines()[-1]
    assert "--start-token TOKEN" in last and "--enable-tokenizer-info-endpoint" in last, res.stderr[-1500:]


def test_a_fleet_finishes_when_one_server_is_killed(
    vllm_url: str, second_vllm: engines.RunningServer, tmp_path: Path
) -> None:
    home = Path(os.environ["GENDERSCOPE_HOME"])
    model = ("--model", "openai-completions:smol", *START, "--limit", LIMIT)
    ref = run_ok(TASK, *model, "--base-url", vllm_url, "--no-cache", "--out", str(tmp_path / "ref"))
    ref_results, ref_run, ref_attempts = read_run(ref)
    total = ref_run["tasks"][TASK]["counts"]["requests"]

    out = tmp_path / "fleet"
    cmd = [CLI, "run", TASK, *model, "--base-url", f"{vllm_url},{second_vllm.url}", "--concurrency", "4",
           "--out", str(out), "--no-progress"]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 600
    while stored_answers(home) < total // 4:
        assert proc.poll() is None, f"the run ended before the kill: {proc.communicate()[1][-2000:]}"
        assert time.monotonic() < deadline, "the fleet run made no progress"
        time.sleep(0.05)
    second_vllm.kill()
    at_kill = stored_answers(home)
    _stdout, stderr = proc.communicate(timeout=900)
    assert proc.returncode == 0, stderr[-3000:]
    assert at_kill < total, "the server was killed before the run finished"

    results, run, attempts = read_run(out)
    stats = run["backend_stats"]
    assert stats["failed_jobs"] == 0 and run["tasks"][TASK]["counts"]["errors"] == 0
    assert stored_answers(home) == total == stats["answers"], "every request answered once, none lost"
    startup = sum(s["ok"] for s in ref_run["backend_stats"]["servers"]) - ref_run["backend_stats"]["answers"]
    assert sum(s["ok"] for s in stats["servers"]) - stats["answers"] == startup, "no request answered twice"
    assert stats["servers"][1]["ok"] > 0, "the killed server had answered some requests"
    assert len(attempts) == len(ref_attempts)
    for name, ref_metric in ref_results["tasks"][TASK]["metrics"].items():
        metric_close(name, ref_metric, results["tasks"][TASK]["metrics"][name])
