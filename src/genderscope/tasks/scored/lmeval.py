"""lm-evaluation-harness's group-of-subtasks form on the scored layer: a benchmark whose lm-eval tasks are
subsets of one item list (e.g. ``winogender_all``, ``_male``, ``_gotcha``) declares each subtask as a
predicate on the item fields; every item carries a flag ``in_<subtask>`` per subtask, ``--limit N`` keeps
the first N documents of each subtask (what ``lm_eval --tasks GROUP --limit N`` runs), and the results are
lm-eval's ``acc,none`` / ``acc_stderr,none`` per subtask."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Mapping

import numpy as np

from genderscope.tasks.scored.items import ScoredItem, Scores
from genderscope.tasks.scored.weights import wshare

Subtasks = Mapping[str, Callable[[Mapping[str, Any]], bool]]


def subtask_flags(fields: Mapping[str, Any], subtasks: Subtasks) -> dict[str, bool]:
    """``in_<subtask>`` -> whether an item with these ``fields`` is a document of that subtask."""
    return {f"in_{name}": keep(fields) for name, keep in subtasks.items()}


def limit_per_subtask(items: list[ScoredItem], names: list[str], limit: int | None) -> list[ScoredItem]:
    """The items of the first ``limit`` documents of each subtask in ``names``, in file order, each flagged
    with the subtasks that hold it (``in_<subtask>``)."""
    seen = {name: 0 for name in names}
    out = []
    for it in items:
        flags = {}
        for name in names:
            member = bool(it.fields[f"in_{name}"])
            flags[f"in_{name}"] = member and (limit is None or seen[name] < limit)
            seen[name] += member
        if any(flags.values()):
            out.append(replace(it, fields={**it.fields, **flags}))
    return out


def subtask_accuracy(
    C: np.ndarray, correct: np.ndarray, s: Scores, names: list[str]
) -> dict[str, np.ndarray]:
    """``<subtask>/acc``: the share of each subtask's documents answered right, one value per row of C."""
    return {f"{name}/acc": wshare(C, correct, s.field(f"in_{name}")) for name in names}


def acc_results(correct: np.ndarray, s: Scores, names: list[str]) -> dict[str, dict[str, Any]]:
    """lm-eval's results block per subtask: ``acc,none`` and ``acc_stderr,none`` (sample std / √n), and n."""
    out = {}
    for name in names:
        x = correct[s.field(f"in_{name}").astype(bool)].astype(np.float64)
        se = float(np.std(x, ddof=1) / np.sqrt(x.size)) if x.size > 1 else None
        out[name] = {"acc,none": float(x.mean()) if x.size else None, "acc_stderr,none": se, "n": int(x.size)}
    return out
