"""Import discipline: `import genderscope`, `genderscope tasks [--options]` and
`genderscope run gest --model random` never import torch, transformers or spaCy (registry entries are
lazy strings; the HF backends import torch inside functions only)."""

from __future__ import annotations

from repo_paths import ROOT
import json
import subprocess
import sys

import pytest

HEAVY = ("torch", "transformers", "spacy", "tokenizers", "accelerate")

PROBE = """
import json, sys
argv, heavy = json.loads(sys.argv[1]), json.loads(sys.argv[2])
if argv:
    from genderscope.cli.app import main
    sys.argv = ["genderscope"] + argv
    try:
        main()
    except SystemExit as exc:
        assert not exc.code, exc.code
else:
    import genderscope
    genderscope.__version__
print("HEAVY=" + json.dumps(sorted(m for m in heavy if m in sys.modules)))
"""


def heavy_modules_after(argv: list[str], tmp_path) -> list[str]:
    env_home = str(tmp_path / "home")
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(argv), json.dumps(HEAVY)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**__import__("os").environ, "GENDERSCOPE_HOME": env_home},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("HEAVY="))
    return json.loads(line[len("HEAVY=") :])


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["tasks"],
        ["tasks", "--options"],
        ["run", "gest", "--model", "random", "--limit", "5", "--out", "run-out"],
    ],
    ids=["import", "tasks", "tasks-options", "run-gest-random"],
)
def test_no_heavy_imports(argv, tmp_path):
    assert heavy_modules_after(argv, tmp_path) == []


def test_probe_can_fail(tmp_path):
    """The probe does see heavy modules when they are imported (so the test above can fail)."""
    pytest.importorskip("spacy")
    code = PROBE.replace("import genderscope\n", "import genderscope, spacy\n")
    proc = subprocess.run(
        [sys.executable, "-c", code, json.dumps([]), json.dumps(HEAVY)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert '"spacy"' in proc.stdout


CLI_MODULES = {"genderscope.cli"}


def _imported_modules(path, package: str) -> set[str]:
    """Every module an ``import``/``from … import`` statement in ``path`` names (relative ones resolved;
    ``from a import b`` counts as both ``a`` and ``a.b``)."""
    import ast

    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            found.add(base)
            found.update(f"{base}.{a.name}" for a in node.names)
    return found


#: modules above the libraries: the CLI, the demo and the command layer may import anything
APPLICATION = ("genderscope.cli", "genderscope.demo", "genderscope.commands")

#: (importing package, forbidden prefixes, why)
RULES = (
    (
        "genderscope.bordia",
        (
            "genderscope.tasks",
            "genderscope.backends",
            "genderscope.core.engine",
            "genderscope.cli",
            "genderscope.commands",
        ),
        "bordia is a library: tasks and backends import it, it drives none of them",
    ),
    (
        "genderscope",
        ("genderscope.commands",) + tuple(sorted(CLI_MODULES)),
        "library code never imports the command layer or the CLI",
    ),
    (
        "genderscope",
        ("genderscope.catalogue",),
        "names resolve through genderscope.core.lookup (built-ins + plugins), never the built-in tables",
    ),
)


def _is_under(module: str, prefix: str) -> bool:
    return (
        module == prefix
        or module.startswith(prefix + ".")
        or (prefix.endswith("_") and module.startswith(prefix))
    )


def import_violations(root, package_name: str = "genderscope") -> list[str]:
    """``module imports X (why)`` for every import (module level or inside a function) that breaks
    :data:`RULES`; modules of :data:`APPLICATION` are exempt from the second rule only."""
    offenders = []
    for path in sorted(root.rglob("*.py")):
        module = ".".join((package_name,) + path.relative_to(root).with_suffix("").parts)
        module = module.removesuffix(".__init__")
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        imported = _imported_modules(path, package)
        for owner, forbidden, why in RULES:
            if not _is_under(module, owner):
                continue
            if owner == package_name and any(_is_under(module, app) for app in APPLICATION):
                continue
            bad = sorted(m for m in imported if any(_is_under(m, f) for f in forbidden))
            if bad:
                offenders.append(f"{module} imports {', '.join(bad)} ({why})")
    return offenders


def test_library_never_imports_cli_or_commands():
    """bordia imports no task, backend, engine, CLI or command module; no library module imports the
    command layer or the CLI (only the CLI, the demo and the commands themselves may)."""
    from pathlib import Path

    import genderscope

    assert import_violations(Path(genderscope.__file__).parent) == []


def test_import_rules_can_fail(tmp_path):
    """The scan flags a bordia module that drives the engine or a task, and a task that imports a
    command, whether the import is at module level or inside a function."""
    (tmp_path / "bordia").mkdir()
    (tmp_path / "tasks").mkdir()
    (tmp_path / "bordia" / "sweep.py").write_text(
        "def f():\n    from genderscope.core.engine import run_tasks\n    from ..tasks.x import task\n"
    )
    (tmp_path / "tasks" / "x.py").write_text("from genderscope.commands.bordia import run_sweep\n")
    (tmp_path / "demo.py").write_text("from genderscope.commands.bordia import run_sweep\n")
    found = import_violations(tmp_path)
    assert len(found) == 2, found
    assert found[0].startswith("genderscope.bordia.sweep imports genderscope.core.engine")
    assert "genderscope.tasks.x" in found[0] and found[1].startswith("genderscope.tasks.x imports")


def test_registry_import_check_can_fail(tmp_path):
    """A core module reading the built-in tables directly is flagged (lookups go through core.lookup)."""
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "x.py").write_text("def f():\n    from genderscope import catalogue as registry\n")
    found = import_violations(tmp_path)
    assert found and found[0].startswith("genderscope.core.x imports genderscope.catalogue"), found


def test_cli_import_check_can_fail(tmp_path):
    """The scan above sees absolute and relative imports of a CLI module."""
    (tmp_path / "m.py").write_text("from .cli import bordia_app\nfrom genderscope import cli\n")
    assert {"genderscope.commands.bordia.cli", "genderscope.cli"} <= _imported_modules(
        tmp_path / "m.py", "genderscope.commands.bordia"
    )


#: packages under tasks/ that are shared kits, not tasks (a task may import them)
TASK_KITS = {"chatprobe", "scored", "generation"}


def _task_imports(root=None) -> list[tuple[str, str]]:
    """(task package, task package it imports) for every import of one task package by another."""
    import ast

    root = root or ROOT / "src" / "genderscope" / "tasks"
    tasks = {p.name for p in root.iterdir() if p.is_dir() and (p / "__init__.py").exists()} - TASK_KITS
    found = []
    for pkg in sorted(tasks):
        for path in (root / pkg).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                names = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                for name in names:
                    parts = name.split(".")
                    if parts[:2] == ["genderscope", "tasks"] and len(parts) > 2 and parts[2] in tasks:
                        if parts[2] != pkg:
                            found.append((pkg, parts[2]))
    return found


def test_no_task_imports_another_task():
    """Shared code lives in kits (tasks/chatprobe, tasks/scored, modules directly under tasks/) or in
    genderscope/datasets, never in another task's package."""
    assert _task_imports() == []


def test_task_import_rule_can_fail(tmp_path):
    for pkg, body in (("a", "from genderscope.tasks.b.x import y\n"), ("b", ""), ("scored", "")):
        (tmp_path / pkg).mkdir()
        (tmp_path / pkg / "__init__.py").write_text("")
        (tmp_path / pkg / "m.py").write_text(body)
    assert _task_imports(tmp_path) == [("a", "b")]


#: the documented import surfaces that gather names defined elsewhere (the Python API, the authoring
#: surface, and the Bordia & Bowman API that shared/specs/bordia_bowman.md §13 names)
PUBLIC_SURFACES = {
    "genderscope",
    "genderscope.authoring",
    "genderscope.bordia",
    "genderscope.commands.bordia",
    "genderscope.report",
}


def reexported_names(path, module: str) -> list[str]:
    """Names ``module`` imports from another genderscope module and never uses itself (so it only hands
    them on: a second address for a name)."""
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"))
    imported: dict[str, str] = {}
    for node in tree.body:
        own = isinstance(node, ast.ImportFrom) and (node.module or "").startswith("genderscope")
        if own and not node.level:
            for a in node.names:
                imported[a.asname or a.name] = f"{node.module}.{a.name}"
    used: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            used.add(node.id)
        elif isinstance(node, ast.Attribute):
            base = node
            while isinstance(base, ast.Attribute):
                base = base.value
            if isinstance(base, ast.Name):
                used.add(base.id)
    # names listed in __all__ are strings, not uses
    return sorted(f"{module}: {name} ({origin})" for name, origin in imported.items() if name not in used)


def _reexports(root) -> list[str]:
    found = []
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        module = ".".join(("genderscope", *parts)).removesuffix(".__init__")
        if module not in PUBLIC_SURFACES:
            found.extend(reexported_names(path, module))
    return found


def test_one_address_per_name():
    """No module hands on a name it imports from another genderscope module (a re-export shim): every
    name is imported from where it is defined, except through the documented public surfaces."""
    from pathlib import Path

    import genderscope

    assert _reexports(Path(genderscope.__file__).parent) == []


def test_reexport_check_can_fail(tmp_path):
    errors = "from genderscope.common.errors import DataError\n"
    (tmp_path / "shim.py").write_text(errors + "__all__ = ['DataError']\n")
    (tmp_path / "user.py").write_text(errors + "raise DataError('x')\n")
    assert _reexports(tmp_path) == ["genderscope.shim: DataError (genderscope.common.errors.DataError)"]


def missing_imports(src_root, roots) -> list[str]:
    """``file:line: module has no name`` for every ``from genderscope.X import name`` (in ``roots``) whose
    module neither defines nor imports ``name`` (a name that moved without its importers following)."""
    import ast

    modules = {}
    for path in sorted(src_root.rglob("*.py")):
        name = ".".join(path.relative_to(src_root.parent).with_suffix("").parts).removesuffix(".__init__")
        modules[name] = path
    names: dict[str, set[str]] = {}
    for name, path in modules.items():
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                found.add(node.name)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                found.update((a.asname or a.name).split(".")[0] for a in node.names)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                found.add(node.id)
        names[name] = found
    bad = []
    for root in roots:
        for path in sorted(root.rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if not (isinstance(node, ast.ImportFrom) and node.module in names and not node.level):
                    continue
                for a in node.names:
                    known = f"{node.module}.{a.name}" in modules or "__getattr__" in names[node.module]
                    if a.name != "*" and not known and a.name not in names[node.module]:
                        bad.append(f"{path.name}:{node.lineno}: {node.module} has no {a.name}")
    return bad


def test_every_imported_name_exists_where_it_is_imported_from():
    """Imports run lazily (inside functions) are checked too, without running them."""

    root = ROOT
    src = root / "src" / "genderscope"
    assert missing_imports(src, [src, root / "tests", root / "benchmarks", root / "devtools"]) == []


def test_missing_import_check_can_fail(tmp_path):
    pkg = tmp_path / "genderscope"
    pkg.mkdir()
    (pkg / "a.py").write_text("X = 1\n")
    (pkg / "b.py").write_text("def f():\n    from genderscope.a import Y\n")
    assert missing_imports(pkg, [pkg]) == ["b.py:2: genderscope.a has no Y"]
