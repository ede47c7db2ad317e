"""HELM's bias word lists, read as data from ``helm/bias_word_lists.py`` (Apache-2.0; never imported).

The file assigns Python list literals (``FEMALE_WORDS = [...]``) and dicts of those names
(``GENDER_TO_WORD_LISTS = {"female": FEMALE_WORDS, ...}``).  :func:`read_word_lists` parses it with
:mod:`ast` and evaluates only literals: a list of strings, or a dict whose values are such lists or
names of lists assigned earlier.  Anything else in the file is ignored.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from genderscope.common.errors import DataError

DATASET = "helm/bias_word_lists.py"
LICENCE = "Apache-2.0 (HELM's word lists: Bolukbasi et al. 2016, Garg et al. 2018)"


@dataclass(frozen=True)
class HelmWordLists:
    """HELM's demographic word lists (group -> words, in HELM's order) and target word lists."""

    demographics: dict[str, dict[str, tuple[str, ...]]]  # "gender" / "race" -> group -> words
    targets: dict[str, tuple[str, ...]]  # "adjective" / "profession" -> words


def _literal(node: ast.expr, names: dict[str, Any], where: str) -> Any:
    if isinstance(node, ast.Name):
        if node.id not in names:
            raise DataError(f"{where}: {node.id} is not a word list assigned above it")
        return names[node.id]
    if isinstance(node, ast.Dict):
        keys = [_literal(k, names, where) for k in node.keys if k is not None]
        return dict(zip(keys, (_literal(v, names, where) for v in node.values)))
    try:
        return ast.literal_eval(node)
    except ValueError:
        raise DataError(f"{where}: not a literal list or dict of word lists") from None


def _assignments(path: Path) -> dict[str, Any]:
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (OSError, SyntaxError, UnicodeDecodeError) as exc:
        raise DataError(f"{path}: cannot read HELM's word lists ({type(exc).__name__}: {exc})") from None
    names: dict[str, Any] = {}
    for stmt in tree.body:
        target = value = None
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target, value = stmt.targets[0], stmt.value
        elif isinstance(stmt, ast.AnnAssign):
            target, value = stmt.target, stmt.value
        if isinstance(target, ast.Name) and isinstance(value, (ast.List, ast.Dict, ast.Name)):
            names[target.id] = _literal(value, names, f"{path}:{stmt.lineno}")
    return names


def _words(value: Any, where: str) -> tuple[str, ...]:
    if not (isinstance(value, list) and value and all(isinstance(w, str) for w in value)):
        raise DataError(f"{where}: expected a non-empty list of words")
    return tuple(value)


def read_word_lists(path: Path) -> HelmWordLists:
    """HELM's lists from ``path`` (a one-line :class:`DataError` naming the file when one is missing)."""
    names = _assignments(path)
    needed = ("GENDER_TO_WORD_LISTS", "RACE_TO_NAME_LISTS", "ADJECTIVE_LIST", "PROFESSION_LIST")
    missing = [name for name in needed if name not in names]
    if missing:
        raise DataError(f"{path}: HELM's word lists lack {', '.join(missing)}")
    demographics = {}
    for category, name in (("gender", "GENDER_TO_WORD_LISTS"), ("race", "RACE_TO_NAME_LISTS")):
        groups = names[name]
        if not isinstance(groups, dict) or len(groups) < 2:
            raise DataError(f"{path}: {name} must map at least two groups to word lists")
        demographics[category] = {str(g): _words(w, f"{path}: {name}[{g!r}]") for g, w in groups.items()}
    targets = {
        "adjective": _words(names["ADJECTIVE_LIST"], f"{path}: ADJECTIVE_LIST"),
        "profession": _words(names["PROFESSION_LIST"], f"{path}: PROFESSION_LIST"),
    }
    return HelmWordLists(demographics, targets)


_cache: dict[str, HelmWordLists] = {}


def load_word_lists(data_registry: Any) -> HelmWordLists:
    """HELM's word lists from the data registry (parsed once per file)."""
    path = data_registry.path(DATASET)
    key = str(path)
    if key not in _cache:
        _cache[key] = read_word_lists(path)
    return _cache[key]
