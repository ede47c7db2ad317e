"""Off a terminal (CI logs, ``make demo > log``): no progress frames (tqdm's carriage returns), one line
per finished step."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

TQDM_LOOP = "from tqdm.auto import tqdm\nfor _ in tqdm(range(200), desc='Converting', mininterval=0): pass\n"


@pytest.mark.parametrize("quiet", [True, False])
def test_tqdm_writes_no_frames_off_a_terminal(quiet: bool) -> None:
    pytest.importorskip("tqdm")
    setup = (
        "from genderscope.core.progress import no_progress_frames_off_a_terminal as q\nq()\n" if quiet else ""
    )
    env = {k: v for k, v in os.environ.items() if k != "TQDM_DISABLE"}
    res = subprocess.run([sys.executable, "-c", setup + TQDM_LOOP], capture_output=True, env=env)
    assert res.returncode == 0, res.stderr
    frames = res.stderr.count(b"Converting")
    assert (frames == 0) if quiet else (frames > 1 and b"\r" in res.stderr)  # the control shows the frames


def test_run_prints_one_line_per_task_off_a_terminal(tmp_path: Path) -> None:
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "genderscope.cli.app",
            "run",
            "gest",
            "gest-likelihood",
            "--model",
            "random",
            "--limit",
            "5",
            "-o",
            str(tmp_path / "r"),
        ],
        capture_output=True,
        timeout=120,
    )
    assert res.returncode == 0, res.stderr
    assert b"\r" not in res.stderr and b"\r" not in res.stdout  # bytes: text mode would hide a \r
    lines = res.stderr.decode().splitlines()
    assert [ln.split(":")[0] for ln in lines] == ["gest", "gest-likelihood"]
    assert lines[1].startswith("gest-likelihood: 80 answered, ")  # both rounds: 5 rows x 4 templates x 4
    assert lines[0].startswith("gest: 30 answered, 0 from cache, ")
