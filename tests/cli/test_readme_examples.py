"""The README's Python example runs as written (in a scratch folder)."""

from __future__ import annotations

from repo_paths import ROOT
import os
import re
from pathlib import Path

import pytest



def test_readme_python_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("### Python", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "README.md (Python example)", "exec"), {})
    out = capsys.readouterr().out
    assert "stereotype_rate" in out and ("no evidence" in out or "biased" in out)
    assert os.path.isfile(tmp_path / "runs" / "example" / "results.json")


def test_readme_check_commands_parse() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "genderscope check runs/audit --fail-on biased,not-enough-evidence" in readme
    assert "genderscope run all --model" in readme and "--format model-card" in readme


def _quickstart() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Quickstart", 1)[1]
    return re.search(r"```bash\n(.*?)```", section, re.S).group(1).strip().splitlines()


def test_quickstart_is_short_and_its_genderscope_commands_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At most 10 lines at the top; its run, report and check lines work as written (in a scratch folder)."""
    import shlex

    from typer.testing import CliRunner

    from genderscope.cli.app import app

    lines = _quickstart()
    assert len(lines) <= 10 and "make demo" in lines[1] and "make test" in lines[2]
    commands = [ln.split("#")[0].strip() for ln in lines if ln.startswith(".venv/bin/genderscope ")]
    assert [c.split()[1] for c in commands] == ["run", "report", "check"]
    monkeypatch.chdir(tmp_path)
    for command in commands:
        res = CliRunner().invoke(app, shlex.split(command)[1:])
        assert res.exit_code == 0, (command, res.output)
    assert (tmp_path / "runs" / "first" / "report.html").is_file()


def test_readme_links_to_glossary_anchors_that_exist() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    glossary = (ROOT / "docs" / "glossary.md").read_text(encoding="utf-8")
    anchors = re.findall(r"\(docs/glossary\.md#([\w-]+)\)", readme)
    assert {"evidence-state", "mark", "r_i", "beta"} <= set(anchors)
    missing = [a for a in anchors if f'<a id="{a}"></a>' not in glossary]
    assert not missing, missing
    assert "New in this version" not in readme and (ROOT / "CHANGELOG.md").is_file()
