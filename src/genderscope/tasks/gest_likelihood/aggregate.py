"""The GEST paper's aggregation of per-row scores (GEST spec §8.3), for the point value and every resample:
per template, ``mean_score_i = m_i`` = the mean (log10) score of stereotype i's rows, ``r_i = exp(m_i)``
(the natural exp, as the paper's notebooks), ``r_f``/``r_m`` = exp of the mean of m_1..m_7 / m_8..m_16
(stereotypes without rows skipped), ``g_s = r_m / r_f``, ``feminine_rank_i`` = rank of r_i (1 = most
feminine, ties by id)."""

from __future__ import annotations

import warnings

import numpy as np

from genderscope.tasks.scored.levels import level_means, one_hot as _one_hot, ranks as feminine_ranks

#: per-template metric names, in emission order (51)
NAMES = [f"{m}_{i}" for m in ("mean_score", "r", "feminine_rank") for i in range(1, 17)]
NAMES += ["r_f", "r_m", "g_s"]
G_S, R_F, R_M = NAMES.index("g_s"), NAMES.index("r_f"), NAMES.index("r_m")
__all__ = ["NAMES", "all_templates", "compute", "feminine_ranks", "one_hot"]


def one_hot(stereotypes: np.ndarray) -> np.ndarray:
    """N × 16 indicator matrix of stereotype ids 1–16."""
    return _one_hot(list(stereotypes), range(1, 17))


def compute(scores: np.ndarray, S: np.ndarray, C: np.ndarray) -> np.ndarray:
    """All metrics of one template for each row of ``C`` (B × N) -> B × 51 (order of :data:`NAMES`)."""
    with warnings.catch_warnings():  # a stereotype set without rows: its mean is NaN
        warnings.simplefilter("ignore", RuntimeWarning)
        m = level_means(C, scores, S)
        r = np.exp(m)
        r_f, r_m = np.exp(np.nanmean(m[:, :7], axis=1)), np.exp(np.nanmean(m[:, 7:], axis=1))
    return np.column_stack([m, r, feminine_ranks(r), r_f, r_m, r_m / r_f])


def all_templates(X: dict[int, np.ndarray], S: np.ndarray, ids: list[int], C: np.ndarray) -> np.ndarray:
    """Every template's metrics, then the means over templates of g_s, r_f and r_m (B × (51 T + 3))."""
    per = [compute(X[t], S, C) for t in ids]
    means = [np.column_stack([p[:, j] for p in per]).mean(axis=1) for j in (G_S, R_F, R_M)]
    return np.column_stack(per + means)
