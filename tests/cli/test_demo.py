"""The demo's step machinery: skipped steps are said and are not failures; a step that raises is a failure,
named in the outcome and by `genderscope demo`'s exit status."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from genderscope import demo
from genderscope.cli.app import app
from report_runs import gest_run


def _fail(folder: Path, quick: bool) -> Path:
    raise KeyError("no such column")  # any exception, not only genderscope's own


def _ok(folder: Path, quick: bool) -> Path:
    return gest_run(folder, limit=10)


def test_failed_and_skipped_steps_are_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    steps = [
        demo.Step("gest-random", "GEST", _ok),
        demo.Step("needs-x", "X", _fail, needs=lambda: "optional package x not installed"),
        demo.Step("broken", "B", _fail),
        demo.Step("slow", "S", _fail, in_quick=False),
    ]
    monkeypatch.setattr(demo, "demo_steps", lambda console: steps)
    console = Console(record=True, width=200)
    outcome = demo.run_demo(tmp_path / "demo", quick=True, console=console)
    text = console.export_text()
    assert "skipped needs-x: optional package x not installed" in text
    assert "skipped slow: not part of --quick" in text
    assert "step broken failed: KeyError: 'no such column'" in text
    assert "failed steps: broken" in text
    assert not outcome.ok and outcome.failed == {"broken": "KeyError: 'no such column'"}
    assert set(outcome.skipped) == {"needs-x", "slow"} and set(outcome.folders) == {"gest-random"}
    assert outcome.report == tmp_path / "demo" / "report.html" and outcome.report.exists()
    assert "demo report in" in text


@pytest.mark.parametrize("broken", [True, False], ids=["a-step-fails", "only-skips"])
def test_demo_command_exit_status(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, broken: bool) -> None:
    steps = [
        demo.Step("needs-x", "X", _fail, needs=lambda: "optional package x not installed"),
        demo.Step("gest-random", "GEST", _ok),
    ]
    if broken:
        steps.append(demo.Step("broken-step", "B", _fail))
    monkeypatch.setattr(demo, "demo_steps", lambda console: steps)
    res = CliRunner().invoke(app, ["demo", "--quick", "--out", str(tmp_path / "demo")])
    if broken:
        assert res.exit_code == 1, res.output
        assert "demo step broken-step failed: KeyError" in res.output
    else:
        assert res.exit_code == 0, res.output
        assert "skipped needs-x" in res.output
    assert (tmp_path / "demo" / "report.html").exists()


def test_demo_step_list_is_well_formed() -> None:
    steps = demo.demo_steps(Console())
    assert len({s.name for s in steps}) == len(steps)
    assert steps[0].name == "gest-random" and steps[0].needs() is None
    for s in steps:  # every check answers without raising: None, or why an optional package is missing
        reason = s.needs()
        assert reason is None or "not installed" in reason or "pip install 'genderscope[" in reason


def test_demo_has_no_development_leftovers() -> None:
    import inspect

    import genderscope.commands.bordia.demo as bordia_demo
    import genderscope.core.matrix as matrix

    for module in (demo, bordia_demo, matrix):
        source = inspect.getsource(module)
        for phrase in ("not landed", "has not landed", "under construction", "not registered yet"):
            assert phrase not in source, (module.__name__, phrase)


def test_demo_runs_every_task_and_its_help_says_so() -> None:
    """Every registered task has a demo step, and `demo --help` lists every step by its title."""
    from genderscope import catalogue as registry

    steps = demo.demo_steps(Console())
    covered = {t for s in steps for t in s.tasks}
    assert set(registry.TASKS) <= covered, set(registry.TASKS) - covered
    assert {"bordia-score", "bordia-sweep"} <= covered
    res = CliRunner().invoke(app, ["demo", "--help"], env={"COLUMNS": "400"})
    assert res.exit_code == 0
    text = " ".join(res.output.split())
    for s in steps:
        assert " ".join(s.title.split()) in text, s.title


def test_demo_runs_sharing_a_test_have_distinct_labels() -> None:
    steps = [s for s in demo.demo_steps(Console(quiet=True)) if s.label]
    assert len(steps) >= 8
    for i, a in enumerate(steps):
        for b in steps[i + 1 :]:
            if set(a.tasks) & set(b.tasks):
                assert a.label != b.label, (a.name, b.name)


def test_demo_start_line_and_step_times(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    steps = [demo.Step("gest-random", "GEST", _ok, expect_s=100), demo.Step("b", "B", _ok, expect_s=50)]
    monkeypatch.setattr(demo, "demo_steps", lambda console: steps)
    console = Console(record=True, width=200)
    outcome = demo.run_demo(tmp_path / "demo", console=console)
    text = console.export_text()
    assert text.startswith("genderscope demo: 2 steps, about 2.5 min") and "slow the model steps" in text
    assert set(outcome.times) == {"gest-random", "b"}
    assert all(wall > 0 and cpu > 0 for wall, cpu in outcome.times.values())
    assert "gest-random:" in text and " s CPU" in text and "total" in text.split("step times:")[1]


def test_model_steps_run_after_their_background_conversion(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran: list[str] = []
    waited: list[str] = []

    class Conversions:
        def __init__(self, models: list[str]):
            assert models == ["gemma"]  # only the steps that run: the skipped step's model is not converted

        def __enter__(self) -> "Conversions":
            return self

        def __exit__(self, *exc: object) -> None:
            pass

        def wait(self, model: str, console: Console) -> None:
            waited.append(model)

    def body(name: str):
        def go(folder: Path, quick: bool) -> Path:
            ran.append(name)
            return _ok(folder, quick)

        return go

    steps = [
        demo.Step("gest-gemma", "G", body("gest-gemma"), gguf="gemma"),
        demo.Step("smol", "S", _fail, gguf="smollm2", needs=lambda: "model package not installed"),
        demo.Step("gest-random", "R", body("gest-random")),
    ]
    monkeypatch.setattr(demo, "demo_steps", lambda console: steps)
    monkeypatch.setattr(demo, "_Conversions", Conversions)
    outcome = demo.run_demo(tmp_path / "demo", console=Console(quiet=True))
    assert ran == ["gest-random", "gest-gemma"] and waited == ["", "gemma"], outcome.failed
    assert list(outcome.folders) == ["gest-gemma", "gest-random"]  # the report keeps the steps order


def test_conversions_run_in_a_background_process_and_failures_are_only_said() -> None:
    console = Console(record=True, width=200)
    with demo._Conversions(["gemma", "smollm2", "gemma"], worker=str.upper) as conv:
        assert conv.models == ["gemma", "smollm2"]
        assert conv.futures["gemma"].result(timeout=60) == "GEMMA"
        conv.wait("gemma", console)
        conv.wait("", console)  # a step without a model: nothing to wait for
    with demo._Conversions(["gemma"], worker=int) as conv:
        conv.wait("gemma", console)
    assert "background conversion of gemma failed: ValueError" in console.export_text()
    with demo._Conversions([]) as conv:
        assert conv.pool is None
