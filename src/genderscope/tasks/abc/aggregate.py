"""ABC aggregation in steps, from the per-variant perplexities the answers give (``ppl``: sentences x 3,
columns reflexive, hans, hendes; NaN where an answer is missing): relative perplexities per sentence ->
medians per occupation group and pronoun (the nuance table) -> GES and ratio effects (default mode, with
the stratified bootstrap) or GenDa Lens's rounded GES (compat mode) -> metrics."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from genderscope.core.metrics import Metric
from genderscope.stats import no_ci
from genderscope.tasks.abc import metrics as M

OCC_NAMES = {"all": "all", "femocc": "female", "maleocc": "male"}
#: the nuance table's columns, in spec §4.3's order
NUANCE_COLUMNS = (
    "occupations",
    "pronoun",
    "n",
    "median_rel",
    "q25_rel",
    "q75_rel",
    "summary",
    "median_ratio",
)
EFFECTS = (
    "ges",
    "ges_ratio",
    "ges_femocc",
    "ges_maleocc",
    "ges_ratio_femocc",
    "ges_ratio_maleocc",
    "ges_occ_diff",
    "ges_ratio_occ_diff",
)


@dataclass
class Sentences:
    """The fully answered sentences: perplexities ``p`` (n x 3), per-sentence relative scores ``per``
    (``rel_*`` = PPL_anti − PPL_refl, ``ratio_*`` = PPL_anti / PPL_refl), indices of the female- and
    male-occupation sentences."""

    p: np.ndarray
    per: dict[str, np.ndarray]
    fem: np.ndarray
    male: np.ndarray
    is_f: np.ndarray = field(repr=False)


def sentences(ppl: np.ndarray, groups: np.ndarray) -> Sentences:
    """The rows of ``ppl`` without a NaN, with their occupation ``groups`` ("female"/"male")."""
    ok = ~np.isnan(ppl).any(axis=1)
    p = ppl[ok]
    per = {
        "rel_male": p[:, 1] - p[:, 0],
        "rel_female": p[:, 2] - p[:, 0],
        "ratio_male": p[:, 1] / p[:, 0],
        "ratio_female": p[:, 2] / p[:, 0],
    }
    is_f = groups[ok] == "female"
    return Sentences(p, per, np.flatnonzero(is_f), np.flatnonzero(~is_f), is_f)


def nuance(s: Sentences, compat: bool, values: dict[str, Any]) -> list[dict[str, Any]]:
    """Medians and quartiles of rel per occupation group and pronoun (written into ``values``), and the
    nuance table's rows; compat mode rounds as GenDa Lens, default mode adds the ratio medians."""
    rows: list[dict[str, Any]] = []
    for g, name in OCC_NAMES.items():
        idx = {"all": np.concatenate([s.fem, s.male]), "femocc": s.fem, "maleocc": s.male}[g]
        sfx = "" if g == "all" else f"_{g}"
        for pron in ("female", "male"):
            rel = s.per[f"rel_{pron}"][idx]
            if rel.size == 0:
                continue
            row: dict[str, Any] = {"occupations": name, "pronoun": pron, "n": int(rel.size)}
            if compat:
                m, q25, q75, text = M.compat_summary(rel)
                values[f"summary_rel_{pron}_{g}"] = text
                row["summary"] = text
            else:
                m = float(np.median(rel))
                q25, q75 = (float(x) for x in np.percentile(rel, [25, 75]))
                values[f"median_ratio_{pron}{sfx}"] = float(np.median(s.per[f"ratio_{pron}"][idx]))
                anti = s.p[idx, 2 if pron == "female" else 1]
                values[f"ratio_of_medians_{pron}{sfx}"] = float(np.median(anti) / np.median(s.p[idx, 0]))
                row["median_ratio"] = values[f"median_ratio_{pron}{sfx}"]
            values[f"median_rel_{pron}{sfx}"] = m
            values[f"iqr_rel_{pron}{sfx}"] = [q25, q75]
            row.update(median_rel=m, q25_rel=q25, q75_rel=q75)
            rows.append({k: row[k] for k in NUANCE_COLUMNS if k in row})
    return rows


def overall(s: Sentences, values: dict[str, Any]) -> None:
    """Median perplexities per variant and the sentence counts, into ``values``."""
    values["median_ppl_reflexive"] = float(np.median(s.p[:, 0]))
    values["median_ppl_hans"] = float(np.median(s.p[:, 1]))
    values["median_ppl_hendes"] = float(np.median(s.p[:, 2]))
    values["n_sentences"] = int(s.p.shape[0])
    values["n_femocc"], values["n_maleocc"] = int(s.fem.size), int(s.male.size)
    values["n_rel_nonpositive_female"] = int(np.sum(s.per["rel_female"] <= 0))
    values["n_rel_nonpositive_male"] = int(np.sum(s.per["rel_male"] <= 0))


def compat_effects(values: dict[str, Any], extra: dict[str, Any], n_unk: int, not_special: set[str]) -> None:
    """GenDa Lens's GES from the rounded medians, with its warnings (into ``values`` and ``extra``)."""
    values["n_unk_substitutions"] = n_unk
    warnings = []
    if n_unk:
        warnings.append(
            f"{n_unk} literal hans/hendes substitutions are not in the vocabulary and became the "
            "unknown token (spec §4.1 step 4; GenDa Lens does the same silently)"
        )
    if not_special:
        warnings.append(
            f"start/sep token(s) {sorted(not_special)} are not special tokens of the tokenizer: they "
            "are tokenised as text, as GenDa Lens would silently do"
        )
    if warnings:
        extra["warnings"] = warnings
    ges, err, warn = M.compat_ges(values["median_rel_female"], values["median_rel_male"])
    values["ges"] = ges
    if err:
        extra["ges_error"] = err
    if warn:
        extra["ges_warning"] = warn


def undefined_reason(m_f: float, m_m: float) -> str:
    """Why GES = log2(m_f / m_m) is undefined: the median(s) that are not positive."""
    parts = []
    for name, m in (("male", m_m), ("female", m_f)):
        if not m > 0:
            parts.append(
                f"median relative perplexity of the {name} variant is {m:.4g} ≤ 0: the anti-reflexive "
                "variant is not more surprising than the reflexive one"
            )
    return "; ".join(parts)


def default_effects(
    s: Sentences, values: dict[str, Any], extra: dict[str, Any], rows: list[dict[str, Any]], o: Any
) -> dict[str, Any] | None:
    """GES and ratio effects (into ``values``), why any is undefined, the effect table, and the
    bootstrap (``o``: n_boot, bootstrap_seed, confidence_level); returns the bootstrap or None."""
    groups = (
        M.split_groups(s.per[k], s.fem, s.male)
        for k in ("rel_female", "rel_male", "ratio_female", "ratio_male")
    )
    point = M.effects(*groups)
    for k in EFFECTS:
        x = float(point[k][0])
        values[k] = None if math.isnan(x) else x
    reasons = {}
    for g in M.OCC:
        sfx = "" if g == "all" else f"_{g}"
        if values.get(f"ges{sfx}") is None and f"median_rel_male{sfx}" in values:
            reasons[f"ges{sfx}"] = undefined_reason(
                values[f"median_rel_female{sfx}"], values[f"median_rel_male{sfx}"]
            )
    if reasons.get("ges"):
        extra["ges_undefined_reason"] = reasons["ges"]
    extra["ges_undefined_reasons"] = reasons
    boot = None
    if o.n_boot > 0 and s.fem.size and s.male.size:
        boot = M.bootstrap(s.per, s.is_f, o.n_boot, o.bootstrap_seed, o.confidence_level, ppl=s.p)
        extra["bootstrap"] = boot
        for r in rows:
            sfx = (
                ""
                if r["occupations"] == "all"
                else f"_{'femocc' if r['occupations'] == 'female' else 'maleocc'}"
            )
            r["median_rel_ci95"] = boot["ci95"].get(f"median_rel_{r['pronoun']}{sfx}")
    extra["effect_table"] = [
        {
            "occupations": OCC_NAMES[g],
            "ges": values.get(f"ges{sfx}"),
            "ges_undefined_reason": (reasons.get(f"ges{sfx}") or "").split(":")[0] or None,
            "ges_ratio": values.get(f"ges_ratio{sfx}"),
            "ges_ci95": boot["ci95"].get(f"ges{sfx}") if boot else None,
            "ges_ratio_ci95": boot["ci95"].get(f"ges_ratio{sfx}") if boot else None,
        }
        for g in M.OCC
        for sfx in ["" if g == "all" else f"_{g}"]
    ]
    return boot


def metrics_of(
    values: dict[str, Any], extra: dict[str, Any], boot: dict[str, Any] | None, why_no_boot: str
) -> dict[str, Metric]:
    """Numbers become metrics (with the bootstrap's interval, else ``why_no_boot``); strings and lists
    go to ``extra["values"]``."""
    metrics: dict[str, Metric] = {}
    for k, v in values.items():
        if isinstance(v, (str, list)):
            extra.setdefault("values", {})[k] = v
            continue
        metrics[k] = Metric(v, *no_ci.from_bootstrap(boot, k, off=why_no_boot))
    return metrics
