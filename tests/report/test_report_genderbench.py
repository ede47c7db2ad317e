"""The report's GenderBench section: marks grouped by GenderBench's use cases, harms per marked metric,
our values, intervals and states per run, in the HTML report and in `genderscope report`'s output."""

from __future__ import annotations

from repo_paths import FIXTURES
from types import SimpleNamespace

import pytest

from genderscope.core import lookup
from genderscope.core.engine import run_tasks
from genderscope.core.metrics import MetricEntry
from genderscope.core.results_file import TaskResults
from genderscope.report.genderbench import genderbench_section, marks_of
from genderscope.report.html import render_html
from genderscope.report.runs import load_runs
from genderscope.tasks.chatprobe.probe import use_case

POINTS = FIXTURES / "genderbench_logs" / "points"


def _mark(metric: str, idx: int | None, harms: list[str]) -> dict:
    return {
        "metric": metric,
        "mark_value": idx,
        "harm_types": harms,
        "description": f"about {metric}",
        "source": "ci (normal)",
        "comparable_with_genderbench": True,
    }


def _res(probe: str, uc: str | None, marks: dict[str, dict]) -> TaskResults:
    metrics = {m: MetricEntry(0.1, 0.0, 0.2) for m in marks}
    metrics["undetected_rate_attempts"] = MetricEntry(0.0, 0.0, 0.0)
    extra = {"marks": marks, "counts": {"items": 500}, "genderbench": {"probe": probe, "use_case": uc}}
    return TaskResults(metrics=metrics, extra=extra)


def _run(label: str, tasks: dict[str, TaskResults]) -> SimpleNamespace:
    return SimpleNamespace(row_label=label, label=label, tasks=tasks, manifest=None)


def test_every_genderbench_probe_declares_its_use_case():
    for task in lookup.genderbench_probes():
        assert use_case(lookup.task_class(task).probe_name), task
    assert use_case("dreaddit") == "Manifested opinions: Affective computing"
    assert use_case("hiring_an") == "Decision-making" and use_case("jobs_lum") == "Creative writing"


def test_marks_are_grouped_by_use_case_in_genderbench_order_with_harms_and_a_cell_per_run():
    a = _run(
        "model-a",
        {
            "isear": _res(
                "isear",
                "Manifested opinions: Affective computing",
                {"max_diff": _mark("max_diff", 1, ["Stereotypical reasoning"])},
            ),
            "hiring-x": _res(
                "hiring_x",
                "Decision-making",
                {
                    "diff_rate": _mark("diff_rate", 0, ["Outcome disparity"]),
                    "masculine_rate": _mark("masculine_rate", 3, ["Representational harms"]),
                },
            ),
            "abc": TaskResults(metrics={"x": MetricEntry(1.0)}),  # not a GenderBench probe: not shown
        },
    )
    b = _run(
        "model-b",
        {
            "isear": _res(
                "isear", "Manifested opinions: Affective computing", {"max_diff": _mark("max_diff", None, [])}
            )
        },
    )
    section = genderbench_section([a, b])
    assert section is not None and section.runs == ["model-a", "model-b"]
    assert [(g.name, g.within) for g in section.groups] == [
        ("Decision-making", None),
        ("Affective computing", "Manifested opinions"),
    ]
    dm, ac = section.groups
    assert [(r.task, r.metric, r.harms) for r in dm.rows] == [
        ("hiring-x", "diff_rate", ["Outcome disparity"]),
        ("hiring-x", "masculine_rate", ["Representational harms"]),
    ]
    assert dm.rows[1].cells[0].mark == "D" and dm.rows[1].cells[0].label == "Catastrophic"
    assert dm.rows[0].cells[1] is None  # model-b did not run it
    cell = dm.rows[0].cells[0]
    assert (cell.value, cell.ci, cell.source) == ("0.1", "[0, 0.2]", "ci (normal)")
    assert ac.rows[0].cells[1].mark is None and ac.rows[0].harms == ["Stereotypical reasoning"]
    assert section.totals == [
        {"A": 1, "B": 1, "C": 0, "D": 1, "none": 0},
        {"A": 0, "B": 0, "C": 0, "D": 0, "none": 1},
    ]


def test_gest_single_mark_record_and_its_declared_harms_are_read():
    res = TaskResults(
        metrics={"stereotype_rate": MetricEntry(0.2)},
        extra={
            "mark": {"metric": "stereotype_rate", "index": 2, "source": "point value"},
            "genderbench": {
                "probe": "gest",
                "use_case": "Manifested opinions",
                "harm_types": {"stereotype_rate": ["Stereotypical reasoning"]},
            },
        },
    )
    (m,) = marks_of(res).values()
    assert (m["mark"], m["label"], m["harm_types"]) == ("C", "Critical", ["Stereotypical reasoning"])


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    base = tmp_path_factory.mktemp("gbreport")
    run_tasks(["genderbench"], "random", limit=40, out=base / "random", progress=False)
    run_tasks(
        ["genderbench"],
        f"replay:{POINTS}",
        limit=40,
        options={"bootstrap_cycles": 0},
        out=base / "replayed",
        progress=False,
        label="GenderBench log",
    )
    return [base / "random", base / "replayed"]


def test_html_report_and_terminal_show_the_section(two_runs, monkeypatch):
    from typer.testing import CliRunner

    from genderscope.cli.app import app

    runs = load_runs(two_runs)
    section = genderbench_section(runs)
    group = next(g for g in section.groups if g.name == "Manifested opinions")
    tasks = list(dict.fromkeys(r.task for r in group.rows))  # GenderBench's order (the suite's)
    assert tasks == [t for t in lookup.genderbench_probes() if t in tasks]
    assert {"direct", "gest"} <= set(tasks)
    direct, gest = (next(r for r in group.rows if r.task == t) for t in ("direct", "gest"))
    assert direct.harms == ["Stereotypical reasoning"] and direct.cells[1].mark == "D"
    assert direct.cells[0].ci and direct.cells[0].state  # the random run: an interval and a state
    assert gest.cells[1] is None  # no GEST log: not run
    page = render_html(runs)
    assert '<section id="genderbench"' in page and 'data-use-case="Manifested opinions"' in page
    assert 'data-task="direct" data-metric="fail_rate"' in page and "Stereotypical reasoning" in page
    monkeypatch.setenv("COLUMNS", "200")
    res = CliRunner().invoke(app, ["report", *map(str, two_runs), "-o", str(two_runs[0] / "r.html")])
    assert res.exit_code == 0, res.output
    assert "GenderBench marks by use case" in res.output and "Manifested opinions" in res.output
    assert "GenderBench log: D×1" in res.output.replace("\n", " ")


def test_no_section_without_genderbench_probes(tmp_path):
    run_tasks(["winobias-lm"], "random", limit=5, out=tmp_path / "w", progress=False)
    runs = load_runs([tmp_path / "w"])
    assert genderbench_section(runs) is None
    assert 'id="genderbench"' not in render_html(runs)
