"""results.json of schema version 2 against docs/results.schema.json, and older folders (versions 0 and 1,
without the run facts) still read by report, compare and check."""

from __future__ import annotations

from repo_paths import ROOT
import json
import shutil
from pathlib import Path

import pytest

from genderscope.core.engine import run_tasks
from genderscope.core.results_file import COMPLETE, FAILED, PARTIAL, run_status, status_of
from genderscope.core.runlog import read_run_log

SCHEMA = json.loads((ROOT / "docs" / "results.schema.json").read_text(encoding="utf-8"))
FIXTURES = ROOT / "tests" / "fixtures"
OLD_FOLDERS = [
    FIXTURES / "runs" / "v1-random",
    FIXTURES / "report" / "dawinobias",
    FIXTURES / "report" / "abc",
]


@pytest.fixture(scope="module")
def fresh(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("fresh") / "run"
    run_tasks(["gest", "winogender"], "random", limit=4, out=out, progress=False)
    return out


def test_fresh_results_json_matches_the_schema(fresh: Path) -> None:
    import jsonschema
    data = json.loads((fresh / "results.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    jsonschema.Draft202012Validator(SCHEMA).validate(data)
    assert data["status"] == COMPLETE and data["counts"]["tasks"] == 2
    assert data["backend"]["spec"] == "random"
    gest = data["tasks"]["gest"]
    assert gest["task_version"] == "1" and gest["task_status"] == COMPLETE
    assert set(gest["data_pins"]) == {"gest/gest.csv"}
    manifest = json.loads((fresh / "run.json").read_text(encoding="utf-8"))
    assert manifest["status"] == COMPLETE and manifest["tasks"]["gest"]["task_version"] == "1"
    assert manifest["source_revision"] == data["source_revision"]
    assert manifest["tasks"]["gest"]["datasets"] == gest["data_pins"]


def test_the_schema_rejects_what_it_should(fresh: Path) -> None:
    import jsonschema
    data = json.loads((fresh / "results.json").read_text(encoding="utf-8"))
    bad = {**data, "status": "done"}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, SCHEMA)
    bad = json.loads(json.dumps(data))
    bad["tasks"]["gest"]["metrics"]["x"] = {"ci_low": 0.1}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, SCHEMA)


def test_a_command_log_matches_the_schema() -> None:
    """A command other than ``run`` (bordia score) builds ResultsFile itself: no model, no task facts."""
    import jsonschema
    from genderscope.core.metrics import MetricEntry
    from genderscope.core.results_file import ResultsFile, TaskResults

    results = ResultsFile(model="corpus:ptb:valid")
    results.tasks["bordia-score"] = TaskResults(metrics={"fixed.mu": MetricEntry(0.12, 0.10, 0.14)})
    jsonschema.validate(results.to_json(), SCHEMA)
    assert results.to_json()["status"] == COMPLETE and results.to_json()["backend"] is None


def test_fresh_run_reads_back_typed(fresh: Path) -> None:
    manifest, results = read_run_log(fresh)
    assert manifest is not None and manifest.status == COMPLETE and manifest.counts["attempts"] > 0
    block = results.tasks["winogender"]
    assert block.version == "1" and block.status == COMPLETE and block.data_pins
    assert "task_version" not in block.extra and "engine_counts" not in block.extra
    written = json.loads((fresh / "results.json").read_text())
    again = results.to_json()
    facts = [k for k in written if k != "tasks"]
    assert {k: again[k] for k in facts} == {k: written[k] for k in facts}
    for key in ("task_version", "task_status", "data_pins", "engine_counts"):
        assert again["tasks"]["winogender"][key] == written["tasks"]["winogender"][key]


def test_source_revision_of_a_checkout(fresh: Path) -> None:
    import re

    import genderscope

    revision = json.loads((fresh / "results.json").read_text())["source_revision"]
    if (ROOT / ".git").exists() and Path(genderscope.__file__).resolve().is_relative_to(ROOT / "src"):
        assert re.fullmatch(r"[0-9a-f]{40}(\+dirty)?", revision or ""), revision
    else:  # an installed package: no revision
        assert revision is None


def test_status_rules() -> None:
    assert status_of(10, 0) == COMPLETE and status_of(10, 3) == PARTIAL and status_of(10, 10) == FAILED
    assert status_of(0, 0) == COMPLETE
    assert run_status([COMPLETE, COMPLETE]) == COMPLETE
    assert run_status([COMPLETE, FAILED]) == PARTIAL and run_status([FAILED, FAILED]) == FAILED
    assert run_status([COMPLETE], left_out=True) == PARTIAL


@pytest.mark.parametrize("folder", OLD_FOLDERS, ids=lambda p: p.name)
def test_older_folders_still_read(folder: Path, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from genderscope.cli.app import app

    manifest, results = read_run_log(folder)
    assert results.schema_version in (0, 1) and results.status is None and results.backend is None
    assert all(t.version is None for t in results.tasks.values())
    copy = shutil.copytree(folder, tmp_path / folder.name)
    runner = CliRunner()
    report = runner.invoke(app, ["report", str(copy), "-o", str(tmp_path / "r.html")])
    assert report.exit_code == 0, report.output
    compare = runner.invoke(app, ["compare", str(copy), str(copy)])
    assert compare.exit_code == 0, compare.output
    check = runner.invoke(app, ["check", str(copy), "--fail-on", "none"])
    assert check.exit_code == 0, check.output
