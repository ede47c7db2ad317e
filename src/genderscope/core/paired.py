"""Paired changes between two runs of the same tasks (e.g. a model before and after debiasing).

For a task declared on the scored layer (:class:`genderscope.tasks.scored.ScoredBenchmark`: its metrics are
functions of per-item scores and a weight matrix), both runs' recorded answers are read back, the items
both runs scored are matched by id, and each metric's change after − before is resampled with the SAME
item (or cluster) draws for both runs: a paired bootstrap, whose interval is narrower than two
independent ones when the runs' item scores are correlated.  The interval follows the task's small-sample
rule (:func:`genderscope.stats.rules.rule_intervals`: none below ``min_units`` resampling units,
the jackknife-t below ``few_units`` and for ``jackknife_metrics``).  The state says whether the 95 %
interval of the change excludes 0 (no interval: no evidence of change, the reason in ``note``).  Tasks on
other layers declare ``paired_units(results)``: their per-unit scores keyed by unit ids and each metric as
a function of them (:class:`~genderscope.stats.rules.UnitScores`: ``winobias-lm``, ``gest-likelihood``,
the chat probes); the units both runs scored are matched by id and resampled one by one, under the rule
the task declares there (metrics it names in ``no_ci``, e.g. ranks and maxima, get no interval).  Tasks
that declare neither are listed without a paired interval, with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from genderscope.core import lookup
from genderscope.common.errors import UsageError

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


def _replayed(run: Path, task: str, manifest: Any) -> tuple[Any, Any]:
    """(task object, its attempt results) rebuilt from a run's recorded answers through the replay path
    that ``genderscope reparse`` takes (:func:`genderscope.core.reparse.replay_task`: the run's options,
    trials, limit and seed; stale answers refused, unanswered attempts skipped)."""
    from genderscope.core.reparse import replay_task

    done = replay_task(run, manifest, task, dict(manifest.tasks[task].options)).runs[0]
    return done.task, done.results


def _scores(run: Path, task: str, manifest: Any) -> tuple[Any, Any]:
    """(task object, its Scores) of a scored-layer task, from a run's recorded answers."""
    t, results = _replayed(run, task, manifest)
    return t, t.scores(results)[0]


def _is_scored(cls: type) -> bool:
    return all(callable(getattr(cls, m, None)) for m in ("scores", "compute", "clusters", "interval_rule"))


def is_paired_task(cls: type) -> bool:
    """Whether a task class can be paired: it declares the scored layer's interface (``scores`` of its
    answers, ``compute(scores, C)`` over a weight matrix, ``clusters`` and ``interval_rule``), as every
    :class:`~genderscope.tasks.scored.ScoredBenchmark` does, or ``paired_units(results)`` (its per-unit
    scores and metrics, a :class:`~genderscope.stats.rules.UnitScores`); core never imports the task
    layer."""
    return _is_scored(cls) or callable(getattr(cls, "paired_units", None))


def paired_task(
    before: Path, after: Path, task: str, n_boot: int = 1000, seed: int = 0, rule: Any = None
) -> list[PairedChange]:
    """Paired changes of every metric of ``task`` between two runs; ``rule``: an
    :class:`~genderscope.stats.rules.IntervalRule` instead of the task's own (benchmarks)."""
    cls = lookup.task_class(task)
    if callable(getattr(cls, "paired_units", None)):  # its own units first (scored-layer UnitBenchmarks too)
        return _paired_units(Path(before), Path(after), task, n_boot, seed, rule)
    if _is_scored(cls):
        return _paired_scored(Path(before), Path(after), task, n_boot, seed, rule)
    return [PairedChange(task, "*", None, None, None, None, None, 0, NO_PAIRING,
                         "this task declares no per-unit scores to pair (paired_units)")]  # fmt: skip


def _paired_scored(
    before: Path, after: Path, task: str, n_boot: int, seed: int, rule: Any
) -> list[PairedChange]:
    """:func:`paired_task` of a scored-layer task: items matched by id, resampled by cluster."""
    from genderscope.core.reparse import read_manifest
    from genderscope.stats.rules import rule_intervals

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


def _paired_units(
    before: Path, after: Path, task: str, n_boot: int, seed: int, rule: Any
) -> list[PairedChange]:
    """:func:`paired_task` of a task that declares ``paired_units``: the units both runs scored, matched by
    id, each run's metrics by its own ``stat`` on the same unit draws (units resampled one by one)."""
    from genderscope.core.reparse import read_manifest
    from genderscope.stats.rules import rule_intervals

    ta, ra = _replayed(before, task, read_manifest(before))
    tb, rb = _replayed(after, task, read_manifest(after))
    ua, ub = ta.paired_units(ra), tb.paired_units(rb)
    ids_b = {u: j for j, u in enumerate(ub.ids)}
    ia = np.array([i for i, u in enumerate(ua.ids) if u in ids_b], dtype=np.int64)
    ib = np.array([ids_b[ua.ids[i]] for i in ia], dtype=np.int64)
    if ia.size == 0:
        raise UsageError(
            f"{task}: the two runs share no scored unit (other items: --seed, --limit or options differ)"
        )
    sa, sb = ua.take(ia), ub.take(ib)
    one = np.ones((1, ia.size))
    va, vb = _row(ua.stat(sa, one)), _row(ub.stat(sb, one))
    if list(va) != list(vb):
        raise UsageError(f"{task}: the two runs have different metrics (were they run with other options?)")

    def change(C: np.ndarray) -> dict[str, np.ndarray]:
        a, b = ua.stat(sa, C), ub.stat(sb, C)
        return {k: np.asarray(b[k], dtype=np.float64) - np.asarray(a[k], dtype=np.float64) for k in a}

    n = int(ia.size)
    df = ua.df(sa) if ua.df is not None else None
    names, point, cols = rule_intervals(change, n, np.arange(n), n_boot, seed, rule or ua.rule, df)
    out = []
    for i, k in enumerate(names):
        why = ua.reason(k)
        col = (None, None, why) if why else cols[i]
        out.append(_change(task, k, (_f(va[k]), _f(vb[k]), _f(point[i])), col, n))
    return out


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
    if lo is None or hi is None or d is None or np.isnan(lo) or np.isnan(hi):
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


def _row(values: Any) -> dict[str, float]:
    """A statistic's values on its one weight row: name -> float."""
    return {k: float(np.asarray(v, dtype=np.float64).reshape(-1)[0]) for k, v in values.items()}


def _f(x: Any) -> float | None:
    v = float(x)
    return None if np.isnan(v) else v
