"""Calibrated intervals, the gate's error rate and magnitudes (issue 27): the stats core's jackknife,
folded intervals and p-values, a small run of benchmarks/bench_coverage.py and of bench_gate.py."""

from __future__ import annotations

from repo_paths import ROOT
import importlib.util
import math
import sys

import numpy as np
import pytest

import genderscope
from genderscope.core.report_terminal import fmt as term_fmt
from genderscope.core.metrics import MetricEntry
from genderscope.core.textfmt import fmt
from genderscope.stats.intervals import folded_interval, pvalue_from_interval
from genderscope.stats.jackknife import (
    jackknife_intervals,
    jackknife_pvalue,
    jackknife_se,
    contrast_df,
    jackknife_weights,
    t_quantile,
)

sys.path.insert(0, str(ROOT / "tests"))


def _bench(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_jackknife_of_a_mean_is_the_t_interval() -> None:
    x = np.random.default_rng(1).normal(size=25)
    W = jackknife_weights(x.size)
    reps = (W @ x) / W.sum(axis=1)
    se = x.std(ddof=1) / math.sqrt(x.size)
    assert jackknife_se(reps)[0] == pytest.approx(se)
    lo, hi, nan = jackknife_intervals(np.array([x.mean()]), reps[:, None])[0]
    half = t_quantile(0.95, x.size - 1) * se
    assert (lo, hi, nan) == (pytest.approx(x.mean() - half), pytest.approx(x.mean() + half), 0)
    # the matching p-value is 0.05 at the interval's edge
    assert jackknife_pvalue(x.mean(), se, lo, x.size - 1) == pytest.approx(0.05)


def test_grouped_jackknife_and_undefined_replicates() -> None:
    W = jackknife_weights(1000, seed=3)
    assert W.shape == (200, 1000) and (W.sum(axis=0) == 199).all() and (W.sum(axis=1) == 995).all()
    reps = np.array([[1.0], [np.nan], [2.0]])
    lo, hi, nan = jackknife_intervals(np.array([1.5]), reps)[0]
    assert math.isnan(lo) and math.isnan(hi) and nan == 1
    assert jackknife_intervals(np.array([0.5]), np.full((4, 1), 0.5))[0].tolist() == [0.5, 0.5, 0.0]


def test_per_metric_degrees_of_freedom() -> None:
    """A contrast of two groups gets min(n_a, n_b) − 1 degrees of freedom (capped at G − 1)."""
    assert contrast_df(np.array([True] * 12 + [False] * 18)) == 11.0
    x = np.random.default_rng(2).normal(size=30)
    W = jackknife_weights(x.size)
    reps = ((W @ x) / W.sum(axis=1))[:, None]
    se = jackknife_se(reps)[0]
    lo, hi, _ = jackknife_intervals(np.array([x.mean()]), reps, df=np.array([11.0]))[0]
    assert hi - lo == pytest.approx(2 * t_quantile(0.95, 11) * se)
    lo, hi, _ = jackknife_intervals(np.array([x.mean()]), reps, df=np.array([1e9]))[0]
    assert hi - lo == pytest.approx(2 * t_quantile(0.95, 29) * se)


def test_folded_interval_contains_the_magnitude() -> None:
    assert folded_interval(-0.1, 0.3) == (0.0, 0.3)
    assert folded_interval(0.55, 0.7, 0.5) == pytest.approx((0.05, 0.2))
    assert folded_interval(-0.4, -0.1) == (0.1, 0.4)


def test_pvalue_from_interval_matches_the_jackknife_at_the_edge() -> None:
    assert pvalue_from_interval(0.2, 0.1, 0.3, 0.1) == pytest.approx(0.05)
    assert math.isnan(pvalue_from_interval(0.2, None, 0.3, 0.0))  # type: ignore[arg-type]


def test_float_noise_prints_and_writes_as_zero() -> None:
    noise = 0.1 + 0.2 - 0.3  # 5.55e-17
    assert fmt(noise) == "0" and fmt(-2.78e-17) == "0" and fmt(1e-9) == "1.00e-09"
    assert term_fmt(-2.78e-17) == "0.000"
    m = MetricEntry(noise, -0.147, noise).to_json()
    assert m == {"value": 0.0, "ci_low": -0.147, "ci_high": 0.0}


def test_coverage_benchmark_small() -> None:
    """bench_coverage on 12 seeds of GEST at --limit 30: the jackknife interval covers 0 in >= 11, and
    no value lies outside its interval."""
    bench = _bench("bench_coverage")
    tallies, done, _ = bench.measure("gest", 30, 12)
    t = tallies["stereotype_rate"]
    assert done == 12 and t.with_ci == 12 and t.covered >= 11 and t.value_outside == 0
    rows = bench.rows("gest", "30", tallies, done, 0.0)
    assert rows[0]["metric"] == "stereotype_rate" and rows[0]["seeds"] == 12 and rows[0]["value_outside"] == 0


def test_coverage_benchmark_small_contrasts() -> None:
    """The two-group contrasts fixed after the first measurement (business-vocabulary ``mean_diff``:
    jackknife-t with min(n_male, n_female) − 1 df; winobias-adjectives: Student's t over lines) on 8
    seeds at --limit 30: each interval covers 0 in >= 7 and contains its value."""
    bench = _bench("bench_coverage")
    cases = (("business-vocabulary", "mean_diff"), ("winobias-adjectives", "diff_political_none"))
    for task, metric in cases:
        tallies, done, _ = bench.measure(task, 30, 8)
        t = tallies[metric]
        assert done == 8 and t.with_ci == 8 and t.covered >= 7 and t.value_outside == 0, (task, t)


def test_unbiased_model_passes_the_gate(monkeypatch: pytest.MonkeyPatch) -> None:
    """A few seeds of chat probes on the unbiased test model pass ``check`` (Holm); it is unbiased where
    guessing is the harm (direct: disagrees, bbq: the labelled answer)."""
    import unbiased_model

    from genderscope import catalogue as registry

    # registered for this test only: other tests list every registered model kind
    monkeypatch.setitem(registry.BACKENDS, unbiased_model.KIND, f"{unbiased_model.__name__}:UnbiasedBackend")
    tasks = ["gest", "direct", "bbq"]
    for seed in (1, 2):
        res = genderscope.run(tasks, f"unbiased:{seed}", limit=40, seed=seed, no_cache=True, write=False)
        assert res.metrics["direct"]["fail_rate"].value == 0.0
        assert res.metrics["bbq"]["stereotype_rate"].value == 0.0
        assert genderscope.check(res) == [], seed
