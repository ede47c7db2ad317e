"""How intervals are made from resampling units (clusters of items, else items), by their number: none
below ``min_units``, the jackknife-t below ``few_units``, else the bootstrap's ``ci_method`` (with the
jackknife-t for named metrics).  The scored layer's metrics and the paired changes of ``compare --paired``
both use :func:`rule_intervals`."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from genderscope.stats import no_ci
from genderscope.stats.bootstrap import point_and_intervals
from genderscope.stats.jackknife import JACKKNIFE_T, jackknife_intervals, jackknife_weights

#: ``no_ci`` when every scored item is in one resampling unit (e.g. one template at a small --limit)
ONE_UNIT = "one resampling unit (all items in one cluster): the bootstrap cannot vary it"
#: fewer resampling units than this: no interval at all (a jackknife over 2–4 clusters has nothing to say)
MIN_UNITS = 5
FEW_UNITS_NO_CI = f"fewer than {MIN_UNITS} resampling units (clusters of items): no interval is meaningful"

#: ``no_ci`` of a metric whose degrees of freedom (``df``) say it rests on fewer than ``min_units`` units
FEW_SUBGROUP_NO_CI = (
    f"fewer than {MIN_UNITS} resampling units move this metric (a small subgroup, or no unit changed): "
    "no interval is meaningful"
)

#: below this many resampling units (clusters, else items) every metric's interval is the jackknife-t with
#: G − 1 degrees of freedom: a percentile bootstrap over a handful of clusters (the first 30 Winogender
#: sentences are 3 occupations) gives near-degenerate intervals that exclude the no-bias value of a null model
FEW_UNITS = 20


#: per metric: (ci_low, ci_high, no_ci reason)
Column = tuple[float | None, float | None, str | None]


@dataclass(frozen=True)
class IntervalRule:
    """How a scored task's intervals are made from its resampling units (clusters, else items): fewer than
    ``min_units`` units: none; fewer than ``few_units``: the jackknife-t for every metric; otherwise
    ``ci_method`` over the bootstrap, except the metrics matching ``jackknife_metrics`` (jackknife-t)."""

    ci_method: str = "percentile"
    jackknife_metrics: tuple[str, ...] = ()
    min_units: int = MIN_UNITS
    few_units: int = FEW_UNITS
    #: the jackknife-t of a metric takes (units that move it) − 1 degrees of freedom at most, and no
    #: interval when fewer than ``min_units`` move it (paired changes: a subgroup's metric rests on its units)
    influence_df: bool = False


@dataclass(frozen=True)
class UnitScores:
    """What a task declares so that ``compare --paired`` can pair two of its runs (``Task.paired_units``):
    its per-unit scores of one run and its metrics as a function of them.

    ``ids``: one id per resampling unit, the same in every run that scored the same unit (e.g. the dataset
    row); ``scores``: the per-unit scores in the order of ``ids`` (an array with the units on its last axis,
    or anything ``subset`` can cut); ``stat(scores, C)``: every metric (name -> one value per row of the
    weight matrix C, rows × units), the same function for both runs; ``subset(scores, idx)``: the scores of
    units ``idx`` in that order (default: ``numpy.take`` on the last axis); ``rule``: how the change's
    interval is made; ``no_ci``: metric name pattern (``fnmatch``) -> why its change gets no interval
    (e.g. a rank or a maximum); ``df(scores)``: per metric, the degrees of freedom of its jackknife-t on
    those (common) units, e.g. a subgroup's units − 1 (default: units − 1)."""

    ids: Sequence[str]
    scores: Any
    stat: Callable[[Any, np.ndarray], Mapping[str, np.ndarray]]
    subset: Callable[[Any, np.ndarray], Any] | None = None
    rule: IntervalRule = IntervalRule()
    no_ci: Mapping[str, str] = field(default_factory=dict)
    df: Callable[[Any], Mapping[str, float]] | None = None

    def take(self, idx: np.ndarray) -> Any:
        """The scores of units ``idx`` (in that order)."""
        if self.subset is not None:
            return self.subset(self.scores, idx)
        return np.take(np.asarray(self.scores), idx, axis=-1)

    def reason(self, metric: str) -> str | None:
        """Why ``metric``'s change gets no interval, or None."""
        return next((why for pat, why in self.no_ci.items() if fnmatch.fnmatchcase(metric, pat)), None)


def paired_rule(ci_method: str) -> IntervalRule:
    """The interval rule of a task's paired changes under its ``--ci-method``: ``jackknife-t`` for every
    metric (the chat probes' and ``gest-likelihood``'s default; degrees of freedom from the units that move
    each metric), else that bootstrap interval; both with the small-sample rule's ``min_units``."""
    if ci_method == JACKKNIFE_T:
        return IntervalRule(jackknife_metrics=("*",), influence_df=True)
    return IntervalRule(ci_method=ci_method)


def rule_intervals(
    stat: Callable[[np.ndarray], dict[str, np.ndarray]],
    n: int,
    clusters: np.ndarray,
    n_boot: int,
    seed: int,
    rule: IntervalRule,
    df: Mapping[str, float] | None = None,
) -> tuple[list[str], np.ndarray, list[Column]]:
    """(metric names, point values, per metric ``(ci_low, ci_high, no_ci)``) of a vectorised statistic
    (``stat(C)``: name -> one value per row of the weight matrix C, rows × ``n`` items) under ``rule``:
    the bootstrap draws whole resampling units (``clusters``: unit index of each item) with ``seed``;
    ``df``: per metric, the degrees of freedom of its jackknife-t (at most units − 1, the default); a
    metric whose df + 1 is below ``rule.min_units`` gets no interval (:data:`FEW_SUBGROUP_NO_CI`)."""
    names: list[str] = []

    def cols_of(C: np.ndarray) -> np.ndarray:
        got = stat(C)
        names[:] = list(got)
        return np.column_stack([got[k] for k in names])

    n_units = int(clusters.max()) + 1 if clusters.size else 0
    enough = n_units >= max(2, rule.min_units)
    if enough and n_boot > 0 and (n_units < rule.few_units or "*" in rule.jackknife_metrics):
        # every metric gets the jackknife-t: no bootstrap to draw (it would be replaced column by column)
        point = np.asarray(cols_of(np.ones((1, n))), dtype=np.float64)[0]
        blank: list[Column] = [(None, None, None)] * len(names)
        return (
            names,
            point,
            _jackknife_columns(cols_of, point, names, clusters, n_units, blank, rule, seed, df),
        )
    point, iv = point_and_intervals(
        cols_of, n, n_boot if enough else 0, seed, method=rule.ci_method, clusters=clusters
    )
    if iv is None:
        why = no_ci.bootstrap_off("n_boot") if enough else (ONE_UNIT if n_units <= 1 else FEW_UNITS_NO_CI)
        return names, point, [(None, None, why)] * len(names)
    cols = no_ci.interval_columns(iv, len(names), rule.ci_method, n_boot, "n_boot")
    return names, point, _jackknife_columns(cols_of, point, names, clusters, n_units, cols, rule, seed, df)


def _influential(point: np.ndarray, replicates: np.ndarray) -> np.ndarray:
    """Per metric, the jackknife groups whose removal moves it (a NaN replicate counts): the units a
    subgroup's metric rests on, whatever the task."""
    scale = np.maximum(1.0, np.abs(point))
    with np.errstate(invalid="ignore"):
        moved = ~(np.abs(replicates - point[None, :]) <= 1e-12 * scale[None, :])
    return moved.sum(axis=0).astype(np.float64)


def _jackknife_columns(
    stat: Callable[[np.ndarray], np.ndarray],
    point: np.ndarray,
    names: list[str],
    clusters: np.ndarray,
    n_units: int,
    cols: list[Column],
    rule: IntervalRule,
    seed: int,
    df: Mapping[str, float] | None = None,
) -> list[Column]:
    """``cols`` with the metrics of ``rule.jackknife_metrics`` (every metric when there are fewer than
    ``rule.few_units`` resampling units) replaced by their jackknife-t interval over the resampling units
    (delete-a-group, groups dealt by ``seed``)."""
    which = [
        i
        for i, k in enumerate(names)
        if n_units < rule.few_units or any(fnmatch.fnmatchcase(k, p) for p in rule.jackknife_metrics)
    ]
    if not which:
        return cols
    W = jackknife_weights(n_units, seed)[:, clusters]
    reps = np.asarray(stat(W), dtype=np.float64)[:, which]
    dof = None if not df else np.array([df.get(names[i], np.inf) for i in which], dtype=np.float64)
    if rule.influence_df:
        dof = np.minimum(np.inf if dof is None else dof, _influential(point[which], reps) - 1.0)
    iv = jackknife_intervals(point[which], reps, df=dof)
    jk = no_ci.interval_columns(iv, len(which), JACKKNIFE_T, W.shape[0], "n_boot")
    out = list(cols)
    for j, (i, c) in enumerate(zip(which, jk)):
        few = dof is not None and dof[j] + 1 < rule.min_units
        out[i] = (None, None, FEW_SUBGROUP_NO_CI) if few else c
    return out
