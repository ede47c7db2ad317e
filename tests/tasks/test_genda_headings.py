"""GenDa Lens compat tables: the HTML report heads them with the run's label, while results.json and the
``--mode genda-lens`` terminal output keep GenDa Lens's exact strings (the model's path)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def mlm_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("torch")
    from genderscope.data.registry import DataRegistry
    from genderscope.demo_models import build_tiny_mlm, genda_lens_texts, words_of

    return build_tiny_mlm(tmp_path_factory.mktemp("mlm"), words_of(genda_lens_texts(DataRegistry())))


@pytest.mark.parametrize("task,prefix", [("dawinobias", "Simple Output for "), ("abc", "Simple Output: ")])
def test_report_heads_compat_tables_with_the_label(
    mlm_dir: Path, tmp_path: Path, task: str, prefix: str
) -> None:
    out = tmp_path / "run"
    model = f"hf-mlm:{mlm_dir.resolve()}"
    args = [
        "run",
        task,
        "--model",
        model,
        "--mode",
        "genda-lens",
        "--limit",
        "4",
        "-o",
        str(out),
        "--label",
        "tiny",
    ]
    env = {**os.environ, "COLUMNS": "400"}  # the terminal table's title in one line
    res = subprocess.run(
        [sys.executable, "-m", "genderscope.cli", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert res.returncode == 0, res.stderr
    exact = prefix + str(mlm_dir.resolve())
    assert exact in res.stdout  # terminal: GenDa Lens's own string
    tables = json.loads((out / "results.json").read_text())["tasks"][task]["compat_tables"]
    assert any(t["index_name"] == exact for t in tables.values())  # results.json: exact
    html = tmp_path / "report.html"
    rep = subprocess.run(
        [sys.executable, "-m", "genderscope.cli", "report", str(out), "-o", str(html)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert rep.returncode == 0, rep.stderr
    page = html.read_text(encoding="utf-8")
    assert prefix + "tiny" in page
    assert f">{exact}<" not in page
