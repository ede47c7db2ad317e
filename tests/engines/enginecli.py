"""The CLI as a user runs it, for the engine tests (imported by the test modules of this folder)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


CLI = str(Path(sys.executable).with_name("genderscope"))


def genderscope(*args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    """``genderscope ARGS`` as a user runs it (a subprocess; this test's GENDERSCOPE_HOME)."""
    cmd = [CLI, *args] + (["--no-progress"] if args and args[0] == "run" else [])
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)


def run_ok(*args: str, timeout: float = 900) -> Path:
    """``genderscope run ARGS --out DIR`` that must exit 0; returns DIR (the last ``--out`` value)."""
    res = genderscope("run", *args, timeout=timeout)
    assert res.returncode == 0, f"exit {res.returncode}\n{res.stderr[-3000:]}"
    return Path(args[list(args).index("--out") + 1])


def read_run(out: Path) -> tuple[dict, dict, list[dict]]:
    """(results.json, run.json, attempts.jsonl records) of a run folder."""
    results = json.loads((out / "results.json").read_text())
    run = json.loads((out / "run.json").read_text())
    # JSON Lines end at "\n" only: a model's answer may hold U+2028, U+0085 … (valid, unescaped JSON),
    # which str.splitlines() would also cut at
    text = (out / "attempts.jsonl").read_text(encoding="utf-8")
    attempts = [json.loads(x) for x in text.split("\n") if x.strip()]
    return results, run, attempts
