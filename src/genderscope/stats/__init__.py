"""Statistics shared by all tasks: cluster bootstrap, t-tests, Holm, OLS."""

from genderscope.stats.bootstrap import (
    bootstrap_counts,
    interval,
    intervals,
    normal_interval_genderbench,
    percentile_interval,
)
from genderscope.stats.regression import OLSResult, ols
from genderscope.stats.tests import TTestResult, holm, pooled_t_test, t_test_from_stats, welch_t_test

__all__ = [
    "bootstrap_counts",
    "interval",
    "intervals",
    "normal_interval_genderbench",
    "percentile_interval",
    "OLSResult",
    "ols",
    "TTestResult",
    "holm",
    "pooled_t_test",
    "t_test_from_stats",
    "welch_t_test",
]
