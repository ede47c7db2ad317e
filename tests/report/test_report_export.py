"""`genderscope compare` and `genderscope export` (CSV and Parquet)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from genderscope.cli.app import app
from genderscope.common.errors import UsageError
from genderscope.report.compare import compare_rows, rich_table
from genderscope.report.export import export_run
from genderscope.report.runs import load_runs
from report_runs import fixture_run, gest_run


@pytest.fixture(scope="module")
def gest_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return gest_run(tmp_path_factory.mktemp("gest") / "run", limit=20)


def test_compare_rows_align_metrics_across_runs(gest_dir: Path, tmp_path: Path) -> None:
    runs = load_runs([gest_dir, fixture_run("dawinobias", tmp_path / "d")])
    rows = compare_rows(runs)
    by_key = {(r.task, r.metric): r.cells for r in rows}
    sr = json.loads((gest_dir / "results.json").read_text())["tasks"]["gest"]["metrics"]["stereotype_rate"]
    assert by_key[("gest", "stereotype_rate")][0].value == sr["value"]
    assert by_key[("gest", "stereotype_rate")][1] is None
    assert by_key[("dawinobias", "ges")][1].value == 0.415
    assert [r.metric for r in rows if r.task == "gest"] == [
        "stereotype_rate",
        "frequency_male_option",
        "frequency_female_option",
        "frequency_neither_option",
        "undetected_rate_attempts",
    ]
    assert len(compare_rows(runs, all_metrics=True)) == 60 + 9
    assert {r.task for r in compare_rows(runs, tasks=["dawinobias"])} == {"dawinobias"}


def test_compare_cli(gest_dir: Path, tmp_path: Path) -> None:
    other = gest_run(tmp_path / "g2", seed=3, limit=20)
    res = CliRunner().invoke(app, ["compare", str(gest_dir), str(other)], terminal_width=200)
    assert res.exit_code == 0, res.output
    assert "random (seed 0)" in res.output and "random (seed 3)" in res.output
    assert "stereotype_rate" in res.output
    r = rich_table(load_runs([gest_dir, other]))
    assert [c.header for c in r.columns] == ["task", "metric", "random (seed 0)", "random (seed 3)"]
    res = CliRunner().invoke(app, ["compare", str(tmp_path / "nothing")])
    assert res.exit_code != 0


def test_export_csv(gest_dir: Path, tmp_path: Path) -> None:
    files = export_run(gest_dir, "csv", tmp_path / "csv")
    names = sorted(p.name for p in files)
    assert names == ["attempts.csv", "gest__stereotypes.csv", "metrics.csv"]
    metrics = pd.read_csv(tmp_path / "csv" / "metrics.csv")
    assert len(metrics) == 60 and list(metrics.columns) == [
        "model",
        "task",
        "metric",
        "value",
        "ci_low",
        "ci_high",
        "no_ci",
    ]
    res = json.loads((gest_dir / "results.json").read_text())["tasks"]["gest"]
    row = metrics[metrics.metric == "stereotype_rate"].iloc[0]
    assert row.value == pytest.approx(res["metrics"]["stereotype_rate"]["value"], rel=1e-12)
    assert len(pd.read_csv(tmp_path / "csv" / "gest__stereotypes.csv")) == 16
    n_attempts = len((gest_dir / "attempts.jsonl").read_text().splitlines())
    att = pd.read_csv(tmp_path / "csv" / "attempts.csv")
    assert len(att) == n_attempts and "parsed_option" in att.columns


def test_export_parquet_matches_csv(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    run = fixture_run("dawinobias", tmp_path / "d")
    # a column mixing numbers and text must still be writable
    data = json.loads((run / "results.json").read_text())
    data["tasks"]["dawinobias"]["mixed"] = [{"a": 1, "b": "x"}, {"a": "two", "b": None}]
    (run / "results.json").write_text(json.dumps(data))
    export_run(run, "csv", tmp_path / "csv")
    files = export_run(run, "parquet", tmp_path / "pq")
    assert sorted(p.name for p in files) == [
        "attempts.parquet",
        "dawinobias__mixed.parquet",
        "dawinobias__nuance_table.parquet",
        "metrics.parquet",
    ]
    pq = pd.read_parquet(tmp_path / "pq" / "dawinobias__nuance_table.parquet")
    csv = pd.read_csv(tmp_path / "csv" / "dawinobias__nuance_table.csv")
    assert list(pq.columns) == list(csv.columns)
    assert pq["f1"].tolist() == csv["f1"].tolist()
    assert pq["f1_ci95"].tolist()[0] == "[0.47, 0.571]"  # nested values as JSON text
    assert pd.read_parquet(tmp_path / "pq" / "dawinobias__mixed.parquet")["a"].tolist() == ["1", "two"]


def test_export_cli_and_errors(gest_dir: Path, tmp_path: Path) -> None:
    res = CliRunner().invoke(
        app, ["export", str(gest_dir), "--format", "csv", "-o", str(tmp_path / "e"), "--no-attempts"]
    )
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in (tmp_path / "e").iterdir()) == ["gest__stereotypes.csv", "metrics.csv"]
    with pytest.raises(UsageError, match="csv, parquet"):
        export_run(gest_dir, "xlsx", tmp_path / "x")
