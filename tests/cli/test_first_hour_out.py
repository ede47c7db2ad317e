"""`run --out` never silently replaces an earlier run: another spec in the folder is refused (one line,
naming --overwrite), the same spec resumes, --overwrite replaces it and removes the stale report; an
empty --out is refused; an unwritable --out fails before any work."""

from __future__ import annotations

from repo_paths import ROOT
import json
from pathlib import Path

import pytest

import genderscope
from genderscope.common.errors import UsageError
from genderscope.core import engine
from genderscope.core.runspec import RunSpec
from genderscope.core.validate import writable_path


def test_another_run_in_the_folder_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "first"
    genderscope.run("gest", limit=20, out=out)
    genderscope.run("gest", limit=20, out=out, label="again")  # same spec (labels change no number)
    (out / "report.html").write_text("<html>old</html>")
    with pytest.raises(UsageError) as err:
        genderscope.run("gest", limit=10, out=out)
    message = str(err.value)
    assert "--overwrite" in message and "--limit 20" in message and "\n" not in message
    assert json.loads((out / "run.json").read_text())["spec"]["limit"] == 20  # nothing replaced
    genderscope.run("gest", limit=10, out=out, overwrite=True)
    assert json.loads((out / "run.json").read_text())["spec"]["limit"] == 10
    assert not (out / "report.html").exists()


def test_a_folder_without_run_files_is_fine(tmp_path: Path) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("x")
    genderscope.run("gest", limit=5, out=out)
    assert (out / "results.json").is_file() and (out / "notes.txt").is_file()


def test_empty_out_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError, match="give the path of an output folder"):
        genderscope.run("gest", limit=5, out="")
    assert list(tmp_path.iterdir()) == []


def test_unwritable_out_fails_before_any_work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(UsageError, match="cannot write in /proc"):
        writable_path("--out", "/proc/genderscope-x", folder=True)
    called: list[str] = []
    monkeypatch.setattr(engine, "prepare_run", lambda *a, **k: called.append("prepare"))
    with pytest.raises(UsageError, match="cannot write"):
        engine.run_spec(RunSpec.build("gest", "random"), out="/proc/genderscope-x")
    assert called == []  # no task built, no model loaded


def test_cli_refusal_is_one_line_exit_2(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    cli = [
        sys.executable,
        "-m",
        "genderscope.cli",
        "run",
        "gest",
        "--no-progress",
        "--out",
        str(tmp_path / "r"),
    ]
    assert subprocess.run([*cli, "--limit", "20"], env=env, capture_output=True, timeout=300).returncode == 0
    res = subprocess.run([*cli, "--limit", "10"], env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert "--overwrite" in res.stderr
    res = subprocess.run(
        [*cli[:-2], "--out", "", "--limit", "10"], env=env, capture_output=True, text=True, timeout=300
    )
    assert res.returncode == 2 and "give the path of an output folder" in res.stderr
