"""Paired changes between two runs of the same tasks (e.g. a model before and after debiasing).

For a task declared on the scored layer (:class:`genderscope.tasks.scored.ScoredBenchmark`: its metrics are
functions of per-item scores and a weight matrix), both runs' recorded answers are read back, the items
both runs scored are matched by id, and each metric's change after − before is resampled with the SAME
item (or cluster) draws for both runs: a paired bootstrap, whose interval is narrower than two
independent ones when the runs' item scores are correlated.  The interval follows the task's small-sample
rule (:func:`genderscope.stats.rules.rule_intervals`: none below ``min_units`` resampling units,
the jackknife-t below ``few_units`` and for ``jackknife_metrics``).  The state says whether the 95 %
interval of the change excludes 0 (no interval: no evidence of change, the reason in ``note``).  Tasks on
other layers are listed without a paired interval, with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from genderscope.core import lookup
from genderscope.core.errors import UsageError

CHANGED_UP, CHANGED_DOWN, UNCHANGED, NO_PAIRING = "higher", "lower", "no evidence of change", "not paired"


@dataclass(frozen=True)
class PairedChange:
    """One metric of one task: values before and after, the change [95 % CI] over the common items."""

    task: str
    metric: str
    before: float | None
    after: float | None
    change: float | None
    ci_low: float | None
    ci_high: float | None
    n_items: int
    state: str
    note: str = ""


def _scores(run: Path, task: str, manifest: Any) -> tuple[Any, Any]:
    """(task object, its Scores) rebuilt from a run's recorded answers through the replay path that
    ``genderscope reparse`` takes (:func:`genderscope.core.reparse.replay_task`: the run's options,
    trials, limit and seed; stale answers refused, unanswered attempts skipped)."""
    from genderscope.core.reparse import replay_task

    done = replay_task(run, manifest, task, dict(manifest.tasks[task].options)).runs[0]
    return done.task, done.task.scores(done.results)[0]


def is_paired_task(cls: type) -> bool:
    """Whether a task class can be paired: it declares the scored layer's interface (``scores`` of its
    answers, ``compute(scores, C)`` over a weight matrix, ``clusters`` and ``interval_rule``), as every
    :class:`~genderscope.tasks.scored.ScoredBenchmark` does; core never imports the task layer."""
    return all(callable(getattr(cls, m, None)) for m in ("scores", "compute", "clusters", "interval_rule"))


def paired_task(
    before: Path, after: Path, task: str, n_boot: int = 1000, seed: int = 0, rule: Any = None
) -> list[PairedChange]:
    """Paired changes of every metric of ``task`` (a scored-layer task) between two runs; ``rule``: an
    :class:`~genderscope.stats.rules.IntervalRule` instead of the task's own (benchmarks)."""
    from genderscope.core.reparse import read_manifest
    from genderscope.stats.rules import rule_intervals

    if not is_paired_task(lookup.task_class(task)):
        return [PairedChange(task, "*", None, None, None, None, None, 0, NO_PAIRING,
                             "paired intervals need a task declared on the scored layer")]  # fmt: skip
    ta, sa = _scores(before, task, read_manifest(before))
    _tb, sb = _scores(after, task, read_manifest(after))
    ids_b = {it.item_id: j for j, it in enumerate(sb.items)}
    ia = np.array([i for i, it in enumerate(sa.items) if it.item_id in ids_b], dtype=np.int64)
    ib = np.array([ids_b[sa.items[i].item_id] for i in ia], dtype=np.int64)
    if ia.size == 0:
        raise UsageError(f"{task}: the two runs share no scored item")
    sa, sb = sa.subset(ia), sb.subset(ib)

    def change(C: np.ndarray) -> dict[str, np.ndarray]:
        a, b = ta.compute(sa, C), ta.compute(sb, C)
        return {k: b[k] - a[k] for k in a}

    names, point, cols = rule_intervals(
        change, sa.n, ta.clusters(sa), n_boot, seed, rule or ta.interval_rule()
    )
    one = np.ones((1, sa.n))
    va, vb = ta.compute(sa, one), ta.compute(sb, one)
    return [
        _change(task, k, (_f(va[k][0]), _f(vb[k][0]), _f(point[i])), cols[i], sa.n)
        for i, k in enumerate(names)
    ]


def _change(
    task: str,
    metric: str,
    values: tuple[float | None, float | None, float | None],
    col: tuple[float | None, float | None, str | None],
    n: int,
) -> PairedChange:
    """One metric's paired change and its state from (before, after, change) and its interval column
    ``(low, high, no_ci)``: no interval (or no change value) is "no evidence of change" with the reason in
    ``note``; a percentile interval that misses its own point value is widened to reach it, so the printed
    change always lies in its interval and the state never contradicts the change's sign."""
    before, after, d = values
    lo, hi, why = col
    if lo is None or hi is None or d is None:
        note = why or ("no interval" if d is not None else "the change is undefined (NaN)")
        return PairedChange(task, metric, before, after, d, None, None, n, UNCHANGED, note)
    note = ""
    if not lo <= d <= hi:
        lo, hi, note = min(lo, d), max(hi, d), "interval widened to include the change (skewed bootstrap)"
    state = UNCHANGED if lo <= 0 <= hi else (CHANGED_UP if lo > 0 else CHANGED_DOWN)
    return PairedChange(task, metric, before, after, d, lo, hi, n, state, note)


def paired_changes(before: Path, after: Path, n_boot: int = 1000, seed: int = 0) -> list[PairedChange]:
    """Paired changes of every task the two runs share (in the first run's order)."""
    from genderscope.core.reparse import read_manifest

    a, b = read_manifest(before), read_manifest(after)
    shared = [t for t in a.tasks if t in b.tasks and t in lookup.TASKS]
    if not shared:
        raise UsageError(f"{before} and {after} share no task")
    return [c for t in shared for c in paired_task(Path(before), Path(after), t, n_boot, seed)]


def _f(x: Any) -> float | None:
    v = float(x)
    return None if np.isnan(v) else v
