"""No function in src/genderscope/ is longer than 80 lines (a task scores in steps — read one answer,
aggregate, metrics and tables — and every other module works the same way: each function fits on a
screen)."""

from __future__ import annotations

from repo_paths import ROOT
import ast
from pathlib import Path

SRC = ROOT / "src" / "genderscope"
MAX_LINES = 80


def long_functions(root: Path, limit: int) -> list[str]:
    """``path:line name (N lines)`` of every function or method under ``root`` longer than ``limit``
    lines (from its ``def`` line, decorators excluded, to its last line)."""
    out = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = (node.end_lineno or node.lineno) - node.lineno + 1
                if n > limit:
                    out.append(f"{path.relative_to(root)}:{node.lineno} {node.name} ({n} lines)")
    return out


def test_no_function_over_80_lines() -> None:
    assert long_functions(SRC, MAX_LINES) == []


def test_the_measure_sees_long_functions(tmp_path: Path) -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_LINES))
    (tmp_path / "m.py").write_text(f"def short():\n    pass\n\n\ndef long():\n{body}\n")
    assert long_functions(tmp_path, MAX_LINES) == [f"m.py:5 long ({MAX_LINES + 1} lines)"]
