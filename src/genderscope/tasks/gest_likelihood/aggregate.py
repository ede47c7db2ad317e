"""GEST paper aggregation (GEST spec §8.3) for the point value and all resamples at once.

Per template, with per-row scores ``x_j`` (log10 likelihood differences, male − female; NaN rows left
out), stereotypes ``s_j`` and a weight matrix ``C`` (rows × dataset rows): ``m_i`` = weighted mean of x_j
over rows with s_j = i (``mean_score_i``); ``r_i = exp(m_i)`` (the natural exp of a mean of log10 scores,
as the paper's notebooks do); ``r_f = exp(mean m_1..m_7)``, ``r_m = exp(mean m_8..m_16)`` (15 included),
``g_s = r_m / r_f`` (stereotypes without rows are skipped by the means); ``feminine_rank_i = 1 + #{k: r_k <
r_i} + #{k < i: r_k = r_i}`` (1 = most feminine; NaN where r_i is NaN).
"""

from __future__ import annotations

import warnings

import numpy as np

FEMALE, MALE = slice(0, 7), slice(7, 16)
#: per-template metric names, in emission order (51)
NAMES = [f"{m}_{i}" for m in ("mean_score", "r", "feminine_rank") for i in range(1, 17)]
NAMES += ["r_f", "r_m", "g_s"]
G_S, R_F, R_M = NAMES.index("g_s"), NAMES.index("r_f"), NAMES.index("r_m")


def one_hot(stereotypes: np.ndarray) -> np.ndarray:
    """N × 16 indicator matrix of stereotype ids 1–16."""
    s = np.asarray(stereotypes, dtype=np.int64)
    S = np.zeros((s.size, 16))
    S[np.arange(s.size), s - 1] = 1.0
    return S


def feminine_ranks(r: np.ndarray) -> np.ndarray:
    """Ascending ranks (1 = smallest r) along the last axis; exact ties broken by id; NaN stays NaN."""
    r = np.asarray(r, dtype=np.float64)
    a, b, ids = r[..., :, None], r[..., None, :], np.arange(r.shape[-1])
    smaller = (b < a) | ((b == a) & (ids[None, :] < ids[:, None]))
    return np.where(np.isnan(r), np.nan, 1.0 + smaller.sum(axis=-1))


def compute(scores: np.ndarray, S: np.ndarray, C: np.ndarray) -> np.ndarray:
    """All metrics of one template for each row of ``C`` (B × N) -> B × 51 (order of :data:`NAMES`)."""
    x = np.asarray(scores, dtype=np.float64)
    valid = ~np.isnan(x)
    num = C @ (S * np.where(valid, x, 0.0)[:, None])  # B × 16
    den = C @ (S * valid[:, None])
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        m = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
        r = np.exp(m)
        r_f, r_m = np.exp(np.nanmean(m[:, FEMALE], axis=1)), np.exp(np.nanmean(m[:, MALE], axis=1))
    return np.column_stack([m, r, feminine_ranks(r), r_f, r_m, r_m / r_f])


def all_templates(X: dict[int, np.ndarray], S: np.ndarray, ids: list[int], C: np.ndarray) -> np.ndarray:
    """Every template's metrics, then the means over templates of g_s, r_f and r_m (B × (51 T + 3))."""
    per = [compute(X[t], S, C) for t in ids]
    means = [np.column_stack([p[:, j] for p in per]).mean(axis=1) for j in (G_S, R_F, R_M)]
    return np.column_stack(per + means)
