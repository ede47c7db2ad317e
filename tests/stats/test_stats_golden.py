"""Every bootstrap that moved onto genderscope.stats gives, bit for bit, the intervals it gave before
(within 1e-14 relative where a BLAS matrix product sums in an order that depends on numpy's build).

``fixtures/bootstrap_golden.json`` holds the intervals (as float.hex) computed by the per-module
implementations that existed before the statistics core (same inputs, seeds, levels).
"""

from __future__ import annotations

from repo_paths import FIXTURES
import importlib
import json
import warnings

import numpy as np

from genderscope.tasks.abc import metrics as abc_metrics
from genderscope.tasks.dawinobias import metrics as daw_metrics
from genderscope.tasks.winobias_adjectives import stats as wa_stats

GOLDEN = json.loads((FIXTURES / "bootstrap_golden.json").read_text())
bias_mod = importlib.import_module("genderscope.bordia.bias")
amp_mod = importlib.import_module("genderscope.bordia.amplification")


def _inputs():
    r = np.random.default_rng(2024)
    n = 41
    gold = {c: r.integers(0, 3, n) for c in ("pro", "anti")}
    pred = {c: np.where(r.random(n) < 0.6, gold[c], r.integers(0, 3, n)) for c in ("pro", "anti")}
    isf = r.random(n) < 0.4
    per = {k: r.normal(1, 2, n) for k in ("rel_female", "rel_male", "ratio_female", "ratio_male")}
    d, base = r.normal(size=(n, 3)), r.normal(size=n)
    bias = r.normal(size=n)
    x = r.normal(size=n)
    y = 0.5 * x + r.normal(size=n)
    return gold, pred, isf, per, d, base, bias, x, y


def _hex(v):
    return None if v is None else float(v).hex()


def test_task_and_bordia_bootstraps_are_unchanged() -> None:
    gold, pred, isf, per, d, base, bias, x, y = _inputs()
    daw = daw_metrics.pair_bootstrap(gold, pred, 300, 7, 0.9)["ci95"]
    assert {k: [_hex(a) for a in v] for k, v in daw.items()} == GOLDEN["dawinobias"]
    abc = abc_metrics.bootstrap(per, isf, 300, 7, 0.9)["ci95"]
    assert {k: [_hex(a) for a in v] for k, v in abc.items()} == GOLDEN["abc"]
    ppl = np.abs(np.random.default_rng(1).normal(5, 1, size=(41, 3)))
    with_ppl = abc_metrics.bootstrap(per, isf, 300, 7, 0.9, ppl=ppl)["ci95"]
    assert {k: [_hex(a) for a in with_ppl[k]] for k in abc} == GOLDEN["abc"]  # same draws for the old keys
    wa = wa_stats.item_paired_bootstrap(d, base, 2500, 7, 0.9)
    # a matrix product (BLAS): its last bits follow the BLAS build numpy ships with, nothing of ours
    gold_wa = [[float.fromhex(a) for a in row] for row in GOLDEN["winobias_adjectives"]]
    np.testing.assert_allclose(wa, gold_wa, rtol=1e-14, atol=0)
    ms = bias_mod.bootstrap_mu_sigma(bias, 300, 7, 0.9)
    assert {k: [_hex(a) for a in v] for k, v in ms.items()} == GOLDEN["bordia_mu_sigma"]
    words = [str(i) for i in range(41)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        amp = amp_mod.amplification(dict(zip(words, x)), dict(zip(words, y)), bootstrap=300, seed=7)
    assert [_hex(a) for a in amp.bootstrap_ci] == GOLDEN["amplification"]
