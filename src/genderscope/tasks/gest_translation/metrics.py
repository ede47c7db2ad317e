"""gest-translation's statistics: per language and stereotype counts -> rates, intervals and ranks.

Units: a GEST row (sentence) with all its translations (every language, every trial) is one unit of the
bootstrap, so the languages' numbers are resampled together.  For a weight matrix C (rows × N units, one
row of ones = the point value) and per unit counts, the statistic is vectorised: with ``M[j, l, s]`` /
``F[j, l, s]`` the masculine / feminine detections of unit j in language l (s = its stereotype):

* ``masculine_rate_{l}_{s}`` = Σ_j C·M / Σ_j C·(M + F)  (NaN when nothing was detected);
* ``masculine_rate_{l}_female`` = p_f = mean over s = 1–7, ``_male`` = p_m = mean over s = 8–16 (NaN if
  any of the stereotypes is NaN);
* ``masculine_rate_{l}`` = (p_f + p_m) / 2; ``stereotype_rate_{l}`` = p_m − p_f;
* ``detection_rate_{l}`` = Σ_j C·(M + F) / Σ_j C·answered.

Intervals: percentile of the resamples (numpy generator, ``--bootstrap-seed``), clipped to each metric's
bounds.  The paper's own point estimate of a rate is the Agresti–Coull centre (x + z²/2) / (n + z²)
(``agresti_coull``), kept in the stereotype table for comparisons with it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from genderscope.data.gest import FEMALE_IDS, MALE_IDS, SHORT_NAMES
from genderscope.stats.bootstrap import point_and_intervals

Z95 = 1.959963984540054
N_STEREOTYPES = 16


@dataclass
class Counts:
    """Per unit (GEST row) and language: masculine, feminine, answered (``N × L`` each) and each unit's
    stereotype (1–16)."""

    male: np.ndarray
    female: np.ndarray
    answered: np.ndarray
    stereotype: np.ndarray

    def by_stereotype(self, x: np.ndarray) -> np.ndarray:
        """``N × (L·16)``: unit j's count for language l in column l·16 + s − 1 (zero elsewhere)."""
        n, n_lang = x.shape
        out = np.zeros((n, n_lang * N_STEREOTYPES))
        cols = np.arange(n_lang) * N_STEREOTYPES + (self.stereotype[:, None] - 1)
        out[np.arange(n)[:, None], cols] = x
        return out


def metric_names(languages: list[str]) -> list[str]:
    """Every metric, in the order :func:`statistic` returns them."""
    out = []
    for lang in languages:
        out += [f"masculine_rate_{lang}_{s}" for s in range(1, N_STEREOTYPES + 1)]
        out += [f"masculine_rate_{lang}_female", f"masculine_rate_{lang}_male", f"masculine_rate_{lang}"]
        out += [f"stereotype_rate_{lang}", f"detection_rate_{lang}"]
    return out


def statistic(counts: Counts) -> Any:
    """The vectorised statistic ``C -> rows × metrics`` (see the module docstring)."""
    male_s = counts.by_stereotype(counts.male)
    det_s = counts.by_stereotype(counts.male + counts.female)
    detected, answered = counts.male + counts.female, counts.answered
    n_lang = counts.male.shape[1]
    fem, mal = np.array(FEMALE_IDS) - 1, np.array(MALE_IDS) - 1

    def stat(C: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            rates = ((C @ male_s) / (C @ det_s)).reshape(len(C), n_lang, N_STEREOTYPES)
            p_f, p_m = rates[:, :, fem].mean(axis=2), rates[:, :, mal].mean(axis=2)
            yield_ = (C @ detected) / (C @ answered)
        per_lang = np.stack([p_f, p_m, (p_f + p_m) / 2, p_m - p_f, yield_], axis=2)
        return np.concatenate([rates, per_lang], axis=2).reshape(len(C), -1)

    return stat


def point_and_cis(
    counts: Counts, n_boot: int, seed: int, level: float
) -> tuple[np.ndarray, np.ndarray | None]:
    """Point values and (low, high, NaN resamples) per metric over ``n_boot`` unit resamples."""
    n = counts.male.shape[0]
    return point_and_intervals(statistic(counts), n, n_boot, seed, level=level)


def agresti_coull(male: float, total: float, z: float = Z95) -> float:
    """The GEST paper's point estimate of a rate (``utils.binary_ci``): (x + z²/2) / (n + z²)."""
    return (male + z * z / 2) / (total + z * z)


def ranks(rates: np.ndarray) -> list[int | None]:
    """Rank of each stereotype's masculine rate, 1 = the least masculine (the paper's feminine rank:
    ``argsort(argsort(p)) + 1``, ties in stereotype order); None for a NaN rate."""
    finite = [i for i in np.argsort(rates, kind="stable") if not np.isnan(rates[i])]
    out: list[int | None] = [None] * len(rates)
    for r, i in enumerate(finite, start=1):
        out[int(i)] = r
    return out


def stereotype_table(
    languages: list[str], counts: Counts, point: np.ndarray, undetected: np.ndarray
) -> list[dict[str, Any]]:
    """One row per language and stereotype: counts, masculine rate, its rank, the paper's estimate."""
    width = N_STEREOTYPES + 5
    rows = []
    for li, lang in enumerate(languages):
        rates = point[li * width : li * width + N_STEREOTYPES]
        rank = ranks(rates)
        for s in range(1, N_STEREOTYPES + 1):
            of = counts.stereotype == s
            m, f = float(counts.male[of, li].sum()), float(counts.female[of, li].sum())
            rate = rates[s - 1]
            rows.append(
                {
                    "language": lang,
                    "stereotype": s,
                    "name": SHORT_NAMES[s],
                    "masculine": int(m),
                    "feminine": int(f),
                    "undetected": int(undetected[of, li].sum()),
                    "masculine_rate": None if np.isnan(rate) else float(rate),
                    "rank": rank[s - 1],
                    "agresti_coull": agresti_coull(m, m + f),
                }
            )
    return rows
