"""Pieces shared by the GenDa Lens tasks (``dawinobias``, ``abc``): GenDa Lens's rounding rules, its output
frames, the ``info`` round's tokenizer description, even subsets for ``--limit``."""

from __future__ import annotations

from typing import Any

import numpy as np

from genderscope.common.errors import UsageError
from genderscope.core.primitives import Tokens
from genderscope.core.rounds import Answers

#: the round that asks ``tokenize("")`` for the tokenizer's special tokens
INFO = "info"


def r2np(x: float) -> float:
    """numpy/pandas ``.round(2)``: x·100 in float64, round half to even, divide by 100."""
    return float(np.rint(np.float64(x) * 100.0) / 100.0)


def r2py(x: float) -> float:
    """Python's ``round(x, 2)`` (exact binary value, ties to even)."""
    return round(x, 2)


def genda_frame(test: str, index_name: str, rows: list[list[Any]], width: int = 4) -> dict[str, Any]:
    """One of GenDa Lens's output DataFrames as results.json keeps it: ``width`` column labels (blank but
    the second, the test's name), the index name and the rows [label, cells...] (``abc``'s too)."""
    return {"columns": ["", test] + [""] * (width - 2), "index_name": index_name, "rows": rows}


def info_tokens(answers: Answers, task: str = "dawinobias") -> Tokens:
    """The answer of the ``info`` round's ``tokenize("")`` (UsageError naming ``task`` when the model gave
    none); ``abc``'s rounds read theirs with it too."""
    info = answers.first(INFO)
    if info is None or not info.ok or not isinstance(info.response, dict):
        why = info.error if info is not None else None
        raise UsageError(f"{task}: the model did not describe its tokenizer ({why or 'no answer'})")
    return Tokens.of(info.response)


def spread(n: int, limit: int | None) -> list[int]:
    """``limit`` indices spread evenly over range(n) (all when no limit)."""
    if limit is None or limit >= n:
        return list(range(n))
    if limit <= 0:
        return []
    return sorted(set(np.linspace(0, n - 1, limit).round().astype(int).tolist()))


GENDA_LENS_NEEDS_MLM = (
    "--mode genda-lens needs a masked LM, as GenDa Lens does; use --mode default for causal LMs"
)
