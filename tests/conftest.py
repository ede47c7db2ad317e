"""Shared fixtures: every test gets its own GENDERSCOPE_HOME; the data mirror is ../shared/data."""

from __future__ import annotations

import importlib.util
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


#: packages of the [hf] extra that are not installed (the core install, `pip install -e .[dev]`, has none)
HF_MISSING = [m for m in ("torch", "transformers") if importlib.util.find_spec(m) is None]


@pytest.fixture(scope="session")
def hf() -> None:
    """Skip, naming the reason, where the [hf] extra is missing: tests (``@pytest.mark.usefixtures("hf")``)
    and fixtures (an ``hf`` argument) that need torch/transformers; the core install runs all others."""
    if HF_MISSING:
        pytest.skip(f"needs the [hf] extra ({', '.join(HF_MISSING)} not installed): pip install -e '.[hf]'")


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
