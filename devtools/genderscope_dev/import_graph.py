"""The static import graph of a package (``ast`` over its files, nothing imported) and its cycles.

An edge ``a -> b`` is any ``import``/``from … import`` in module ``a`` (at module level, inside a
function or under ``if TYPE_CHECKING:``: a type-only circle is still a circle for a reader) whose
target is module ``b`` of the same
package: ``from p import x`` names ``p.x`` when that is a module, else ``p``.  Parent packages imported
implicitly (``import p.q`` runs ``p/__init__``) are not edges, as in pylint's cyclic-import.

    PYTHONPATH=devtools python -m genderscope_dev.import_graph src/genderscope   # cycles, exit 1 if any
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

Graph = dict[str, set[str]]

def module_names(root: Path, package: str) -> dict[str, Path]:
    """Dotted module name -> file, for every ``.py`` under ``root`` (the folder of ``package``)."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        name = ".".join((package, *path.relative_to(root).with_suffix("").parts)).removesuffix(".__init__")
        out[name] = path
    return out

def _import_nodes(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement of ``tree`` (``if TYPE_CHECKING:`` bodies included)."""
    found: list[ast.Import | ast.ImportFrom] = []
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        else:
            stack.extend(ast.iter_child_nodes(node))
    return found

def _targets(node: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> list[str]:
    """Dotted names an import statement may load (``from p import x``: both ``p.x`` and ``p``)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    base = node.module or ""
    if node.level:
        here = module.split(".") if is_package else module.split(".")[:-1]
        here = here[: len(here) - node.level + 1]
        base = ".".join(here + ([node.module] if node.module else []))
    return [f"{base}.{a.name}" for a in node.names] + [base]

def import_graph(root: Path, package: str) -> Graph:
    """``{module: modules of the same package it imports}`` for the package in folder ``root``."""
    modules = module_names(root, package)
    graph: Graph = {name: set() for name in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in _import_nodes(tree):
            targets = _targets(node, name, path.name == "__init__.py")
            if isinstance(node, ast.ImportFrom):
                subs = [t for t in targets[:-1] if t in modules]
                # from p import x, y: the submodules among x, y; the package p only for plain names
                hits = subs + ([targets[-1]] if len(subs) < len(targets) - 1 else [])
            else:
                hits = targets
            graph[name].update(t for t in hits if t in modules and t != name)
    return graph

def subpackage_graph(graph: Graph, package: str, skip: frozenset[tuple[str, str]] = frozenset()) -> Graph:
    """The module graph folded onto ``package``'s subpackages: ``{"core": {"data", …}, …}``, an edge
    wherever a module of one subpackage imports a module of another.  Modules directly in ``package``
    (``cli``, ``registry``) are no node; module edges in ``skip`` (``(importer, imported)``) are left out.
    """

    subs = {m.split(".")[1] for m in graph if m.startswith(package + ".") and m.count(".") > 1}

    def sub(module: str) -> str | None:
        parts = module.split(".")
        return parts[1] if parts[0] == package and len(parts) > 1 and parts[1] in subs else None

    folded: Graph = {}
    for module, targets in graph.items():
        source = sub(module)
        if source is None:
            continue
        folded.setdefault(source, set())
        for target in targets:
            dest = sub(target)
            if dest is not None and dest != source and (module, target) not in skip:
                folded[source].add(dest)
    return folded

def cycles(graph: Graph) -> list[list[str]]:
    """The strongly connected components of more than one module (each sorted; sorted by first name),
    Tarjan's algorithm, iterative."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)

def cycle_path(graph: Graph, component: list[str]) -> list[str]:
    """One closed path ``a -> … -> a`` through a component (breadth-first from its first module)."""
    members = set(component)
    start = component[0]
    parent: dict[str, str] = {}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for nxt in sorted(graph[node] & members):
            if nxt == start:
                path = [node]
                while path[-1] != start:
                    path.append(parent[path[-1]])
                return [*reversed(path), start]
            if nxt not in parent:
                parent[nxt] = node
                queue.append(nxt)
    return [start]

def main(argv: list[str] | None = None) -> int:
    """Print every import cycle of the package folder given; exit status 1 if there is one."""
    args = sys.argv[1:] if argv is None else argv
    root = Path(args[0] if args else "src/genderscope")
    graph = import_graph(root, root.name)
    found = cycles(graph)
    for component in found:
        print(" -> ".join(cycle_path(graph, component)))
    print(f"{len(graph)} modules, {sum(map(len, graph.values()))} imports, {len(found)} cycles")
    return 1 if found else 0

if __name__ == "__main__":
    raise SystemExit(main())
