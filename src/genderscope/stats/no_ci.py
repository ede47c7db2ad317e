"""Standard reasons written as ``no_ci`` in results.json when a metric has no confidence interval."""

from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np

#: a count of items (or of answers) over the whole data set: nothing was sampled
EXACT_COUNT = "exact count over all items, no sampling"
#: GenDa Lens compatibility mode reproduces GenDa Lens's numbers, which come without intervals
COMPAT = "compat mode reproduces GenDa Lens, which gives no interval"


def bootstrap_off(option: str) -> str:
    """The reason when the bootstrap is off: ``bootstrap_off("n_boot")`` -> ``"n_boot = 0"``."""
    return f"{option} = 0"


def no_interval(method: str, n_undefined: int, n_resamples: int) -> str:
    """The reason when the bootstrap ran but ``method`` gave no interval (NaN bounds)."""
    return f"no {method} interval: {n_undefined} of {n_resamples} resamples undefined"


def interval_columns(
    iv: np.ndarray | None, n_metrics: int, method: str, n_resamples: int, option: str
) -> list[tuple[float | None, float | None, str | None]]:
    """Per metric ``(ci_low, ci_high, no_ci)`` from an M x 3 :func:`~genderscope.stats.intervals.intervals`
    array, or from ``None`` when the bootstrap was off (``option`` names the resamples option)."""
    if iv is None:
        return [(None, None, bootstrap_off(option))] * n_metrics
    out: list[tuple[float | None, float | None, str | None]] = []
    for lo, hi, n_nan in iv.tolist():
        why = no_interval(method, int(n_nan), n_resamples) if math.isnan(lo) and math.isnan(hi) else None
        out.append((lo, hi, why))
    return out


def from_bootstrap(
    boot: Mapping[str, Any] | None,
    name: str,
    *,
    off: str,
    not_resampled: str = EXACT_COUNT,
    method: str = "percentile-pct",
) -> tuple[float | None, float | None, str | None]:
    """``(ci_low, ci_high, no_ci)`` of metric ``name`` from a task's bootstrap block
    (:func:`~genderscope.stats.intervals.bootstrap_block`); ``off``: the reason when the bootstrap did
    not run (``boot`` is None); ``not_resampled``: the reason for a metric the block does not cover."""
    if boot is None:
        return None, None, off
    if name not in boot["ci95"]:
        return None, None, not_resampled
    lo, hi = boot["ci95"][name]
    if lo is None or hi is None:
        return None, None, no_interval(method, int(boot["n_boot_undefined"][name]), int(boot["n_boot"]))
    return lo, hi, None
