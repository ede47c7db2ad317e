"""At 80 columns (CI logs): `run all` cuts no metric name or cell (tables wrap) and ends with a one-screen
verdict summary, a line per flagged cell and the next commands; the GenDa Lens tables fit; the demo prints
each step's whole title and ends with its flagged cells and next steps."""

from __future__ import annotations

from repo_paths import ROOT
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

#: lines printed whole on purpose (one logical line, the terminal wraps it): licence notices
SOFT = ("licences:", "next: genderscope report", "      genderscope check")  # soft-wrapped: copy-paste whole


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "80", "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run(
        [sys.executable, "-m", "genderscope.cli", *args], env=env, capture_output=True, text=True, timeout=600
    )


@pytest.fixture(scope="module")
def run_all(tmp_path_factory: pytest.TempPathFactory) -> str:
    out = tmp_path_factory.mktemp("all") / "run"
    res = _cli("run", "all", "--model", "random", "--limit", "12", "--out", str(out), "--no-progress")
    assert res.returncode == 0, res.stderr[-2000:]
    return res.stdout


def test_nothing_is_cut_and_every_line_fits(run_all: str) -> None:
    assert "…" not in run_all
    long = [ln for ln in run_all.splitlines() if len(ln) > 80 and not ln.startswith(SOFT)]
    assert long == [], long[:5]


def test_run_all_ends_with_a_one_screen_verdict_summary(run_all: str) -> None:
    tail = run_all[run_all.index("verdicts (") :].splitlines()
    assert len(tail) <= 50, len(tail)
    table = "\n".join(tail)
    for task in ("gest", "bbq", "direct", "crows-pairs", "abc", "honest"):
        assert f" {task} " in table, task
    flagged = [ln for ln in tail if ln.startswith("flagged ")]
    rows = [ln for ln in tail if ln.startswith(("▲ ", "▼ "))]
    assert len(flagged) == len(rows), (flagged, rows)  # one line per flagged cell
    assert tail[-2].startswith("results in") or any(ln.startswith("next: genderscope report") for ln in tail)
    whole = [x for x in tail[-3:] if x.lstrip().startswith("genderscope check") or "· genderscope check" in x]
    assert whole, tail[-4:]  # the check command whole on one line, whatever the path's length


def test_genda_lens_tables_fit_eighty_columns() -> None:
    from genderscope.tasks.genda_render import rows_table

    rows = [
        {"occupations": o, "pronoun": p, "n": 200, "median_rel": -5.324497, "q25_rel": -15.98853,
         "q75_rel": 14.49348, "median_ratio": 0.744198, "median_rel_ci95": [-13.03728, -1.840123]}
        for o in ("all", "female", "male") for p in ("female", "male")
    ]  # fmt: skip
    why = "median relative perplexity of the male variant is -0.9755 ≤ 0"
    effects = [{"occupations": "all", "ges": None, "ges_undefined_reason": why, "ges_ratio": -0.35898,
                "ges_ci95": [-2.7794, 3.4527], "ges_ratio_ci95": [-0.87895, 0.14974]}]  # fmt: skip
    for table, rows_of in (
        (rows_table("abc: nuance", rows), rows),
        (rows_table("abc: effects", effects), effects),
    ):
        buf = io.StringIO()
        Console(file=buf, width=80).print(table)
        text = buf.getvalue()
        lines = text.splitlines()
        cells = [ln for ln in lines if ln.startswith((" all", " female", " male"))]
        assert len(cells) == len(rows_of), text  # one line per row: nothing wrapped at 80 columns
        assert all(len(ln) <= 80 for ln in lines) and "…" not in text
    assert "-5.32 [-13, -1.84]" in text or "ges undefined reason (all): median relative perplexity" in text


def test_demo_prints_whole_titles_flagged_cells_and_next_steps(tmp_path: Path, data_registry) -> None:
    from genderscope.demo import demo_steps, run_demo

    buf = io.StringIO()
    console = Console(file=buf, width=80)
    outcome = run_demo(tmp_path / "demo", quick=True, console=console, only=["genderbench-random"])
    assert outcome.ok, outcome.failed
    text = buf.getvalue()
    title = next(s.title for s in demo_steps(Console(quiet=True)) if s.name == "genderbench-random")
    assert title in " ".join(text.split())  # the whole title, wrapped, not cut
    tail = text[text.index("flagged cells") :].splitlines()
    assert any("bbq · stereotype_rate" in ln for ln in tail) and "next steps:" in tail
    steps = tail[tail.index("next steps:") + 1 :]
    assert steps and all(len(ln) <= 80 for ln in steps), steps
    assert any(ln.strip().startswith("genderscope check") for ln in steps)
