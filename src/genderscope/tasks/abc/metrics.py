"""ABC summaries: relative perplexities, medians, GES (compat rounding; default guards), bootstrap.

rel = PPL_anti − PPL_refl, ratio = PPL_anti / PPL_refl per sentence; GES = log2(median rel female /
median rel male) (female over male: > 0 means the female anti-reflexive is penalised more).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from genderscope.tasks.dawinobias.metrics import r2np, r2py

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


def bootstrap(
    per: dict[str, np.ndarray], is_female: np.ndarray, n_boot: int, seed: int, level: float
) -> dict[str, Any]:
    """Resample sentences within each occupation file (female first, then male) and recompute effects."""
    fem_idx = np.flatnonzero(is_female)
    male_idx = np.flatnonzero(~is_female)
    rng = np.random.default_rng(seed)
    draws_f = np.empty((n_boot, fem_idx.size), dtype=np.int64)
    draws_m = np.empty((n_boot, male_idx.size), dtype=np.int64)
    for b in range(n_boot):
        draws_f[b] = fem_idx[rng.integers(0, fem_idx.size, fem_idx.size)] if fem_idx.size else []
        draws_m[b] = male_idx[rng.integers(0, male_idx.size, male_idx.size)] if male_idx.size else []

    def grp(x: np.ndarray) -> dict[str, np.ndarray]:
        f, m = x[draws_f], x[draws_m]
        return {"all": np.concatenate([f, m], axis=1), "femocc": f, "maleocc": m}

    vals = effects(
        grp(per["rel_female"]), grp(per["rel_male"]), grp(per["ratio_female"]), grp(per["ratio_male"])
    )
    ci: dict[str, Any] = {}
    undefined: dict[str, int] = {}
    for k, v in vals.items():
        good = v[~np.isnan(v)]
        undefined[k] = int(v.size - good.size)
        ci[k] = (
            [float(x) for x in np.percentile(good, [100 * (1 - level) / 2, 100 * (1 + level) / 2])]
            if good.size
            else [None, None]
        )
    return {"ci95": ci, "n_boot": n_boot, "seed": seed, "level": level, "n_boot_undefined": undefined}
