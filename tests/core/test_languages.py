"""Every task records the languages it tested (``tested_languages`` in results.json, from the task's own
declaration or its ``--languages``); the report groups the tests by language and the model card lists them."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from genderscope.cli.app import app


def test_languages_recorded_grouped_in_the_report_and_listed_in_the_model_card(tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = ["run", "esbbq-gender", "crows-pairs", "mbbq", "--languages", "nl,tr", "--model", "random"]
    res = CliRunner().invoke(app, [*args, "--limit", "24", "--out", str(out), "--no-progress"])
    assert res.exit_code == 0, res.output
    tasks = json.loads((out / "results.json").read_text())["tasks"]
    assert tasks["esbbq-gender"]["tested_languages"] == ["es"]
    assert tasks["crows-pairs"]["tested_languages"] == ["en"]
    assert tasks["mbbq"]["tested_languages"] == ["nl", "tr"]
    html = tmp_path / "report.html"
    assert CliRunner().invoke(app, ["report", str(out), "-o", str(html)]).exit_code == 0
    page = html.read_text()
    section = page[page.index('<section id="languages"') :].split("</section>", 1)[0]
    assert '<th scope="row">tr</th>' in section and "mbbq" in section and "crows-pairs" in section
    card = tmp_path / "card"
    exported = CliRunner().invoke(app, ["export", str(out), "--format", "model-card", "-o", str(card)])
    assert exported.exit_code == 0, exported.output
    text = (card / "bias.md").read_text()
    assert "### Languages tested" in text and "* **es**: esbbq-gender" in text and "* **nl**: mbbq" in text
