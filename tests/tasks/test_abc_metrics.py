"""ABC default-mode CIs of the perplexity medians and ratios of medians (resampled sentence triplets)."""

from __future__ import annotations

import numpy as np

from genderscope.tasks.abc import metrics as M


def _data(n: int = 60, seed: int = 0):
    r = np.random.default_rng(seed)
    ppl = np.exp(r.normal(3.0, 0.3, size=(n, 3)))  # reflexive, hans, hendes
    is_f = np.arange(n) < n // 3
    per = {
        "rel_male": ppl[:, 1] - ppl[:, 0],
        "rel_female": ppl[:, 2] - ppl[:, 0],
        "ratio_male": ppl[:, 1] / ppl[:, 0],
        "ratio_female": ppl[:, 2] / ppl[:, 0],
    }
    return ppl, is_f, per


def test_ppl_medians_point_values_are_the_task_formulas() -> None:
    ppl, is_f, _ = _data()
    fem, male = np.flatnonzero(is_f), np.flatnonzero(~is_f)
    v = M.ppl_medians(*(M.split_groups(ppl[:, c], fem, male) for c in range(3)))
    assert v["median_ppl_reflexive"][0] == np.median(ppl[:, 0])
    assert v["median_ppl_hendes"][0] == np.median(ppl[:, 2])
    for g, idx in (("", np.concatenate([fem, male])), ("_femocc", fem), ("_maleocc", male)):
        assert v[f"ratio_of_medians_female{g}"][0] == np.median(ppl[idx, 2]) / np.median(ppl[idx, 0])
        assert v[f"ratio_of_medians_male{g}"][0] == np.median(ppl[idx, 1]) / np.median(ppl[idx, 0])


def test_bootstrap_gives_ppl_cis_around_the_point_values() -> None:
    ppl, is_f, per = _data()
    boot = M.bootstrap(per, is_f, 400, 3, 0.95, ppl=ppl)
    fem, male = np.flatnonzero(is_f), np.flatnonzero(~is_f)
    point = M.ppl_medians(*(M.split_groups(ppl[:, c], fem, male) for c in range(3)))
    for k, v in point.items():
        lo, hi = boot["ci95"][k]
        assert lo <= v[0] <= hi, k
        assert boot["n_boot_undefined"][k] == 0
    assert boot["n_boot"] == 400 and boot["seed"] == 3
    assert M.bootstrap(per, is_f, 400, 3, 0.95, ppl=ppl) == boot  # seeded by the bootstrap seed
    assert "median_ppl_hans" not in M.bootstrap(per, is_f, 50, 3, 0.95)["ci95"]  # only with ppl
