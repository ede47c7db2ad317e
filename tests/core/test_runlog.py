"""The typed run log: run.json / results.json round trips, old unversioned folders, clear errors."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from genderscope.common.errors import DataError, UsageError
from genderscope.core.results_file import SCHEMA_VERSION, ResultsFile, TaskResults
from genderscope.core.metrics import MetricEntry
from genderscope.core.runlog import (
    ModelInfo,
    RunManifest,
    TaskManifest,
    new_manifest,
    read_run_log,
    write_run_log,
)
from genderscope.core.metrics import Metric
from genderscope.core.task import TaskResult
from report_runs import FIXTURES, fixture_run, gest_run


def _log() -> tuple[RunManifest, ResultsFile]:
    manifest = new_manifest(command="genderscope bordia score ptb:valid", model=None, seed=0)
    manifest.tasks["bordia-score"] = TaskManifest(
        options={"window": 10}, datasets={"ptb/valid.txt": "ab" * 32}
    )
    results = ResultsFile(model="corpus:ptb:valid")
    results.tasks["bordia-score"] = TaskResults(
        metrics={
            "fixed.mu": MetricEntry(0.12, 0.1, 0.14),
            "fixed.n_scored": MetricEntry(40, no_ci="exact count, no sampling"),
        },
        extra={"contexts": {"rows": [{"word": "nurse", "bias": 1.5}]}, "deep": {"a": {"b": [{"x": 1}]}}},
        headline=["fixed.mu"],
    )
    return manifest, results


def test_round_trip(tmp_path: Path) -> None:
    manifest, results = _log()
    write_run_log(tmp_path, manifest, results)
    m2, r2 = read_run_log(tmp_path)
    assert m2 == manifest and r2 == results
    raw = json.loads((tmp_path / "run.json").read_text())
    assert raw["schema_version"] == SCHEMA_VERSION and raw["model"] is None
    res = json.loads((tmp_path / "results.json").read_text())
    assert res["schema_version"] == SCHEMA_VERSION
    assert res["tasks"]["bordia-score"]["metrics"]["fixed.n_scored"] == {
        "value": 40,
        "no_ci": "exact count, no sampling",
    }
    assert r2.tasks["bordia-score"].tables() == {"contexts.rows": [{"word": "nurse", "bias": 1.5}]}
    assert r2.tasks["bordia-score"].headline_names() == ["fixed.mu"]


def test_metric_entry_writes_numbers_as_task_metric_does() -> None:
    assert Metric is MetricEntry  # one metric type
    for value, lo, hi in [
        (0.1, 0.0, 0.2),
        (np.float64(1 / 3), np.float32(0.25), None),
        (3, None, None),
        (np.int64(7), math.nan, math.inf),
        (math.nan, None, None),
    ]:
        m = Metric(value, lo, hi)
        assert MetricEntry.of(m).to_json() == m.to_json()
    r = TaskResult(
        metrics={"a": Metric(np.float64(0.5), 0.1, 0.9)}, extra={"t": [{"x": np.int64(2)}]}, headline=["a"]
    )
    assert TaskResults.of(r).to_json() == r.to_json()


def test_engine_writes_the_typed_log(tmp_path: Path) -> None:
    run = gest_run(tmp_path / "g", limit=12)
    manifest, results = read_run_log(run)
    assert manifest is not None and manifest.schema_version == SCHEMA_VERSION
    assert isinstance(manifest.model, ModelInfo) and manifest.model.spec == "random:0"
    task = manifest.tasks["gest"]
    assert task.options["bootstrap_cycles"] == 200 and task.datasets["gest/gest.csv"]
    assert task.counts["attempts"] > 0
    assert results.model == "random:0" and len(results.tasks["gest"].metrics) == 60


def test_old_unversioned_folder_reads_as_version_0(tmp_path: Path) -> None:
    run = fixture_run("dawinobias", tmp_path / "d")
    assert "schema_version" not in json.loads((FIXTURES / "dawinobias" / "run.json").read_text())
    manifest, results = read_run_log(run)
    assert manifest.schema_version == 0 and results.schema_version == 0
    assert manifest.model.fingerprint == "hf-mlm:tiny-fixture@0123abcd"
    assert manifest.tasks["dawinobias"].options["n_boot"] == 1000
    assert results.tasks["dawinobias"].metrics["ges"].value == 0.415


def test_folder_without_run_json(tmp_path: Path) -> None:
    run = fixture_run("abc", tmp_path / "a")
    manifest, results = read_run_log(run / "results.json")
    assert manifest is None and "abc" in results.tasks


def test_bare_number_metrics_are_accepted(tmp_path: Path) -> None:
    (tmp_path / "results.json").write_text(json.dumps({"model": "m", "tasks": {"t": {"metrics": {"n": 3}}}}))
    _, results = read_run_log(tmp_path)
    assert results.tasks["t"].metrics["n"] == MetricEntry(3)


@pytest.mark.parametrize(
    "name,text,message",
    [
        ("results.json", '{"schema_version": 99, "model": "m", "tasks": {}}', "unknown schema_version 99"),
        ("results.json", '{"schema_version": "1", "model": "m", "tasks": {}}', "unknown schema_version"),
        ("results.json", '{"model": "m", "tasks": []}', "expected"),
        (
            "results.json",
            '{"model": "m", "tasks": {"t": {"metrics": {"x": {"ci_low": 1}}}}}',
            "needs a 'value'",
        ),
        ("results.json", '{"model": "m", "tasks": {"t": {"metrics": [1]}}}', "'metrics' must be an object"),
        ("results.json", '{"model": "m", "tasks": {\n "t": }', r"results.json:2: invalid JSON"),
        ("run.json", '{"schema_version": 3, "tasks": {}}', "unknown schema_version 3"),
        ("run.json", '{"tasks": {"t": {"options": 3}}}', "'options' must be an object"),
        ("run.json", '{"seed": "x", "tasks": {}}', "'seed' must be an integer"),
        ("run.json", "[]", "expected an object"),
    ],
)
def test_malformed_files_name_the_file(tmp_path: Path, name: str, text: str, message: str) -> None:
    (tmp_path / "results.json").write_text('{"model": "m", "tasks": {}}')
    (tmp_path / name).write_text(text)
    with pytest.raises(DataError, match=message) as exc:
        read_run_log(tmp_path)
    assert str(tmp_path / name) in str(exc.value) and "\n" not in str(exc.value)


def test_not_a_run_folder(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such run folder"):
        read_run_log(tmp_path / "nope")
    with pytest.raises(UsageError, match="no results.json"):
        read_run_log(tmp_path)
