"""Result table of task ``winobias-adjectives``: the per-condition summary rows of spec §6.5."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from genderscope.stats.jackknife import JACKKNIFE_T
from genderscope.tasks.winobias_adjectives import stats as S
from genderscope.data.winobias_conditions import Condition
from genderscope.tasks.winobias_adjectives.options import WinoBiasAdjectivesOptions
from genderscope.tasks.winobias_adjectives.parse_strict import CLASSES


def summarise(
    answers: np.ndarray, conds: Sequence[Condition], o: WinoBiasAdjectivesOptions
) -> list[dict[str, Any]]:
    """Per-condition rows of spec §6.5 from class codes ``answers[c, s, l, t]`` (0 = correct).

    Accuracies, bias (acc(pro) - acc(anti)) and diffs are in percentage points; condition 0 is
    the baseline.
    """
    K, _, N, T = answers.shape
    correct = answers == 0
    counts = correct.sum(axis=2)  # K x 2 x T
    acc = 100.0 * counts / N
    bias_t = acc[:, 0, :] - acc[:, 1, :]  # K x T
    rep = [S.replicate_summary(counts[c, 0], counts[c, 1], N) for c in range(K)]
    for c in range(1, K):
        S.replicate_test(rep[c], rep[0], T)
    welch = [S.welch_p(bias_t[c], bias_t[0]) if c else (None, None, None) for c in range(K)]
    p_holm = [None] + S.holm_adjust([w[2] for w in welch[1:]])
    ci, bias_ci = _intervals(correct, o)
    rows = []
    for c, cond in enumerate(conds):
        base = c == 0
        if o.stats == "replicate":
            bias_cols = _replicate_columns(rep[c], counts[c], N, T, base, o.alpha)
        else:
            bias_cols = _welch_columns(acc[c], bias_t, c, p_holm[c], o.alpha)
        significant = bias_cols.pop("significant")
        rows.append(
            {
                "condition": cond.slug,
                "male_adjective": cond.male,
                "female_adjective": cond.female,
                "placement": o.placement,
                "n_items": N,
                "n_trials": T,
                **bias_cols,
                **_answer_breakdown(answers[c], N, T),
                **_test_columns(rep[c], welch[c], p_holm[c], base, o.stats),
                "bias_ci95_low": None if np.isnan(bias_ci[c, 0]) else float(bias_ci[c, 0]),
                "bias_ci95_high": None if np.isnan(bias_ci[c, 1]) else float(bias_ci[c, 1]),
                "ci95_low": None if base or np.isnan(ci[c, 0]) else float(ci[c, 0]),
                "ci95_high": None if base or np.isnan(ci[c, 1]) else float(ci[c, 1]),
                "significant": significant,
                "stats_mode": o.stats,
                "parse_mode": o.parser,
            }
        )
    return rows


def _intervals(correct: np.ndarray, o: WinoBiasAdjectivesOptions) -> tuple[np.ndarray, np.ndarray]:
    """(K x 2 CIs of each condition's diff from the baseline, K x 2 CIs of each bias); NaN with
    ``--bootstrap-samples 0``.  The unit is the line: its pro − anti accuracy over its trials, in
    percentage points; ``--ci-method`` jackknife-t (default: Student's t over lines) or percentile (the
    item-level paired bootstrap)."""
    K, _, N, T = correct.shape
    ci = np.full((K, 2), np.nan)
    bias_ci = np.full((K, 2), np.nan)
    if o.bootstrap_samples == 0:
        return ci, bias_ci
    d = 100.0 / T * (correct[:, 0].astype(np.float64) - correct[:, 1]).sum(axis=2)  # K x N
    if o.ci_method == JACKKNIFE_T:
        if K > 1:
            ci[1:] = S.item_jackknife_t((d[1:] - d[0]).T, o.bootstrap_seed)
        bias_ci[:] = S.item_jackknife_t(d.T, o.bootstrap_seed)
        return ci, bias_ci
    if K > 1:
        ci[1:] = S.item_paired_bootstrap(d[1:].T, d[0], o.bootstrap_samples, o.bootstrap_seed)
    bias_ci[:] = S.item_bootstrap(d.T, o.bootstrap_samples, o.bootstrap_seed)
    return ci, bias_ci


def _replicate_columns(
    rep: S.ReplicateStats, counts: np.ndarray, N: int, T: int, base: bool, alpha: float
) -> dict[str, Any]:
    """Accuracies and bias as the replicate mode rounds them (spec §6.2)."""
    return {
        "acc_pro": [round(x / 10, 1) for x in S.replicate_accuracy_tenths(counts[0], N)],
        "acc_anti": [round(x / 10, 1) for x in S.replicate_accuracy_tenths(counts[1], N)],
        "bias_trials": [b / 10 for b in rep.b_tenths],
        "bias": rep.m,
        "bias_sd": rep.s if T > 1 else None,
        "diff": None if base else rep.diff,
        "significant": None if base or rep.p is None else bool(rep.p < alpha),  # None: untestable
    }


def _welch_columns(
    acc: np.ndarray, bias_t: np.ndarray, c: int, p_holm: float | None, alpha: float
) -> dict[str, Any]:
    """Accuracies and bias unrounded, condition ``c`` against the baseline (row 0 of ``bias_t``)."""
    T = bias_t.shape[1]
    bias = float(bias_t[c].mean())
    return {
        "acc_pro": acc[0].tolist(),
        "acc_anti": acc[1].tolist(),
        "bias_trials": bias_t[c].tolist(),
        "bias": bias,
        "bias_sd": float(np.std(bias_t[c], ddof=1)) if T > 1 else None,
        "diff": None if c == 0 else float(bias - bias_t[0].mean()),
        "significant": None if c == 0 or p_holm is None else bool(p_holm < alpha),
    }


def _answer_breakdown(codes: np.ndarray, N: int, T: int) -> dict[str, Any]:
    """Share of each answer class (percent) and per-trial counts, pro (0) and anti (1) lines."""
    shares = {
        f"answers_{side}": {k: 100.0 * float((codes[s] == i).sum()) / (N * T) for i, k in enumerate(CLASSES)}
        for s, side in enumerate(("pro", "anti"))
    }
    per_trial = {
        f"counts_{side}": [
            {k: int((codes[s][:, t] == i).sum()) for i, k in enumerate(CLASSES)} for t in range(T)
        ]
        for s, side in enumerate(("pro", "anti"))
    }
    out = {**shares, **per_trial}
    return out


def _test_columns(
    rep: S.ReplicateStats, welch: tuple[Any, Any, Any], p_holm: float | None, base: bool, stats: str
) -> dict[str, Any]:
    """Both tests against the baseline (None for the baseline itself) and which one decides."""
    test = (
        "one-sided pooled t-test on rounded summaries"
        if stats == "replicate"
        else "two-sided Welch t-test, Holm-adjusted"
    )
    return {
        "p_replicate": None if base else rep.p,
        "t_replicate": None if base else rep.t,
        "p_welch": None if base else welch[2],
        "t_welch": None if base else welch[0],
        "df_welch": None if base else welch[1],
        "p_holm": None if base else p_holm,
        "test": None if base else test,
    }
