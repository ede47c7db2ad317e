"""The repository root holds the project's own files only (a fuzz run once committed 25 output folders
named after option values)."""

from __future__ import annotations

from repo_paths import ROOT
import shutil
import subprocess

import pytest

TOP_LEVEL = {
    ".ci", ".gitattributes", ".gitignore", "CHANGELOG.md", "LICENSE", "Makefile", "README.md",
    "benchmarks", "devtools", "docs", "pyproject.toml", "src", "tests",
}  # fmt: skip


def test_only_project_files_are_tracked_at_the_root() -> None:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    out = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, check=True
    ).stdout.split(b"\0")
    tops = {f.split(b"/")[0].decode("utf-8", "replace") for f in out if f}
    assert tops <= TOP_LEVEL, f"unexpected tracked entries at the root: {sorted(tops - TOP_LEVEL)}"
