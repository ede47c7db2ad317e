"""Shared fixtures: every test gets its own GENDERSCOPE_HOME; the data mirror is ../shared/data."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MIRROR = (ROOT / ".." / "shared" / "data").resolve()

os.environ.setdefault("GENDERSCOPE_OFFLINE", "1")
if "GENDERSCOPE_DATA_MIRROR" not in os.environ and MIRROR.is_dir():
    os.environ["GENDERSCOPE_DATA_MIRROR"] = str(MIRROR)
# one torch thread per test process when the suite runs in parallel
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("GENDERSCOPE_TORCH_THREADS", "1")


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "gshome"
    monkeypatch.setenv("GENDERSCOPE_HOME", str(home))
    return home


@pytest.fixture
def data_registry():
    from genderscope.data.registry import DataRegistry

    if not MIRROR.is_dir() and not os.environ.get("GENDERSCOPE_DATA_MIRROR"):
        pytest.skip("dataset mirror ../shared/data not present")
    return DataRegistry()
