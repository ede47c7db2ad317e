"""``replay:`` over GenderBench's own probe logs: a GenderBench run re-scored here, without a model call,
gives the metrics and marks GenderBench logged; a log made with other parameters is one clear line."""

from __future__ import annotations

from repo_paths import FIXTURES
import json
import math
import shutil
from pathlib import Path

import pytest

from genderscope.backends import genderbench_log as gblog
from genderscope.core.engine import run_tasks
from genderscope.common.errors import DataError, MissingResponsesError, UsageError

LOGS = FIXTURES / "genderbench_logs"
POINTS = LOGS / "points"  # calculate_cis=False, sample_k=40, num_repetitions=1
INTERVALS = LOGS / "intervals"  # calculate_cis=True, sample_k=40, num_repetitions=2


def _state(folder: Path) -> dict:
    (path,) = folder.glob("*.jsonl")
    return json.loads(path.read_text(encoding="utf-8").splitlines()[-1])["probe_state"]


def _same(a, b) -> bool:
    a = math.nan if a is None else a
    b = math.nan if b is None else b
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= 1e-9


def _run(tmp_path: Path, model: str, **kw):
    return run_tasks(["direct"], model, out=tmp_path / "run", progress=False, **kw)


def test_point_values_and_marks_equal_genderbenchs_log(tmp_path, data_registry):
    state = _state(POINTS)
    out = _run(tmp_path, f"replay:{POINTS}", limit=40, options={"bootstrap_cycles": 0}, data=data_registry)
    (run,) = out.runs
    assert list(run.result.metrics) == list(state["metrics"])
    for name, logged in state["metrics"].items():
        assert _same(run.result.metrics[name].value, logged), name
    marks = run.result.extra["marks"]
    assert {k: v["mark_value"] for k, v in marks.items()} == {
        k: v["mark_value"] for k, v in state["marks"].items()
    }
    assert run.counts.attempts == 40 and run.counts.skipped == 0
    stats = out.manifest.backend_stats["genderbench_logs"]["DirectProbe"]
    assert stats["items"] == 40 and stats["answers"] == 40 and stats["parameters"]["sample_k"] == 40


def test_normal_intervals_and_marks_equal_genderbenchs_logged_intervals(tmp_path, data_registry):
    state = _state(INTERVALS)
    (log_file,) = INTERVALS.glob("*.jsonl")  # a single log file works as well as its folder
    out = _run(
        tmp_path,
        f"replay:{log_file}",
        limit=40,
        trials=2,
        options={"ci_method": "normal"},
        data=data_registry,
    )
    (run,) = out.runs
    assert run.counts.attempts == 80
    for name, (lo, hi) in state["metrics"].items():
        m = run.result.metrics[name]
        assert _same(m.ci_low, lo) and _same(m.ci_high, hi), name
    assert run.result.extra["marks"]["fail_rate"]["mark_value"] == state["marks"]["fail_rate"]["mark_value"]
    logs = out.manifest.backend_stats["genderbench_logs"]
    metrics = {n: (m.value, m.ci_low, m.ci_high) for n, m in run.result.metrics.items()}
    line = gblog.agreement(logs["DirectProbe"], metrics, {"fail_rate": 2}, "normal")
    assert line.startswith("5 of 5 metric intervals equal the log's") and line.endswith("marks 1 of 1 equal")
    assert "rerun with --ci-method normal" in gblog.agreement(logs["DirectProbe"], metrics, {}, "percentile")


@pytest.mark.parametrize(
    "kw, differs",
    [
        ({}, "the run asks 3944 items, the log holds 40"),
        ({"limit": 20}, "the run asks 20 items, the log holds 40"),
        ({"limit": 40, "trials": 2}, "the run asks 2 repetition(s) per prompt, the log holds 1"),
        ({"limit": 40, "seed": 7}, "item 0, prompt 0 has another prompt text in the log"),
    ],
)
def test_a_log_made_with_other_parameters_is_one_line_naming_it_and_the_fix(
    tmp_path, data_registry, kw, differs
):
    with pytest.raises(DataError) as err:
        _run(tmp_path, f"replay:{POINTS}", options={"bootstrap_cycles": 0}, data=data_registry, **kw)
    msg = str(err.value)
    assert "\n" not in msg and msg.startswith(str(next(POINTS.glob("*.jsonl"))))
    assert differs in msg
    assert "sample_k=40, num_repetitions=1, random_seed=123" in msg
    assert "run with --limit 40, --trials 1, --seed 123" in msg


def test_suite_rescores_the_probes_whose_log_is_present(tmp_path, data_registry):
    out = run_tasks(
        ["genderbench"],
        f"replay:{POINTS}",
        limit=40,
        options={"bootstrap_cycles": 0},
        out=tmp_path / "run",
        progress=False,
        data=data_registry,
    )
    assert [r.task.name for r in out.runs] == ["direct"]
    assert out.left_out["gest"] == f"replay:{POINTS} holds no answer for it"


def test_a_task_named_on_its_own_without_a_log_is_an_error(tmp_path, data_registry):
    with pytest.raises(MissingResponsesError):
        run_tasks(
            ["gest"], f"replay:{POINTS}", limit=5, out=tmp_path / "r", progress=False, data=data_registry
        )


def test_no_log_for_any_task_of_the_suite_is_an_error(tmp_path, data_registry):
    folder = tmp_path / "logs"
    folder.mkdir()
    text = next(POINTS.glob("*.jsonl")).read_text(encoding="utf-8")
    (folder / "otherprobe_1.jsonl").write_text(
        text.replace('"DirectProbe"', '"OtherProbe"'), encoding="utf-8"
    )
    with pytest.raises(UsageError, match="holds no answer for any of the tasks"):
        run_tasks(
            ["genderbench"],
            f"replay:{folder}",
            limit=40,
            out=tmp_path / "r",
            progress=False,
            data=data_registry,
        )


def test_the_last_state_line_counts(tmp_path):
    """A log written with log_strategy="during" holds one state per step; the last one is read, and
    attempts not yet answered in a state are no answers."""
    final = json.loads(next(POINTS.glob("*.jsonl")).read_text(encoding="utf-8"))
    early = json.loads(json.dumps(final))
    for item in early["probe_state"]["probe_items"]:
        for a in item["attempts"]:
            a["answer"] = None
    path = tmp_path / "directprobe_x.jsonl"
    path.write_text(json.dumps(early) + "\n" + json.dumps(final) + "\n", encoding="utf-8")
    log = gblog.read_log(path)
    assert log.probe_class == "DirectProbe" and log.status == "FINISHED" and len(log.entries) == 40
    e = log.entries[0]
    assert (e.key, e.trial) == ("genderbench:DirectProbe/0/0", 1) and e.prompt.startswith("Do you agree")
    path.write_text(json.dumps(early) + "\n", encoding="utf-8")
    assert gblog.read_log(path).entries == []
    early["probe_state"].update(status="status.POPULATED", metrics={}, marks={})
    path.write_text(json.dumps(early) + "\n", encoding="utf-8")
    said = gblog.agreement(gblog.read_log(path).summary(), {}, {}, None)
    assert said == "the log holds no metrics to compare (GenderBench's status POPULATED)"


def test_folder_scan_skips_other_files_and_refuses_two_logs_of_one_class(tmp_path):
    folder = tmp_path / "logs"
    shutil.copytree(POINTS, folder)
    (folder / "defaultharness_1.jsonl").write_text(
        '{"class": "DirectProbe", "marks": {}}\n', encoding="utf-8"
    )
    (folder / "notes.txt").write_text("x", encoding="utf-8")
    assert [p.name for p in gblog.log_files(folder)] == [next(POINTS.glob("*.jsonl")).name]
    shutil.copy(next(INTERVALS.glob("*.jsonl")), folder)
    with pytest.raises(DataError, match="two GenderBench logs of DirectProbe"):
        gblog.read_logs(folder)


def test_a_malformed_state_is_one_line(tmp_path):
    path = tmp_path / "directprobe_x.jsonl"
    path.write_text('{"probe_state": {"class": "DirectProbe", "probe_items": [{"prompts": []}]}}\n')
    with pytest.raises(DataError, match=r"item 0 of the probe state is malformed"):
        gblog.read_log(path)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(UsageError, match="no GenderBench probe log"):
        _run(tmp_path, f"replay:{empty}")


def test_cli_says_whether_the_rescored_metrics_equal_the_log(tmp_path, data_registry):
    from typer.testing import CliRunner

    from genderscope.cli.app import app

    args = ["run", "genderbench", "--model", f"replay:{POINTS}", "--limit", "40", "--no-progress"]
    res = CliRunner().invoke(app, args + ["--bootstrap-cycles", "0", "--out", str(tmp_path / "a")])
    assert res.exit_code == 0, res.output

    def flat(text: str) -> str:  # the console folds long lines, at any character of a long path
        return "".join(text.split())

    said = flat(res.output)
    name = next(POINTS.glob("*.jsonl")).name
    assert flat(f"direct: vs GenderBench's log {name}: 5 of 5 metric values equal the log's") in said
    assert flat("marks 1 of 1 equal") in said
    from genderscope.core.paths import display_path

    assert flat(f"gest: not run, replay:{display_path(POINTS)} holds no answer for it") in said
    res = CliRunner().invoke(app, args + ["--out", str(tmp_path / "b")])
    assert flat("marks not compared (ours from intervals") in flat(res.output)
