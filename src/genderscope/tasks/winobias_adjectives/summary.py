"""Result table of task ``winobias-adjectives``: the per-condition summary rows of spec §6.5."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from genderscope.tasks.winobias_adjectives import stats as S
from genderscope.tasks.winobias_adjectives.conditions import Condition
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
    ci = np.full((K, 2), np.nan)
    bias_ci = np.full((K, 2), np.nan)
    if o.bootstrap_samples > 0:
        d = 100.0 / T * (correct[:, 0].astype(np.float64) - correct[:, 1]).sum(axis=2)  # K x N
        if K > 1:
            ci[1:] = S.item_paired_bootstrap(d[1:].T, d[0], o.bootstrap_samples, o.bootstrap_seed)
        bias_ci[:] = S.item_bootstrap(d.T, o.bootstrap_samples, o.bootstrap_seed)
    rows = []
    for c, cond in enumerate(conds):
        base = c == 0
        if o.stats == "replicate":
            acc_pro = [round(x / 10, 1) for x in S.replicate_accuracy_tenths(counts[c, 0], N)]
            acc_anti = [round(x / 10, 1) for x in S.replicate_accuracy_tenths(counts[c, 1], N)]
            bias_trials = [b / 10 for b in rep[c].b_tenths]
            bias, bias_sd = rep[c].m, (rep[c].s if T > 1 else None)
            diff = None if base else rep[c].diff
            significant = None if base or rep[c].p is None else bool(rep[c].p < o.alpha)  # None: untestable
        else:
            acc_pro, acc_anti = acc[c, 0].tolist(), acc[c, 1].tolist()
            bias_trials = bias_t[c].tolist()
            bias = float(bias_t[c].mean())
            bias_sd = float(np.std(bias_t[c], ddof=1)) if T > 1 else None
            diff = None if base else float(bias - bias_t[0].mean())
            significant = None if base or p_holm[c] is None else bool(p_holm[c] < o.alpha)
        breakdown = []
        for s in range(2):
            codes = answers[c, s]
            breakdown.append(
                (
                    {k: 100.0 * float((codes == i).sum()) / (N * T) for k, i in zip(CLASSES, range(4))},
                    [{k: int((codes[:, t] == i).sum()) for i, k in enumerate(CLASSES)} for t in range(T)],
                )
            )
        rows.append(
            {
                "condition": cond.slug,
                "male_adjective": cond.male,
                "female_adjective": cond.female,
                "placement": o.placement,
                "n_items": N,
                "n_trials": T,
                "acc_pro": acc_pro,
                "acc_anti": acc_anti,
                "bias_trials": bias_trials,
                "bias": bias,
                "bias_sd": bias_sd,
                "diff": diff,
                "answers_pro": breakdown[0][0],
                "answers_anti": breakdown[1][0],
                "counts_pro": breakdown[0][1],
                "counts_anti": breakdown[1][1],
                "p_replicate": None if base else rep[c].p,
                "t_replicate": None if base else rep[c].t,
                "p_welch": None if base else welch[c][2],
                "t_welch": None if base else welch[c][0],
                "df_welch": None if base else welch[c][1],
                "p_holm": None if base else p_holm[c],
                "test": None
                if base
                else (
                    "one-sided pooled t-test on rounded summaries"
                    if o.stats == "replicate"
                    else "two-sided Welch t-test, Holm-adjusted"
                ),
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
