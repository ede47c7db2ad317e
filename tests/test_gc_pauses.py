"""The cyclic collector around model loading and process exit: what ``load`` leaves alive is frozen (out of
later full passes) with the collector running again, and ``main`` freezes everything at exit."""

from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_hf_load_freezes_what_it_loaded_and_resumes_the_collector(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from genderscope import registry
    from genderscope.core.options import build_options
    from genderscope.demo_models import build_tiny_causal

    path = build_tiny_causal(tmp_path / "causal", ["he", "she", "the", "nurse", "."], seed=3)
    cls = registry.backend_class(f"hf-causal:{path}")
    backend = cls(str(path), build_options(cls.Options, {}, "hf-causal"))
    gc.unfreeze()
    try:
        assert gc.get_freeze_count() == 0
        backend.load()
        assert gc.isenabled()
        assert gc.get_freeze_count() > 0  # torch's, transformers' and the model's objects
    finally:
        gc.unfreeze()
        backend.close()


def test_main_freezes_every_object_at_exit() -> None:
    probe = (
        "import atexit, gc, sys\n"
        "atexit.register(lambda: print('frozen at exit:', gc.get_freeze_count() > 0))\n"
        "from genderscope.cli import main\n"
        "def once():\n"
        "    sys.argv = ['genderscope', '--help']\n"
        "    try:\n"
        "        main()\n"
        "    except SystemExit:\n"
        "        pass\n"
        "once(); once()\n"
        "gc.unfreeze()\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"},
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-800:]
    assert proc.stdout.rstrip().endswith("frozen at exit: True")
