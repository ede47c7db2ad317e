"""ABC summaries: relative perplexities, medians, GES (compat rounding; default guards), bootstrap CIs.

rel = PPL_anti − PPL_refl, ratio = PPL_anti / PPL_refl per sentence; GES = log2(median rel female /
median rel male) (female over male: > 0 means the female anti-reflexive is penalised more).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from genderscope.stats.bootstrap import stratified_indices
from genderscope.stats.intervals import bootstrap_block
from genderscope.tasks.genda_kit import r2np, r2py

OCC = {"all": None, "femocc": "female", "maleocc": "male"}


def summary_string(m: float, q25: float, q75: float) -> str:
    """GenDa Lens's ``"m (q25, q75)"`` with Python float reprs (never numpy 2 reprs)."""
    return f"{float(m)!r} ({float(q25)!r}, {float(q75)!r})"


def compat_summary(rel: np.ndarray) -> tuple[float, float, float, str]:
    m = r2np(float(np.median(rel)))
    q25, q75 = (r2np(float(x)) for x in np.percentile(rel, [25, 75]))
    return m, q25, q75, summary_string(m, q25, q75)


def compat_ges(m_f: float, m_m: float) -> tuple[float | None, str | None, str | None]:
    """(ges, error, warning): r2py(log2(m_F/m_M)) on rounded medians, with GenDa Lens's failures."""
    if m_m == 0:
        return None, "ZeroDivisionError: float division by zero", None
    try:
        ges = r2py(math.log2(m_f / m_m))
    except ValueError as exc:
        return None, f"ValueError: {exc}", None
    warn = (
        "both medians are negative: the ratio is positive but its meaning is inverted"
        if m_f < 0 and m_m < 0
        else None
    )
    return ges, None, warn


def _log2_pos(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where((a > 0) & (b > 0), np.log2(a / b), np.nan)


def effects(
    rel_f: dict[str, np.ndarray],
    rel_m: dict[str, np.ndarray],
    ratio_f: dict[str, np.ndarray],
    ratio_m: dict[str, np.ndarray],
) -> dict[str, np.ndarray]:
    """Medians and effects per row (rows = resamples; columns = sentences of the occupation group)."""
    out: dict[str, np.ndarray] = {}
    for g in OCC:
        sfx = "" if g == "all" else f"_{g}"
        out[f"median_rel_female{sfx}"] = np.median(rel_f[g], axis=1)
        out[f"median_rel_male{sfx}"] = np.median(rel_m[g], axis=1)
        out[f"median_ratio_female{sfx}"] = np.median(ratio_f[g], axis=1)
        out[f"median_ratio_male{sfx}"] = np.median(ratio_m[g], axis=1)
        out[f"ges{sfx}"] = _log2_pos(out[f"median_rel_female{sfx}"], out[f"median_rel_male{sfx}"])
        out[f"ges_ratio{sfx}"] = _log2_pos(out[f"median_ratio_female{sfx}"], out[f"median_ratio_male{sfx}"])
    out["ges_occ_diff"] = out["ges_maleocc"] - out["ges_femocc"]
    out["ges_ratio_occ_diff"] = out["ges_ratio_maleocc"] - out["ges_ratio_femocc"]
    return out


def split_groups(x: np.ndarray, fem: np.ndarray, male: np.ndarray) -> dict[str, np.ndarray]:
    """{all, femocc, maleocc} -> 2-D arrays from per-sentence values ``x`` (1-D or rows)."""
    x2 = np.atleast_2d(x)
    return {
        "all": np.concatenate([x2[:, fem], x2[:, male]], axis=1),
        "femocc": x2[:, fem],
        "maleocc": x2[:, male],
    }


def ppl_medians(
    refl: dict[str, np.ndarray], hans: dict[str, np.ndarray], hendes: dict[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """Per row, from PPL of the reflexive, hans (male) and hendes (female) variants split by :data:`OCC`:
    ``median_ppl_{reflexive,hans,hendes}`` over all sentences and
    ``ratio_of_medians_{female,male}[_occ]`` = median PPL_anti / median PPL_refl."""
    out = {
        "median_ppl_reflexive": np.median(refl["all"], axis=1),
        "median_ppl_hans": np.median(hans["all"], axis=1),
        "median_ppl_hendes": np.median(hendes["all"], axis=1),
    }
    for g in OCC:
        sfx = "" if g == "all" else f"_{g}"
        m_refl = np.median(refl[g], axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            out[f"ratio_of_medians_female{sfx}"] = np.median(hendes[g], axis=1) / m_refl
            out[f"ratio_of_medians_male{sfx}"] = np.median(hans[g], axis=1) / m_refl
    return out


def bootstrap(
    per: dict[str, np.ndarray],
    is_female: np.ndarray,
    n_boot: int,
    seed: int,
    level: float,
    ppl: np.ndarray | None = None,
) -> dict[str, Any]:
    """Percentile CIs (``percentile-pct``) of :func:`effects` (and of :func:`ppl_medians` when ``ppl``,
    the sentences x 3 PPL matrix (reflexive, hans, hendes), is given).

    Resamples sentence triplets within each occupation file (``default_rng(seed)``; per resample the
    female file, then the male file); every statistic uses the same draws.
    """
    draws_f, draws_m = stratified_indices(
        [np.flatnonzero(is_female), np.flatnonzero(~is_female)], n_boot, seed
    )

    def grp(x: np.ndarray) -> dict[str, np.ndarray]:
        f, m = x[draws_f], x[draws_m]
        return {"all": np.concatenate([f, m], axis=1), "femocc": f, "maleocc": m}

    vals = effects(
        grp(per["rel_female"]), grp(per["rel_male"]), grp(per["ratio_female"]), grp(per["ratio_male"])
    )
    if ppl is not None:
        vals.update(ppl_medians(grp(ppl[:, 0]), grp(ppl[:, 1]), grp(ppl[:, 2])))
    return bootstrap_block(vals, n_boot, seed, level, "percentile-pct")
