"""Plugins: tasks, backends and suites of other packages, registered through entry points
(``genderscope.core.lookup``).  The fast tests fake ``importlib.metadata.entry_points``; the slow one
pip-installs a real package built in a temporary folder and drives the CLI on it."""

from __future__ import annotations

from repo_paths import ROOT
import importlib.metadata as md
import json
import os
import subprocess
import sys

import pytest

from genderscope.core import lookup
from plugin_package import DIST, MODULE, SUITE, TASK, write_package

SRC = ROOT / "src"


def _entry_points(groups: dict[str, list[tuple[str, str]]]):
    def entry_points(**params):
        return [
            md.EntryPoint(name, value, group)
            for group, entries in groups.items()
            if params.get("group") in (None, group)
            for name, value in entries
        ]

    return entry_points


@pytest.fixture
def plugin_groups(tmp_path, monkeypatch):
    """Install entry points (group -> [(name, value)]) for this test; the tiny package is importable."""
    monkeypatch.syspath_prepend(str(write_package(tmp_path)))

    def install(groups: dict[str, list[tuple[str, str]]]) -> None:
        monkeypatch.setattr(md, "entry_points", _entry_points(groups))
        lookup.reload_plugins()

    yield install
    lookup.reload_plugins()
    for name in [m for m in sys.modules if m.startswith(MODULE)]:
        del sys.modules[name]


TINY = {
    "genderscope.tasks": [(TASK, f"{MODULE}.task:TinyPronouns")],
    "genderscope.suites": [(SUITE, f"{MODULE}.suites:SUITE")],
    "genderscope.backends": [("tiny-null", "genderscope.backends.random_model:RandomBackend")],
}


def _main(monkeypatch, capsys, *argv: str) -> tuple[int, str, str]:
    from genderscope.cli.app import main

    monkeypatch.setattr(sys, "argv", ["genderscope", *argv])
    try:
        main()
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_entry_points_extend_the_tables(plugin_groups) -> None:
    plugin_groups(TINY)
    assert TASK in lookup.TASKS and "gest" in lookup.TASKS
    assert list(lookup.TASKS)[-1] == TASK  # built-ins first
    assert lookup.task_class(TASK).version == "3"
    assert lookup.SUITES[SUITE]["tasks"] == [TASK]
    assert lookup.TASKS.plugin(TASK).group == "genderscope.tasks"
    assert lookup.TASKS.plugin("gest") is None
    assert lookup.backend_class("tiny-null:7").__name__ == "RandomBackend"
    assert lookup.is_suite(SUITE) and not lookup.is_suite(TASK)


def test_built_in_names_never_read_entry_points(tmp_path, monkeypatch) -> None:
    from genderscope.core.engine import run_tasks

    calls: list[str] = []
    monkeypatch.setattr(md, "entry_points", lambda **p: calls.append(p.get("group")) or [])
    lookup.reload_plugins()
    try:
        run_tasks(["gest"], "random", limit=2, out=tmp_path / "run", progress=False)
        assert calls == []
        assert "no-such-task" not in lookup.TASKS and len(calls) == 1
        assert "no-such-model" not in lookup.BACKENDS and len(calls) == 1  # one scan per process
    finally:
        lookup.reload_plugins()


def test_plugin_backend_runs_a_built_in_task(plugin_groups, tmp_path) -> None:
    from genderscope.core.engine import run_tasks

    plugin_groups(TINY)
    out = run_tasks([TASK], "tiny-null:3", out=tmp_path / "run", progress=False)
    assert out.manifest.model is not None and out.manifest.model.spec == "tiny-null:3"
    assert json.loads((tmp_path / "run" / "results.json").read_text())["backend"]["spec"] == "tiny-null:3"


def test_plugin_task_listed_run_reported_and_checked(plugin_groups, tmp_path, monkeypatch, capsys) -> None:
    plugin_groups(TINY)
    code, out, err = _main(monkeypatch, capsys, "tasks")
    assert code == 0 and TASK in out and SUITE in out, err
    run = tmp_path / "run"
    code, out, err = _main(monkeypatch, capsys, "run", SUITE, "--model", "random", "--out", str(run))
    assert code == 0, err
    results = json.loads((run / "results.json").read_text())
    assert set(results["tasks"]) == {TASK}
    assert results["tasks"][TASK]["task_version"] == "3"
    assert 0 <= results["tasks"][TASK]["metrics"]["she_share"]["value"] <= 1
    code, out, err = _main(monkeypatch, capsys, "report", str(run), "-o", str(tmp_path / "r.html"))
    assert code == 0, err
    assert TASK in (tmp_path / "r.html").read_text()
    check = ("check", str(run), "--fail-on", "none")
    code, out, err = _main(monkeypatch, capsys, *check, "--max", "she_share=1.5")
    assert code == 0 and "1 checked" in out, out + err
    code, out, err = _main(monkeypatch, capsys, *check, "--min", "she_share=1.5")
    assert code == 1 and TASK in out + err, out + err


def test_broken_plugins_are_one_line_and_builtins_still_work(plugin_groups, monkeypatch, capsys) -> None:
    plugin_groups(
        {
            "genderscope.tasks": [
                ("broken", "genderscope_no_such_module.task:Task"),
                ("gest", f"{MODULE}.task:TinyPronouns"),  # a taken name
                ("no-colon", "genderscope_no_such_module"),
                *TINY["genderscope.tasks"],
            ],
            "genderscope.backends": [("nomodel", "genderscope_no_such_module.backend:B")],
            "genderscope.suites": [("bad-suite", f"{MODULE}.task:CONTEXTS")],
        }
    )
    code, out, err = _main(monkeypatch, capsys, "tasks")
    assert code == 0, err
    assert "gest" in out and TASK in out and "broken" not in out
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert "Traceback" not in err
    broken = [ln for ln in lines if "broken" in ln]
    assert len(broken) == 1 and "ModuleNotFoundError" in broken[0] and "genderscope.tasks" in broken[0]
    assert any("'gest' is taken" in ln for ln in lines)
    assert any("no-colon" in ln and "module:attribute" in ln for ln in lines)
    assert any("bad-suite" in ln for ln in lines)
    assert lookup.task_class("gest").__name__ == "GestTask"
    code, out, err = _main(monkeypatch, capsys, "run", "broken", "--model", "random")
    assert code == 2 and "Traceback" not in err
    assert "plugin entry point broken" in err and "ModuleNotFoundError" in err
    code, out, err = _main(monkeypatch, capsys, "run", "gest", "--model", "nomodel")
    assert code == 2 and "plugin entry point nomodel" in err and "Traceback" not in err


@pytest.mark.slow
def test_pip_installed_plugin_through_the_cli(tmp_path) -> None:
    """A real distribution: built from a pyproject in a temporary folder, pip-installed (``--target``, with
    its .dist-info, so importlib.metadata sees it), then ``tasks``, ``run``, ``report``, ``check``."""
    pkg = write_package(tmp_path / "src")
    target = tmp_path / "site"
    pip = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-index"]
    subprocess.run([*pip, "--target", str(target), str(pkg)], check=True, capture_output=True, timeout=300)
    assert any(p.name.endswith(".dist-info") for p in target.iterdir())
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(SRC), str(target)]),
        "GENDERSCOPE_HOME": str(tmp_path / "home"),
    }

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "genderscope.cli", *args],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=300,
        )

    listing = cli("tasks")
    assert listing.returncode == 0 and TASK in listing.stdout and SUITE in listing.stdout, listing.stderr
    run = cli("run", TASK, "--model", "random", "--out", "run")
    assert run.returncode == 0, run.stderr
    manifest = json.loads((tmp_path / "run" / "run.json").read_text())
    assert manifest["tasks"][TASK]["task_version"] == "3"
    report = cli("report", "run", "-o", "report.html")
    assert report.returncode == 0 and TASK in (tmp_path / "report.html").read_text(), report.stderr
    check = cli("check", "run", "--fail-on", "none", "--min", "she_share=1.5")
    assert check.returncode == 1 and TASK in check.stdout + check.stderr, check.stdout + check.stderr
    assert DIST  # the distribution name the entry points came from
