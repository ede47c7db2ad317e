"""The README's Python example runs as written (in a scratch folder)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


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
