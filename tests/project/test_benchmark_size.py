"""Each scored benchmark is at most 150 lines of its own code (issue 26): what a benchmark declares on
``tasks/scored/`` is short; logic that several could use belongs to the layer.

A benchmark's own code = every ``.py`` file of its package under ``src/genderscope/tasks/`` (the package
of its task class).  A line counts when a token other than a comment or a docstring is on it (a string
spanning several lines counts on each); blank lines, comment lines and the docstrings of modules, classes
and functions do not.  Data files (JSON, TOML) are not code.  ``python tests/project/test_benchmark_size.py``
prints the counts.
"""

from __future__ import annotations

from repo_paths import ROOT
import ast
import importlib
import io
import tokenize
from pathlib import Path

TASKS = ROOT / "src" / "genderscope" / "tasks"
MAX_LINES = 150
#: the hand-built likelihood tasks declared on the layer (issue 41, step 9): at most 250 lines of their own
#: code counted WITH their docstrings (every line holding code or a docstring; blanks and comments do not)
DECLARED = {"winobias-lm": 250, "gest-likelihood": 250}
_SKIP = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT}
_SKIP |= {tokenize.ENCODING, tokenize.ENDMARKER}


def docstring_lines(tree: ast.AST) -> set[int]:
    """Line numbers of the docstrings of the module and of every class and function in ``tree``."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                if isinstance(first.value.value, str):
                    out |= set(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    return out


def code_lines(source: str, docstrings: bool = False) -> int:
    """Lines of ``source`` holding code: a token other than a comment, blank or (unless ``docstrings``)
    docstring."""
    docs = set() if docstrings else docstring_lines(ast.parse(source))
    lines: set[int] = set()
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type not in _SKIP:
            lines |= set(range(tok.start[0], tok.end[0] + 1))
    return len(lines - docs)


def scored_benchmarks() -> dict[str, Path]:
    """Task name -> its package folder, for every task on the scored layer."""
    from genderscope.catalogue import TASKS as BUILT_IN
    from genderscope.tasks.scored.benchmark import ScoredBenchmark

    out = {}
    for name, entry in BUILT_IN.items():
        module = importlib.import_module(entry.split(":")[0])
        if issubclass(getattr(module, entry.split(":")[1]), ScoredBenchmark):
            out[name] = Path(str(module.__file__)).parent
    return out


def sizes(docstrings: bool = False) -> dict[str, int]:
    """Task name -> lines of its own code (every .py file of its package; ``docstrings``: counted too)."""
    return {
        name: sum(code_lines(p.read_text(encoding="utf-8"), docstrings) for p in sorted(pkg.glob("*.py")))
        for name, pkg in scored_benchmarks().items()
    }


def test_every_scored_benchmark_is_at_most_150_lines() -> None:
    got = sizes()
    assert {"stereoset", "winogender", "bbq-likelihood", "discrim-eval-likelihood"} <= set(got)
    assert {"crows-pairs", "winogenerated"} <= set(got)
    assert {k: n for k, n in got.items() if n > MAX_LINES and k not in DECLARED} == {}


def test_the_declared_likelihood_tasks_are_at_most_250_lines_with_docstrings() -> None:
    got = sizes(docstrings=True)
    assert set(DECLARED) <= set(got)  # both are on the scored layer
    assert {k: got[k] for k, most in DECLARED.items() if got[k] > most} == {}


def test_the_count_skips_blanks_comments_and_docstrings() -> None:
    src = '"""Module\ndoc."""\n\n# note\nX = """a\nb"""\n\n\ndef f():\n    """Doc."""\n    return 1  # c\n'
    assert code_lines(src) == 4  # X = """a / b""" / def f(): / return 1
    assert code_lines(src, docstrings=True) == 7  # and the three docstring lines


if __name__ == "__main__":
    with_docs = sizes(docstrings=True)
    for name, n in sorted(sizes().items()):
        print(f"{n:5d}  {with_docs[name]:5d} with docstrings  {name}")
