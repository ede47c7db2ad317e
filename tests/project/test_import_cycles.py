"""No import cycles among genderscope's modules (nor among the dev rig's): a static scan (ast over the
files; imports inside functions and under ``if TYPE_CHECKING:`` count), and unit tests of the cycle
detector on synthetic graphs and packages, so that the scan can fail."""

from __future__ import annotations

from repo_paths import ROOT
from functools import lru_cache
from pathlib import Path

from genderscope_dev.import_graph import cycle_path, cycles, import_graph, subpackage_graph



@lru_cache(maxsize=None)
def _graph(root: Path) -> dict[str, set[str]]:
    """The import graph of the package in ``root`` (parsed once per test session)."""
    return import_graph(root, root.name)


def _described(root: Path) -> list[str]:
    graph = _graph(root)
    return [" -> ".join(cycle_path(graph, c)) for c in cycles(graph)]


def test_no_import_cycles_in_genderscope():
    assert _described(ROOT / "src" / "genderscope") == []


def test_no_import_cycles_in_the_dev_rig():
    assert _described(ROOT / "devtools" / "genderscope_dev") == []


#: module imports that still close a cycle between subpackages, each with why it is left; the test
#: below fails when one is gone (drop it here) or when any other import closes a subpackage cycle
KNOWN_SUBPACKAGE_EDGES: dict[tuple[str, str], str] = {}


def test_no_import_cycles_between_subpackages():
    """Folded onto genderscope's subpackages (core, data, tasks, ...), the import graph has no cycle
    but those that the known edges close; ``data`` imports no ``core`` (``core`` imports ``data``)."""
    graph = _graph(ROOT / "src" / "genderscope")
    folded = subpackage_graph(graph, "genderscope", frozenset(KNOWN_SUBPACKAGE_EDGES))
    assert [" -> ".join(cycle_path(folded, c)) for c in cycles(folded)] == []
    assert "core" not in folded["data"] and "data" in folded["core"]
    assert "common" not in folded or folded["common"] == set()  # the leaf helpers import no subpackage
    for importer, imported in KNOWN_SUBPACKAGE_EDGES:
        assert imported in graph[importer], f"{importer} no longer imports {imported}: drop the entry"


def test_subpackage_graph_folds_and_skips():
    graph = {
        "p.a.x": {"p.b.y", "p.top"},
        "p.a": set(),
        "p.b.y": {"p.a.x", "p.b.z"},
        "p.b.z": set(),
        "p.top": {"p.a.x"},
    }
    assert subpackage_graph(graph, "p") == {"a": {"b"}, "b": {"a"}}
    assert cycles(subpackage_graph(graph, "p")) == [["a", "b"]]
    assert subpackage_graph(graph, "p", frozenset({("p.b.y", "p.a.x")})) == {"a": {"b"}, "b": set()}


def test_scan_sees_the_package():
    """The scan finds the modules and the edges it should (so an empty cycle list means something)."""
    graph = _graph(ROOT / "src" / "genderscope")
    assert len(graph) > 200
    assert "genderscope.cli.options" in graph["genderscope.cli.batch"]  # a lazy import inside a function
    assert "genderscope.data.pins" in graph["genderscope.data.registry"]
    assert "genderscope.core.metrics" in graph["genderscope.core.evidence"]  # under TYPE_CHECKING


def test_cycles_on_a_synthetic_graph():
    graph = {
        "a": {"b"},
        "b": {"c"},
        "c": {"a", "d"},  # a -> b -> c -> a
        "d": {"e"},
        "e": {"d"},  # d <-> e
        "f": {"a", "f"},  # a self-import is no cycle between modules; f is outside both
        "g": set(),
    }
    assert cycles(graph) == [["a", "b", "c"], ["d", "e"]]
    assert cycle_path(graph, ["a", "b", "c"]) == ["a", "b", "c", "a"]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_cycles_of_a_long_chain_need_no_recursion():
    n = 5000
    graph = {f"m{i}": {f"m{i + 1}"} for i in range(n)}
    graph[f"m{n}"] = {"m0"}
    assert [len(c) for c in cycles(graph)] == [n + 1]


def test_scan_finds_a_cycle_in_a_synthetic_package(tmp_path):
    """Absolute, relative, function-level and TYPE_CHECKING imports make edges."""
    pkg = tmp_path / "toy"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from toy.sub import b\n")
    (pkg / "sub" / "b.py").write_text("def f():\n    from ..c import g\n")
    (pkg / "c.py").write_text("import toy.a\n")
    (pkg / "d.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from toy.e import x\n"
    )
    (pkg / "e.py").write_text("from . import d\n")
    graph = import_graph(pkg, "toy")
    assert graph["toy.a"] == {"toy.sub.b"} and graph["toy.sub.b"] == {"toy.c"}
    assert graph["toy.e"] == {"toy.d"} and graph["toy.d"] == {"toy.e"}
    assert cycles(graph) == [["toy.a", "toy.c", "toy.sub.b"], ["toy.d", "toy.e"]]
    assert _described(pkg) == ["toy.a -> toy.sub.b -> toy.c -> toy.a", "toy.d -> toy.e -> toy.d"]
