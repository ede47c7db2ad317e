"""CLI front door: tasks listing, errors for unknown tasks/models/options, data and cache commands."""

from __future__ import annotations

from repo_paths import ROOT
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hypothesis import given
from hypothesis import strategies as st

from genderscope.cli.app import app
from genderscope.cli.options import parse_extra
from genderscope.cli.options import split_task_tokens
from genderscope.common.errors import UsageError


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


def test_run_takes_comma_separated_tasks_and_lm_evals_tasks_option(tmp_path: Path, data_registry) -> None:
    res = CliRunner().invoke(
        app, ["run", "crows-pairs,winogender", "--model", "random", "--limit", "5", "--out", str(tmp_path)]
    )
    assert res.exit_code == 0, res.output
    got = json.loads((tmp_path / "results.json").read_text())["tasks"]
    assert sorted(got) == ["crows-pairs", "winogender"]
    again = tmp_path / "again"
    res = CliRunner().invoke(
        app,
        ["run", "--tasks", "crows-pairs,winogender", "-m", "random", "--limit", "5", "--out", str(again)],
    )
    assert res.exit_code == 0, res.output
    assert sorted(json.loads((again / "results.json").read_text())["tasks"]) == ["crows-pairs", "winogender"]
    bad = _cli("run", "crows-pairs,nosuch", "--model", "random")
    assert bad.returncode == 2 and "unknown task 'nosuch'" in bad.stderr


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


_NAME = st.text(alphabet="abcdefghij-", min_size=1, max_size=8).filter(lambda t: not t.startswith("--"))


@given(st.lists(st.lists(_NAME, min_size=1, max_size=3), min_size=1, max_size=4), st.booleans())
def test_split_task_tokens_keeps_every_name_in_order(groups: list[list[str]], by_option: bool) -> None:
    """Names given as `a b`, `a,b`, or lm-eval's `--tasks a,b` come out as the same list, options kept."""
    names = [n for g in groups for n in g]
    tokens = [",".join(g) for g in groups] + ["--limit", "5"]
    if by_option:
        tokens = [*tokens[:1], "--limit", "5", "--tasks", ",".join(names[len(groups[0]) :]) or ","]
    tasks, options = split_task_tokens(tokens)
    assert tasks == names
    assert options == {"limit": "5"}


def test_split_task_tokens_strips_names_keeps_repeated_tasks_and_refuses_a_bare_tasks() -> None:
    assert split_task_tokens(["crows-pairs, winogender", "--seed", "3"]) == (
        ["crows-pairs", "winogender"],
        {"seed": "3"},
    )
    got = split_task_tokens(["--tasks", "crows-pairs", "--tasks=stereoset", "--tasks", "bbq-likelihood"])
    assert got == (["crows-pairs", "stereoset", "bbq-likelihood"], {})
    for bare in (["--tasks"], ["--tasks", "--model", "random"]):
        with pytest.raises(UsageError, match="--tasks needs task names"):
            split_task_tokens(bare)


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


def test_data_verify_reports_corrupted_and_missing_files_together(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mirror = tmp_path / "mirror"
    (mirror / "crows_pairs").mkdir(parents=True)
    (mirror / "crows_pairs" / "crows_pairs_anonymized.csv").write_text("altered\n")
    monkeypatch.setenv("GENDERSCOPE_DATA_MIRROR", str(mirror))
    monkeypatch.setenv("GENDERSCOPE_HOME", str(tmp_path / "home"))
    res = CliRunner().invoke(app, ["data", "verify"])
    assert res.exit_code == 2
    assert "1 corrupted file(s)" in res.output and "file(s) missing" in res.output


def test_missing_optional_extra_names_the_install_command(tmp_path: Path) -> None:
    model_dir = tmp_path / "m"
    model_dir.mkdir()
    code = (
        "import sys; sys.modules['transformers'] = None; sys.modules['torch'] = None; "
        "from genderscope.cli.app import main; "
        f"sys.argv = ['genderscope', 'run', 'abc', '--model', 'hf-mlm:{model_dir}', '--limit', '5', "
        f"'--out', '{tmp_path / 'o'}']; main()"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.returncode == 2, res.stderr
    assert "pip install 'genderscope[hf]'" in res.stderr
    assert "Traceback" not in res.stderr


# ----------------------------------------------------------------------------------- issue 13: front door


def _all_commands() -> list[list[str]]:
    """Every command path of the app (``[]`` = the app itself, ``["data", "list"]``, ...)."""
    import typer.main

    paths: list[list[str]] = []

    def walk(cmd, prefix: list[str]) -> None:  # noqa: ANN001 - a click command
        paths.append(prefix)
        for name, sub in getattr(cmd, "commands", {}).items():
            walk(sub, [*prefix, name])

    walk(typer.main.get_command(app), [])
    return paths


def test_every_help_screen_is_clean() -> None:
    """No `<bool>` type on flags, no eaten `<placeholders>`, and `run --help` names the default folder."""
    runner = CliRunner()
    paths = _all_commands()
    assert ["data", "mirror"] in paths and ["bordia", "sweep"] in paths
    for path in paths:
        res = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "200"})
        assert res.exit_code == 0, (path, res.output)
        assert "<bool>" not in res.output, path
        assert "runs/--" not in res.output, path
    res = runner.invoke(app, ["run", "--help"], env={"COLUMNS": "200"})
    assert "runs/<timestamp>-<task>-<model>" in res.output and "--label" in res.output


def test_label_is_stored_in_run_json(tmp_path: Path) -> None:
    from genderscope.core.engine import run_tasks
    from genderscope.core.results_file import SCHEMA_VERSION
    from genderscope.core.runlog import RunManifest, read_manifest

    labelled = run_tasks(
        ["gest"], "random", limit=5, out=tmp_path / "a", label="  my null model ", progress=False
    )
    assert json.loads((labelled.out_dir / "run.json").read_text())["label"] == "my null model"
    assert read_manifest(labelled.out_dir).label == "my null model"
    plain = run_tasks(["gest"], "random", limit=5, out=tmp_path / "b", progress=False)
    data = json.loads((plain.out_dir / "run.json").read_text())
    assert "label" not in data and data["schema_version"] == SCHEMA_VERSION  # label: not written unless given
    assert RunManifest.from_json(data).label is None
    with pytest.raises(Exception, match="'label' must be a string"):
        RunManifest.from_json({**data, "label": 3})


def test_label_option_on_the_command_line(tmp_path: Path) -> None:
    res = CliRunner().invoke(
        app, ["run", "gest", "--limit", "5", "--label", "baseline", "--out", str(tmp_path)]
    )
    assert res.exit_code == 0, res.output
    assert json.loads((tmp_path / "run.json").read_text())["label"] == "baseline"


def test_unsupported_task_lists_every_working_model_kind() -> None:
    """`abc` on `openai:` names every registered kind that can run abc (random and replay included)."""
    from genderscope import catalogue as registry
    from genderscope.core import lookup

    res = _cli("run", "abc", "--model", "openai:gpt-4o-mini")
    assert res.returncode == 2 and "cannot run on openai" in res.stderr
    needs = [set(m.kinds) for m in lookup.task_class("abc").measurements.values()]
    working = []
    for kind in registry.BACKENDS:
        try:
            kinds = set(lookup.backend_class(kind + ":x").request_kinds)
        except ImportError:
            continue
        if any(n <= kinds for n in needs):
            working.append(kind)
    assert {"random", "replay", "hf-mlm", "hf-causal"} <= set(working)
    listed = res.stderr.split("model kinds that work:")[1]
    for kind in working:
        assert kind in listed, (kind, res.stderr)


def test_plain_pytest_starts_from_the_project_root() -> None:
    """`.venv/bin/pytest` (not only `python -m pytest`) imports the tests' helper modules."""
    pytest_bin = Path(sys.executable).with_name("pytest")
    if not pytest_bin.exists():
        pytest.skip("no pytest script beside this Python")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTEST_XDIST_WORKER")}
    res = subprocess.run(
        [str(pytest_bin), "--collect-only", "-q", "-p", "no:cacheprovider", "tests/cli/test_demo.py"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0, res.stdout + res.stderr
    assert "test_demo_step_list_is_well_formed" in res.stdout


@pytest.mark.parametrize("columns", [200, 60])
def test_data_list_fits_the_terminal(columns: int) -> None:
    env = {**os.environ, "COLUMNS": str(columns)}
    res = _cli("data", "list", env=env)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert max(len(line) for line in lines) <= columns
    assert "…" not in res.stdout  # long names fold, they are never cut
    if columns >= 200:
        assert any("winobias-2018/pro_stereotyped_type2.txt.test" in line for line in lines)


def test_compare_fits_the_terminal(tmp_path: Path) -> None:
    from report_runs import gest_run

    a, b = gest_run(tmp_path / "a", limit=10), gest_run(tmp_path / "b", limit=12)
    for columns in (200, 50):
        env = {**os.environ, "COLUMNS": str(columns)}
        res = _cli("compare", str(a), str(b), env=env)
        assert res.returncode == 0, res.stderr
        assert max(len(line) for line in res.stdout.splitlines()) <= columns
        assert "…" not in res.stdout


def test_run_help_names_the_default_folder_uncut_at_80_columns() -> None:
    res = CliRunner().invoke(app, ["run", "--help"], env={"COLUMNS": "80"})
    assert res.exit_code == 0
    assert "runs/<timestamp>-<task>-<model>" in res.output and "…" not in res.output


def test_terminal_says_why_genda_lens_ges_is_undefined() -> None:
    """genda-lens mode keeps GenDa Lens's exception in results.json; the terminal explains it in words."""
    from rich.console import Console

    from genderscope.core.metrics import Metric
    from genderscope.core.task import TaskResult
    from genderscope.tasks.genda_render import render_genda

    res = TaskResult(
        metrics={"ges": Metric(None), "median_rel_female": Metric(-7.05), "median_rel_male": Metric(11.1)},
        extra={"ges_error": "ValueError: math domain error"},
        records=[],
        headline=["ges"],
    )
    console = Console(width=200, record=True)
    console.print(render_genda("abc", res))
    text = console.export_text()
    assert "GES is undefined: the median relative perplexity is ≤ 0 (hendes -7.05)" in text
    assert not any(line.startswith(("ges_error", "ValueError")) for line in text.splitlines())


def test_tasks_options_state_what_limit_keeps_for_every_task() -> None:
    """``genderscope tasks --options`` gives each task's one meaning of ``--limit`` (a row in each task's
    options table); tasks whose ``--limit`` keeps different things say different things."""
    from typer.testing import CliRunner

    from genderscope.cli.app import app
    from genderscope.core import lookup

    res = CliRunner().invoke(app, ["tasks", "--options"])
    assert res.exit_code == 0, res.output
    classes = dict(lookup.task_classes())
    assert res.output.count("│ --limit N ") == len(classes)  # the first cell of a row of each table
    assert all(cls.limit_meaning.strip() for cls in classes.values())
    meanings = {classes[t].limit_meaning for t in ("winogender", "gest", "abc", "crows-pairs", "honest")}
    assert len(meanings) == 5
