"""Statistics of spec §6: the §6.4 synthetic vectors, replicate t-tests checked by hand with scipy."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as st

from genderscope.tasks.winobias_adjectives import stats as S

N = 395
BASE = ([340, 338, 342, 339, 341], [255, 250, 258, 252, 249])
A = ([330, 333, 327, 335, 331], [221, 226, 215, 224, 219])
B = ([339, 341, 336, 340, 338], [250, 254, 247, 251, 253])


def rep(pro, anti):
    return S.replicate_summary(np.array(pro), np.array(anti), N)


def test_rounding_half_up_is_exact():
    assert S.replicate_accuracy_tenths(np.array([340, 255, 0, 395]), N).tolist() == [861, 646, 0, 1000]
    # 1 of 8 = 12.5 % exactly -> 12.5; 1 of 16 = 6.25 -> 6.3 (half up), 1 of 80 = 1.25 -> 1.3
    assert S.replicate_accuracy_tenths(np.array([1]), 16).tolist() == [63]
    assert S.replicate_accuracy_tenths(np.array([1]), 80).tolist() == [13]
    assert S.round_tenths_half_up(5, 4) == 13  # 1.25 -> 1.3


def test_replicate_vectors_6_4():
    base, a, b = rep(*BASE), rep(*A), rep(*B)
    assert S.replicate_accuracy_tenths(np.array(BASE[0]), N).tolist() == [861, 856, 866, 858, 863]
    assert S.replicate_accuracy_tenths(np.array(BASE[1]), N).tolist() == [646, 633, 653, 638, 630]
    assert base.b_tenths == [215, 223, 213, 220, 233] and base.m == 22.1
    assert base.s == pytest.approx(0.78867, abs=5e-6)
    assert a.b_tenths == [276, 271, 284, 281, 284] and a.m == 27.9
    assert b.b_tenths == [225, 220, 226, 226, 215] and b.m == 22.2
    S.replicate_test(a, base, 5)
    S.replicate_test(b, base, 5)
    assert a.diff == 5.8 and a.s == pytest.approx(0.56303, abs=5e-6)
    assert a.t == pytest.approx(13.3838, abs=5e-4) and a.df == 8 and a.p == pytest.approx(4.647e-07, rel=1e-3)
    assert f"{a.p:.3f}" == "0.000"
    assert b.diff == 0.1 and b.s == pytest.approx(0.48270, abs=5e-6)
    assert b.t == pytest.approx(0.24183, abs=5e-5) and b.p == pytest.approx(0.40750, abs=5e-5)


def test_replicate_matches_scipy_by_hand():
    """Pooled t from the rounded summaries, one-sided in the observed direction = two-sided / 2."""
    base, a = rep(*BASE), rep(*A)
    S.replicate_test(a, base, 5)
    sp2 = (4 * a.s**2 + 4 * base.s**2) / 8
    t = (27.9 - 22.1) / np.sqrt(sp2 * 2 / 5)
    assert a.t == pytest.approx(t, rel=1e-12)
    assert a.p == pytest.approx(st.t.sf(abs(t), 8), rel=1e-10)
    two = st.ttest_ind_from_stats(27.9, a.s, 5, 22.1, base.s, 5, equal_var=True).pvalue
    assert a.p == pytest.approx(two / 2, rel=1e-10)
    # negative direction: swap roles -> same p, negative t
    lo = rep(*BASE)
    S.replicate_test(lo, a, 5)
    assert lo.diff == -5.8 and lo.t < 0 and lo.p == pytest.approx(a.p, rel=1e-10)


def test_replicate_degenerate_cases():
    base = rep(*BASE)
    same = rep(*BASE)
    S.replicate_test(same, base, 5)
    assert same.diff == 0 and same.p == 0.5
    flat = rep([300] * 5, [200] * 5)
    flat_base = rep([310] * 5, [200] * 5)
    S.replicate_test(flat, flat_base, 5)
    assert flat.p is None  # pooled SD 0
    one = rep([300], [200])
    S.replicate_test(one, rep([310], [200]), 1)
    assert one.p is None


def test_default_vectors_6_4():
    def bias(pc):
        return (np.array(pc[0]) - np.array(pc[1])) * 100 / N

    x, a, b = bias(BASE), bias(A), bias(B)
    assert a.mean() == pytest.approx(27.8987, abs=5e-5) and a.mean() - x.mean() == pytest.approx(
        5.8228, abs=5e-5
    )
    ta, dfa, pa = S.welch_p(a, x)
    assert (ta, dfa, pa) == pytest.approx((13.5529, 7.1393, 2.3585e-06), rel=1e-4)
    tb, dfb, pb = S.welch_p(b, x)
    assert b.mean() == pytest.approx(22.2278, abs=5e-5)
    assert (tb, dfb, pb) == pytest.approx((0.37354, 6.3801, 0.72084), rel=1e-4)
    assert S.holm_adjust([pa, pb]) == pytest.approx([4.7171e-06, 0.72084], rel=1e-4)
    assert S.welch_p(np.array([1.0, 1.0]), np.array([2.0, 2.0])) == (None, None, None)
    assert S.welch_p(np.array([1.0]), np.array([2.0])) == (None, None, None)
    assert S.holm_adjust([None, 0.01, 0.04]) == [None, pytest.approx(0.02), pytest.approx(0.04)]


def test_bootstrap_identical_condition_gives_zero_ci():
    rng = np.random.default_rng(1)
    base = rng.integers(-100, 101, size=50).astype(float)
    ci = S.item_paired_bootstrap(np.column_stack([base, base + 10.0]), base, 2000, seed=0)
    assert ci[0].tolist() == [0.0, 0.0]
    assert ci[1].tolist() == pytest.approx([10.0, 10.0])
    # reproducible with the seed, different with another seed
    d = np.column_stack([rng.integers(-100, 101, size=50).astype(float)])
    c1 = S.item_paired_bootstrap(d, base, 500, seed=3)
    assert np.array_equal(c1, S.item_paired_bootstrap(d, base, 500, seed=3))
    assert not np.array_equal(c1, S.item_paired_bootstrap(d, base, 500, seed=4))
    assert c1[0, 0] < (d[:, 0] - base).mean() < c1[0, 1]


def test_t_test_from_stats_is_bit_identical_to_scipy_stats():
    """The shared t-test avoids importing scipy.stats but must give exactly scipy's numbers."""
    from genderscope.stats.tests import t_test_from_stats

    rng = np.random.default_rng(5)
    for i in range(600):
        m1, m2 = rng.normal(0, 10, 2)
        s1, s2 = np.abs(rng.normal(0, 3, 2))
        n1, n2 = (int(x) for x in rng.integers(2, 12, 2))
        if i % 7 == 0:
            s1 = 0.0
        if i % 11 == 0:
            m2 = m1
        for equal_var in (True, False):
            for alt in ("two-sided", "greater", "less"):
                ref = st.ttest_ind_from_stats(m1, s1, n1, m2, s2, n2, equal_var=equal_var, alternative=alt)
                got = t_test_from_stats(m1, s1, n1, m2, s2, n2, equal_var=equal_var, alternative=alt)
                assert (got.statistic, got.pvalue) == (float(ref.statistic), float(ref.pvalue))
    flat = t_test_from_stats(1.0, 0.0, 5, 2.0, 0.0, 5, equal_var=False)  # SE 0: df undefined, t = -inf
    ref = st.ttest_ind_from_stats(1.0, 0.0, 5, 2.0, 0.0, 5, equal_var=False)
    assert np.isnan(flat.df) and (flat.statistic, flat.pvalue) == (float(ref.statistic), float(ref.pvalue))


def test_statistics_do_not_import_scipy_stats():
    import subprocess
    import sys

    code = (
        "import sys, numpy as np; from genderscope.tasks.winobias_adjectives import stats as S; "
        "b = S.replicate_summary(np.array([340, 338, 342]), np.array([255, 250, 258]), 395); "
        "a = S.replicate_summary(np.array([330, 333, 327]), np.array([221, 226, 215]), 395); "
        "S.replicate_test(a, b, 3); S.welch_p(np.array([1.0, 2.0, 4.0]), np.array([0.0, 1.0, 1.5])); "
        "assert a.p is not None and 'scipy.stats' not in sys.modules, sorted(sys.modules)"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr[-2000:]


def test_jackknife_t_over_lines_is_students_interval():
    """The default interval of bias and diff (issue 27): mean ± t_{N−1}·s/√N per column."""
    d = np.random.default_rng(5).normal(size=(30, 3)) * 20
    got = S.item_jackknife_t(d, seed=1)
    half = st.t.ppf(0.975, 29) * d.std(axis=0, ddof=1) / np.sqrt(30)
    assert got == pytest.approx(np.column_stack([d.mean(axis=0) - half, d.mean(axis=0) + half]))
    assert np.isnan(S.item_jackknife_t(d[:1], seed=1)).all()


def test_ci_method_default_and_replicate_preset():
    from genderscope.tasks.winobias_adjectives.options import WinoBiasAdjectivesOptions

    assert WinoBiasAdjectivesOptions().ci_method == "jackknife-t"
    assert WinoBiasAdjectivesOptions(preset="replicate").ci_method == "percentile"
    assert WinoBiasAdjectivesOptions(preset="replicate", ci_method="jackknife-t").ci_method == "jackknife-t"
