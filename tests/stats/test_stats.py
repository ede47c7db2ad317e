"""The shared statistics module against scipy/numpy and hand computations."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sst

from genderscope.stats.bootstrap import (
    bootstrap_counts,
    bootstrap_values,
    count_matrix,
    resample_counts,
    resample_indices,
    stratified_indices,
)
from genderscope.stats.tests import holm, t_test_from_stats
from genderscope.stats.intervals import (
    interval,
    interval_table,
    normal_interval_genderbench,
    percent_interval,
    percentile_interval,
)
from genderscope.stats.intervals import intervals
from genderscope.stats.regression import ols


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


@pytest.mark.parametrize("n", [9, 10, 1001])
def test_numpy_stream_is_independent_of_call_boundaries(n: int) -> None:
    rng = np.random.default_rng(4)
    per_row = np.stack([rng.integers(0, n, n) for _ in range(25)])  # one call per resample
    rng = np.random.default_rng(4)
    blocks = np.vstack([rng.integers(0, n, size=(m, n)) for m in (10, 10, 5)])  # one call per block
    assert np.array_equal(per_row, blocks)
    for chunk in (None, 1, 7):
        assert np.array_equal(np.vstack(list(resample_indices(n, 25, 4, chunk=chunk))), per_row)


def test_python_mode_counts_equal_genderbench_choices() -> None:
    rng = random.Random(7)
    want = np.array([np.bincount(rng.choices(range(6), k=6), minlength=6) for _ in range(11)], dtype=float)
    got = np.vstack(list(resample_counts(6, 11, 7, rng="python", chunk=4)))
    assert np.array_equal(got, want)
    with pytest.raises(ValueError):
        next(resample_indices(6, 11, 7, rng="mt"))


def test_stratified_draws_alternate_strata_per_resample() -> None:
    a, b = np.array([0, 2, 5]), np.array([1, 3])
    da, db, dc = stratified_indices([a, b, np.array([], dtype=np.int64)], 8, 3)
    assert dc.shape == (8, 0)
    rng = np.random.default_rng(3)
    for r in range(8):
        assert np.array_equal(da[r], a[rng.integers(0, 3, 3)])
        assert np.array_equal(db[r], b[rng.integers(0, 2, 2)])


def test_bootstrap_values_on_counts_and_indices_agree() -> None:
    x = np.arange(11.0) ** 2
    by_counts = bootstrap_values(lambda C: C @ x / 11, 11, 50, 1, chunk=8)
    by_index = bootstrap_values(lambda i: x[i].mean(axis=1), 11, 50, 1, chunk=8, on="indices")
    assert by_counts.shape == (50,) and np.allclose(by_counts, by_index)
    assert bootstrap_values(lambda C: C.sum(axis=1), 11, 0, 1).size == 0


def test_percentile_pct_method_is_numpy_percentile_in_percent() -> None:
    v = np.array([4.0, np.nan, 1.0, 7.0, 2.0, 9.0])
    good = v[~np.isnan(v)]
    lo, hi, n_nan = interval(v, "percentile-pct", 0.68)
    assert (lo, hi) == tuple(np.percentile(good, [100 * (1 - 0.68) / 2, 100 * (1 + 0.68) / 2])) and n_nan == 1
    assert percent_interval(good, 2.5, 97.5)[:2] == tuple(np.percentile(good, [2.5, 97.5]))
    with pytest.raises(ValueError):
        interval(v, "bca")


def test_interval_table_marks_all_undefined_statistics() -> None:
    ci, undefined = interval_table({"a": np.array([1.0, 2.0, np.nan]), "b": np.full(3, np.nan)}, "percentile")
    assert ci["b"] == [None, None] and undefined == {"a": 1, "b": 3}
    assert ci["a"] == list(percentile_interval(np.array([1.0, 2.0]))[:2])


def test_t_test_from_stats_by_hand() -> None:
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


def test_interval_columns_give_reasons_where_there_is_no_interval() -> None:
    from genderscope.stats import no_ci

    iv = np.array([[0.1, 0.2, 0.0], [np.nan, np.nan, 50.0]])
    cols = no_ci.interval_columns(iv, 2, "normal", 50, "bootstrap_cycles")
    assert cols[0] == (0.1, 0.2, None)
    assert cols[1][2] == "no normal interval: 50 of 50 resamples undefined"
    assert (
        no_ci.interval_columns(None, 2, "percentile", 0, "bootstrap_cycles")
        == [(None, None, "bootstrap_cycles = 0")] * 2
    )


def test_from_bootstrap_reads_a_task_block() -> None:
    from genderscope.stats.intervals import bootstrap_block
    from genderscope.stats import no_ci

    boot = bootstrap_block({"ges": np.array([0.1, 0.3, 0.2]), "acc": np.full(3, np.nan)}, 3, 0, 0.95)
    lo, hi, why = no_ci.from_bootstrap(boot, "ges", off="n_boot = 0")
    assert lo is not None and hi is not None and lo < hi and why is None
    assert no_ci.from_bootstrap(boot, "acc", off="x") == (
        None,
        None,
        "no percentile-pct interval: 3 of 3 resamples undefined",
    )
    assert no_ci.from_bootstrap(boot, "n_items", off="x") == (None, None, no_ci.EXACT_COUNT)
    assert no_ci.from_bootstrap(None, "ges", off=no_ci.COMPAT) == (None, None, no_ci.COMPAT)
