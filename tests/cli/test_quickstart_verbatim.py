"""The README's Quickstart block, run verbatim as a newcomer would after `make demo`: in a folder laid out
like a fresh clone (its `.venv/bin/genderscope` runs this checkout), in a plain shell (no
$GENDERSCOPE_DATA_MIRROR), offline, with a fresh $GENDERSCOPE_HOME.  Its `git clone` and `make` lines are the
install and are not run here (`make demo` is minutes long; its mirror setting is tested in
test_first_hour_mirror.py); every other line runs through bash exactly as written and exits 0."""

from __future__ import annotations

from repo_paths import ROOT
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

INSTALL = ("git clone ", "make ")


def quickstart_lines() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```bash\n(.*?)```", readme.split("## Quickstart", 1)[1], re.S)
    assert block is not None
    return [ln for ln in block.group(1).strip().splitlines() if ln.strip()]


@pytest.mark.skipif(
    not (ROOT.parent / "shared" / "data" / "MANIFEST.tsv").is_file(),
    reason="no ../shared/data beside this checkout",
)
def test_quickstart_runs_verbatim_offline_in_a_fresh_home(tmp_path: Path) -> None:
    lines = quickstart_lines()
    commands = [ln for ln in lines if not ln.startswith(INSTALL)]
    assert [ln.split()[1] for ln in commands] == ["run", "report", "check"], lines
    clone = tmp_path / "genderscope"
    (clone / ".venv" / "bin").mkdir(parents=True)
    shim = clone / ".venv" / "bin" / "genderscope"
    shim.write_text(f'#!/bin/sh\nexec {sys.executable} -m genderscope.cli "$@"\n')
    shim.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GENDERSCOPE_")}
    env.update(GENDERSCOPE_HOME=str(tmp_path / "fresh-home"), GENDERSCOPE_OFFLINE="1", COLUMNS="80")
    env["PYTHONPATH"] = str(ROOT / "src")
    said = []
    for line in commands:
        res = subprocess.run(
            ["bash", "-c", line], cwd=clone, env=env, capture_output=True, text=True, timeout=600
        )
        assert res.returncode == 0, (line, res.stdout[-1500:], res.stderr[-1500:])
        said.append(res.stderr)
    assert "found beside this checkout" in said[0]  # the first run finds the mirror and says so
    assert not any("found beside" in s for s in said[1:])  # once
    assert (clone / "runs" / "first" / "report.html").is_file()
