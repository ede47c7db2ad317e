"""Issue 27: the bad option values users met (one line naming option, value and fix; exit 2; checked
before anything is asked) and readable metavars on every help screen."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli_fuzz import command_tree, invoke
from genderscope.cli.app import app


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--limit", "-3"], "--limit -3: give a whole number ≥ 1"),
        (["--limit", "0"], "--limit 0: give a whole number ≥ 1"),
        (["--trials", "0"], "--trials 0: give a whole number from 1 to 10,000"),
        (["--trials", "abc"], "--trials 'abc'"),
        (["--seed", "-1"], "--seed -1: give a whole number from 0"),
        (["--temperature", "nan"], "--temperature nan: give a finite number ≥ 0"),
        (["--max-tokens", "0"], "--max-tokens 0: give a whole number ≥ 1"),
        (["--bootstrap-cycles", "-5"], "--bootstrap-cycles -5: give a whole number from 0 to 1,000,000"),
        (["--confidence-level", "inf"], "--confidence-level inf: give a finite number"),
        (["--null-seed", "99999999999999999999"], "--null-seed 99999999999999999999"),
        (["--model", "random:abc"], "--model random:SEED 'abc': give a whole number"),
        (["--out", "{file}"], "is a file; give a new or existing folder"),
        (["--out", "{file}/run"], "is a file, not a folder"),
    ],
)
def test_bad_run_values_are_one_line_before_anything_runs(
    args: list[str], says: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    argv = ["run", "gest", "--model", "random", *[a.replace("{file}", str(a_file)) for a in args]]
    if "--out" not in args:
        argv += ["--out", str(tmp_path / "out")]
    outcome = invoke(argv)
    assert outcome.code == 2 and outcome.problem() is None, outcome
    lines = outcome.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and says in lines[0], outcome.stderr
    assert "no attempt was answered" not in outcome.stderr
    assert not (tmp_path / "out").exists() and not (tmp_path / "runs").exists()  # nothing was run


def test_bad_value_of_a_later_task_stops_the_run_before_any_answer(tmp_path: Path) -> None:
    """A bad option of the second task is found before the first task asks anything (so no answer is
    ever dropped by a late error)."""
    from genderscope.core.engine import run_tasks
    from genderscope.common.errors import UsageError

    with pytest.raises(UsageError, match="--n-boot -1"):
        run_tasks(["gest", "abc"], "random", limit=2, out=tmp_path / "o", options={"n_boot": "-1"})
    assert not (tmp_path / "o").exists()


def test_click_errors_are_one_line_naming_the_command() -> None:
    for argv, says in (
        (["run", "gest", "--limit"], "Option '--limit' requires an argument; see `genderscope run --help`"),
        (["data", "list", "--bad"], "No such option: --bad; see `genderscope data list --help`"),
        (["check"], "Missing argument 'RUN_DIR...'; see `genderscope check --help`"),
        (["bordia", "score", "--top", "x"], "--top 'x': give a whole number"),
        (
            ["batch", "write", "gest", "--model", "random:abc", "-o", "x"],
            "random:abc: only openai",
        ),  # no emoji
    ):
        outcome = invoke(argv)
        assert outcome.code == 2 and outcome.stderr.count("\n") == 1 and says in outcome.stderr, outcome


#: typer's type labels that must not reach a help screen
TYPE_LABELS = re.compile(r"<(list\[|int>|str>|float>|path>|bool>|Path>)|\{[A-Z_.]+\}")


def test_every_help_screen_shows_readable_metavars() -> None:
    runner = CliRunner()
    for path in [(), *command_tree()]:
        res = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "200"})
        assert res.exit_code == 0, (path, res.output)
        assert not TYPE_LABELS.search(res.output), (path, TYPE_LABELS.search(res.output))
    shown = {
        ("report",): ["RUN_DIR...", "--out", "FILE"],
        ("check",): ["RUN_DIR...", "STATES", "METRIC=VALUE", "FILE"],
        ("run",): ["TASK...", "--limit", " N ", "--temperature", "NUMBER", "DIR", "MODEL"],
        ("export",): ["RUN_DIR...", "csv|parquet|model-card", "DIR"],
        ("data", "list"): ["[NAME...]"],
        ("bordia", "score"): ["[CORPORA...]", "--top", " N "],
    }
    for path, words in shown.items():
        out = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "200"}).output
        assert all(w in out for w in words), (path, [w for w in words if w not in out])
