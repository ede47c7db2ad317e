"""Standard reasons written as ``no_ci`` in results.json when a metric has no confidence interval."""

from __future__ import annotations

#: a count of items (or of answers) over the whole data set: nothing was sampled
EXACT_COUNT = "exact count over all items, no sampling"
#: GenDa Lens compatibility mode reproduces GenDa Lens's numbers, which come without intervals
COMPAT = "compat mode reproduces GenDa Lens, which gives no interval"
#: a fixed input of the run, not an estimate
PARAMETER = "run parameter, not an estimate"


def bootstrap_off(option: str) -> str:
    """The reason when the bootstrap is off: ``bootstrap_off("n_boot")`` -> ``"n_boot = 0"``."""
    return f"{option} = 0"


def undefined(what: str = "the statistic") -> str:
    """The reason when the point value is undefined, so no interval is computed."""
    return f"{what} is undefined"


def no_interval(method: str, n_undefined: int, n_resamples: int) -> str:
    """The reason when the bootstrap ran but ``method`` gave no interval (NaN bounds)."""
    return f"no {method} interval: {n_undefined} of {n_resamples} resamples undefined"
