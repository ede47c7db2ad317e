"""The shared statistics module against scipy/numpy and hand computations."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sst

from genderscope.stats import holm, ols, pooled_t_test, t_test_from_stats, welch_t_test
from genderscope.stats.bootstrap import (
    bootstrap_counts,
    count_matrix,
    intervals,
    normal_interval_genderbench,
    paired_bootstrap_diff,
    percentile_interval,
)


def test_count_matrix_rows_are_python_choices_draws() -> None:
    rng = random.Random(5)
    C = count_matrix(17, 40, seed=5)
    for b in range(40):
        draw = rng.choices(range(17), k=17)
        assert np.array_equal(C[b], np.bincount(draw, minlength=17))


def test_chunked_counts_equal_one_block() -> None:
    whole = np.vstack(list(bootstrap_counts(50, 33, seed=9, chunk=33)))
    chunked = np.vstack(list(bootstrap_counts(50, 33, seed=9, chunk=4)))
    assert np.array_equal(whole, chunked)


def test_percentile_interval_matches_numpy_and_drops_nan() -> None:
    v = np.array([1.0, np.nan, 3.0, 2.0, 5.0, np.nan])
    lo, hi, n_nan = percentile_interval(v, 0.9)
    good = np.array([1.0, 3.0, 2.0, 5.0])
    assert (lo, hi) == tuple(np.quantile(good, [0.05, 0.95]))
    assert n_nan == 2
    assert np.isnan(percentile_interval(np.array([np.nan, np.nan]))[0])


def test_normal_interval_genderbench_rules() -> None:
    assert normal_interval_genderbench(np.array([0.5, 0.5, 0.5])) == (0.5, 0.5, 0)
    lo, hi, _ = normal_interval_genderbench(np.array([np.nan, 0.2, 0.2]))
    assert np.isnan(lo) and np.isnan(hi)  # sd 0 after dropping NaN -> (NaN, NaN)
    v = np.array([0.0, 1.0, 2.0, 3.0])
    lo, hi, _ = normal_interval_genderbench(v, 0.95)
    z = 1.959963984540054
    assert lo == pytest.approx(1.5 - z * np.std(v), abs=1e-12)
    assert hi == pytest.approx(1.5 + z * np.std(v), abs=1e-12)


def test_intervals_columnwise_equals_single() -> None:
    rng = np.random.default_rng(0)
    m = rng.normal(size=(200, 4))
    m[3, 2] = np.nan
    got = intervals(m, "percentile", 0.95)
    for j in range(4):
        assert tuple(got[j, :2]) == pytest.approx(percentile_interval(m[:, j], 0.95)[:2])
    assert got[2, 2] == 1


def test_paired_bootstrap_diff_centres_on_mean_difference() -> None:
    a = np.array([1, 1, 1, 0, 1, 1, 0, 1] * 10, float)
    b = np.array([0, 1, 0, 0, 1, 0, 0, 1] * 10, float)
    d, lo, hi = paired_bootstrap_diff(a, b, 500, seed=1)
    assert d == pytest.approx(0.375)
    assert lo < d < hi and lo > 0


def test_t_tests_equal_scipy() -> None:
    x = np.array([3.1, 2.9, 3.6, 4.0, 3.3])
    y = np.array([2.0, 2.7, 2.2, 3.1, 2.4, 2.6])
    w = welch_t_test(x, y)
    ref = sst.ttest_ind(x, y, equal_var=False)
    assert w.pvalue == pytest.approx(ref.pvalue, rel=1e-12) and w.statistic == pytest.approx(ref.statistic)
    p = pooled_t_test(x, y, alternative="greater")
    ref = sst.ttest_ind(x, y, equal_var=True, alternative="greater")
    assert p.pvalue == pytest.approx(ref.pvalue, rel=1e-12) and p.df == 9
    s = t_test_from_stats(22.1, 1.2, 5, 16.3, 1.5, 5, equal_var=True, alternative="greater")
    # by hand: pooled sd, t, one-sided p
    sp = np.sqrt((4 * 1.2**2 + 4 * 1.5**2) / 8)
    t = (22.1 - 16.3) / (sp * np.sqrt(2 / 5))
    assert s.statistic == pytest.approx(t) and s.pvalue == pytest.approx(sst.t.sf(t, 8))


def test_holm_by_hand() -> None:
    p = [0.01, 0.04, 0.03, np.nan, 0.5]
    adj = holm(p)
    # sorted 0.01, 0.03, 0.04, 0.5 with m = 4: 0.04, 0.09, 0.09 (monotone), 0.5
    assert adj[0] == pytest.approx(0.04)
    assert adj[2] == pytest.approx(0.09) and adj[1] == pytest.approx(0.09)
    assert np.isnan(adj[3]) and adj[4] == pytest.approx(0.5)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(min_value=0, max_value=1), min_size=1, max_size=20))
def test_holm_properties(ps: list[float]) -> None:
    adj = holm(ps)
    assert np.all(adj >= np.asarray(ps) - 1e-15) and np.all(adj <= 1.0)
    order = np.argsort(ps, kind="stable")
    assert np.all(np.diff(adj[order]) >= -1e-15)  # monotone in the raw p order


def test_ols_against_scipy_linregress() -> None:
    rng = np.random.default_rng(3)
    x = rng.normal(size=50)
    y = 0.7 + 2.0 * x + rng.normal(scale=0.3, size=50)
    fit = ols(x, y)
    ref = sst.linregress(x, y)
    assert fit.slope == pytest.approx(ref.slope) and fit.intercept == pytest.approx(ref.intercept)
    assert fit.slope_se == pytest.approx(ref.stderr) and fit.intercept_se == pytest.approx(
        ref.intercept_stderr
    )
    t = sst.t.ppf(0.975, 48)
    assert fit.slope_ci == pytest.approx((ref.slope - t * ref.stderr, ref.slope + t * ref.stderr))
    assert fit.r2 == pytest.approx(ref.rvalue**2)
    with pytest.raises(ValueError):
        ols(np.ones(5), np.arange(5.0))
