"""Model-card export: bias.md and the Hugging Face model-index YAML, parsed back with huggingface_hub's
model-card parser (offline); every published number round-trips to results.json."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from genderscope.core.engine import run_tasks
from genderscope.core.runlog import read_run_log
from report_runs import gest_run, winobias_adjectives_run

hub = pytest.importorskip("huggingface_hub")
pytest.importorskip("yaml")


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "genderscope.cli", *args], capture_output=True, text=True, timeout=120
    )


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    base = tmp_path_factory.mktemp("card")
    run_tasks(
        ["gest"], "random", limit=50, out=base / "gest", progress=False, options={"bootstrap_cycles": "200"}
    )
    return [base / "gest", winobias_adjectives_run(base / "wa")]


def test_model_card_round_trips_through_huggingface_hub(runs: list[Path], tmp_path: Path) -> None:
    res = _cli("export", *map(str, runs), "--format", "model-card", "-o", str(tmp_path / "card"))
    assert res.returncode == 0, res.stderr
    md = (tmp_path / "card" / "bias.md").read_text(encoding="utf-8")
    yaml_text = (tmp_path / "card" / "model-index.yaml").read_text(encoding="utf-8")
    card = hub.ModelCard(f"---\n{yaml_text}---\n\n{md}", ignore_metadata_errors=False)
    results = card.data.eval_results
    assert card.data.model_name == "random"
    assert sorted(r.dataset_type for r in results) == ["genderscope/gest", "genderscope/winobias-adjectives"]
    for run in runs:
        _, file = read_run_log(run)
        ((task, block),) = file.tasks.items()
        (got,) = [r for r in results if r.dataset_name == task]
        entry = block.metrics[got.metric_type]
        assert got.metric_value == entry.value
        assert got.metric_args["ci_low"] == entry.ci_low and got.metric_args["ci_high"] == entry.ci_high
        assert got.metric_args["state"] in md and got.metric_type in md
        assert "genderscope export" not in md  # commands are the runs' own
    for text in (
        "### Methods",
        "https://arxiv.org/abs/2311.18711",
        "| Apache-2.0 |",
        "### Versions",
        "### Commands",
    ):
        assert text in md
    assert "run_tasks" not in md


def test_one_card_per_model(runs: list[Path], tmp_path: Path) -> None:
    other = gest_run(tmp_path / "gest7", seed=7, limit=20)
    res = _cli("export", str(runs[0]), str(other), "--format", "model-card", "-o", str(tmp_path / "cards"))
    assert res.returncode == 0, res.stderr
    folders = sorted(p.name for p in (tmp_path / "cards").iterdir())
    assert folders == ["random", "random_seed_7"]
    for f in folders:
        assert (tmp_path / "cards" / f / "bias.md").is_file()


def test_several_runs_need_an_output_folder(runs: list[Path]) -> None:
    res = _cli("export", *map(str, runs), "--format", "model-card")
    assert res.returncode == 2 and "needs --out" in res.stderr
    res = _cli("export", str(runs[0]), "--format", "pdf")
    assert res.returncode == 2 and "model-card" in res.stderr


def test_corpus_only_runs_have_no_model_card(runs: list[Path], tmp_path: Path) -> None:
    from genderscope.core.metrics import MetricEntry
    from genderscope.core.results_file import ResultsFile, TaskResults
    from genderscope.core.runlog import new_manifest, write_run_log

    corpus = tmp_path / "corpus"
    results = ResultsFile(model="corpus:ptb:valid")
    results.tasks["bordia-score"] = TaskResults(metrics={"fixed.mu": MetricEntry(0.5, 0.4, 0.6)})
    write_run_log(corpus, new_manifest(command="genderscope bordia score ptb:valid", model=None), results)
    res = _cli("export", str(corpus), "--format", "model-card", "-o", str(tmp_path / "none"))
    assert res.returncode == 2 and "no model run" in res.stderr
    res = _cli("export", str(runs[0]), str(corpus), "--format", "model-card", "-o", str(tmp_path / "one"))
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "one" / "bias.md").is_file()  # one model: no per-model subfolders
    assert "bordia-score" not in (tmp_path / "one" / "bias.md").read_text(encoding="utf-8")
