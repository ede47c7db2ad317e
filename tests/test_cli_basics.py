"""CLI front door: tasks listing, errors for unknown tasks/models/options, data and cache commands."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from genderscope.cli import app, parse_extra
from genderscope.core.errors import UsageError


def _cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "genderscope.cli", *args], capture_output=True, text=True, env=env, timeout=120
    )


def test_tasks_lists_gest() -> None:
    res = CliRunner().invoke(app, ["tasks"])
    assert res.exit_code == 0, res.output
    assert "gest" in res.output


def test_unknown_task_is_one_clear_line() -> None:
    res = _cli("run", "nosuchtask", "--model", "random")
    assert res.returncode == 2
    assert "unknown task 'nosuchtask'" in res.stderr and "gest" in res.stderr


def test_unknown_model_spec() -> None:
    res = _cli("run", "gest", "--model", "gpt4")
    assert res.returncode == 2
    assert "unknown model spec" in res.stderr and "openai:" in res.stderr


def test_unknown_option_names_the_known_ones() -> None:
    res = _cli("run", "gest", "--model", "random", "--frobnicate", "3")
    assert res.returncode == 2
    assert "--frobnicate" in res.stderr


def test_bad_option_value() -> None:
    res = _cli("run", "gest", "--model", "random", "--parser", "psychic")
    assert res.returncode == 2 and "psychic" in res.stderr


def test_parse_extra() -> None:
    assert parse_extra(["--a", "1", "--b=x", "--flag"]) == {"a": "1", "b": "x", "flag": "true"}
    with pytest.raises(UsageError):
        parse_extra(["stray"])


def test_run_writes_three_files(tmp_path: Path) -> None:
    out = tmp_path / "run"
    res = _cli("run", "gest", "--model", "random", "--limit", "20", "--out", str(out))
    assert res.returncode == 0, res.stderr
    results = json.loads((out / "results.json").read_text())
    assert set(results) >= {"genderscope_version", "tasks"}
    m = results["tasks"]["gest"]["metrics"]["stereotype_rate"]
    assert set(m) == {"value", "ci_low", "ci_high"}
    lines = (out / "attempts.jsonl").read_text().splitlines()
    assert len(lines) == 20 * 6
    rec = json.loads(lines[0])
    assert {"item_id", "trial", "prompt", "response", "parsed_option", "cache_hit"} <= set(rec)
    manifest = json.loads((out / "run.json").read_text())
    assert manifest["tasks"]["gest"]["datasets"]["gest/gest.csv"].startswith("7e306adaa")
    assert manifest["model"]["spec"] == "random" and "python" in manifest["versions"]


def test_python_api_matches_cli(tmp_path: Path) -> None:
    import genderscope

    res = genderscope.run("gest", model="random", limit=30, out=tmp_path / "api")
    df = res.metrics_frame()
    assert len(df) == 60 and list(df.columns) == ["task", "metric", "value", "ci_low", "ci_high"]
    again = json.loads((tmp_path / "api" / "results.json").read_text())
    assert again["tasks"]["gest"]["metrics"]["stereotype_rate"]["value"] == pytest.approx(
        res.metrics["gest"]["stereotype_rate"].value
    )


def test_data_and_cache_commands() -> None:
    runner = CliRunner()
    res = runner.invoke(app, ["data", "list"])
    assert res.exit_code == 0 and "gest/gest.csv" in res.output
    res = runner.invoke(app, ["data", "verify"])
    assert res.exit_code == 0 and "corrupt" not in res.output
    res = runner.invoke(app, ["cache", "info"])
    assert res.exit_code == 0 and "store:" in res.output
    res = runner.invoke(app, ["cache", "clear", "--yes"])
    assert res.exit_code == 0 and "deleted 0" in res.output


def test_missing_optional_extra_names_the_install_command(tmp_path: Path) -> None:
    model_dir = tmp_path / "m"
    model_dir.mkdir()
    code = (
        "import sys; sys.modules['transformers'] = None; sys.modules['torch'] = None; "
        "from genderscope.cli import main; "
        f"sys.argv = ['genderscope', 'run', 'abc', '--model', 'hf-mlm:{model_dir}', '--limit', '5', "
        f"'--out', '{tmp_path / 'o'}']; main()"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.returncode == 2, res.stderr
    assert "pip install 'genderscope[hf]'" in res.stderr
    assert "Traceback" not in res.stderr
