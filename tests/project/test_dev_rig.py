"""The development rig (``devtools/genderscope_dev``: fake servers, engine provisioning, reference
harnesses, answer rules) stays out of the package: nothing under ``src/`` imports it, and the wheel
holds neither it nor the old ``genderscope/testing`` package; it does hold what users call
(``genderscope.demo_models``, the demo's tiny models)."""

from __future__ import annotations

from repo_paths import ROOT
import ast
import importlib.util
import re
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

#: import names of the rig (the package now, and where it lived before)
DEV_PACKAGES = ("genderscope_dev", "genderscope.testing")
#: a module or file of the rig must not appear in the wheel under any name
RIG_FILES = re.compile(
    r"(^|/)(genderscope_dev|testing)/|fake_openai|(^|/)engines\.py$|genderbench_(venv|runner|compare)\.py$"
    r"|answer_rules\.py$|ray_cluster\.py$"
)


def _names_imported(tree: ast.AST, package: str) -> set[str]:
    """Dotted names of every import in ``tree`` (function-level too; relative ones resolved against
    ``package``; ``from a import b`` gives ``a`` and ``a.b``)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            found.add(base)
            found.update(f"{base}.{a.name}" for a in node.names)
    return found


def _strings(tree: ast.AST) -> set[str]:
    """String constants (``python -m genderscope_dev.x`` in a subprocess call, importlib names)."""
    return {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}


def rig_imports(root: Path, package: str = "genderscope") -> list[str]:
    """``module: name`` for every import of the rig (or string naming it as a module) under ``root``."""
    bad = []
    for path in sorted(root.rglob("*.py")):
        module = ".".join((package, *path.relative_to(root).with_suffix("").parts)).removesuffix(".__init__")
        pkg = module if path.name == "__init__.py" else module.rpartition(".")[0]
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = _names_imported(tree, pkg) | {
            w for s in _strings(tree) for w in re.findall(r"[\w.]+", s) if "." in w or w in DEV_PACKAGES
        }
        for name in sorted(names):
            if any(name == d or name.startswith(d + ".") for d in DEV_PACKAGES):
                bad.append(f"{module}: {name}")
    return bad


def test_src_never_imports_the_dev_rig():
    assert rig_imports(ROOT / "src" / "genderscope") == []
    assert not (ROOT / "src" / "genderscope" / "testing").exists()


def test_rig_import_check_can_fail(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.py").write_text("def f():\n    from genderscope_dev.fake_openai import FakeConfig\n")
    (tmp_path / "sub" / "b.py").write_text("from ..testing import engines\n")
    (tmp_path / "c.py").write_text("CMD = ['python', '-m', 'genderscope_dev.engines', 'provision']\n")
    (tmp_path / "d.py").write_text("from genderscope.demo_models import build_tiny_mlm\nimport genderscope\n")
    assert rig_imports(tmp_path) == [
        "genderscope.a: genderscope_dev.fake_openai",
        "genderscope.a: genderscope_dev.fake_openai.FakeConfig",
        "genderscope.c: genderscope_dev.engines",
        "genderscope.sub.b: genderscope.testing",
        "genderscope.sub.b: genderscope.testing.engines",
    ]


def rig_files_in(names: list[str]) -> list[str]:
    """The entries of a wheel's listing that belong to the rig."""
    return [n for n in names if RIG_FILES.search(n)]


def test_wheel_listing_check_can_fail():
    names = [
        "genderscope/cli/app.py",
        "genderscope/demo_models.py",
        "genderscope/testing/fake_openai.py",
        "genderscope_dev/engines.py",
        "genderscope/engines.py",
        "genderscope/core/engine.py",
    ]
    assert rig_files_in(names) == names[2:5]


def test_wheel_ships_no_test_rig(tmp_path):
    """Build the wheel from a copy of the project (pip, no build isolation, no dependencies) and list it:
    no rig module inside; the demo's models, the CLI and package data are."""
    if importlib.util.find_spec("setuptools") is None:  # e.g. the core-install venv (Python >= 3.12)
        pytest.skip("setuptools is not installed here: the wheel cannot be built without build isolation")
    import setuptools

    if int(setuptools.__version__.split(".")[0]) < 77:  # pyproject's [build-system] requires >= 77
        pytest.skip(f"setuptools {setuptools.__version__} here; the build needs >= 77 (PEP 639 licence)")
    src = tmp_path / "project"
    src.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(ROOT / "src", src / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
         str(tmp_path / "wheel"), str(src)],
        capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    (wheel,) = (tmp_path / "wheel").glob("genderscope-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert rig_files_in(names) == []
    assert not [n for n in names if n.startswith(("devtools/", "tests/", "benchmarks/"))]
    for needed in ("genderscope/demo_models.py", "genderscope/cli/app.py", "genderscope/data/datasets.tsv"):
        assert needed in names
    assert time.perf_counter() - start < 60
