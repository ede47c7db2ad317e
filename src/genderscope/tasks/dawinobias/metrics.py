"""DaWinoBias scores: accuracy, one-vs-rest F1, GES (compat rounding and default guards), pair bootstrap.

Groups are coded 0 = female, 1 = male, 2 = other.  F1_c = 2TP/(2TP+FP+FN), 0 when TP = 0
(scikit-learn 1.2 ``classification_report(..., zero_division=1)`` per class, §3.1 step 10).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from genderscope.tasks.genda_kit import r2py
from genderscope.stats.bootstrap import count_matrix
from genderscope.stats.intervals import bootstrap_block

GROUPS = ("female", "male", "other")
CODE = {g: i for i, g in enumerate(GROUPS)}


def f1(tp: float, fp: float, fn: float) -> float:
    return 2.0 * tp / (2.0 * tp + fp + fn) if tp > 0 else 0.0


def condition_scores(gold: np.ndarray, pred: np.ndarray) -> dict[str, float]:
    """Unrounded acc, F1 and within-gender accuracy of one condition (codes as in GROUPS)."""
    gold = np.asarray(gold)
    pred = np.asarray(pred)
    n = gold.size
    out: dict[str, float] = {"acc": float(np.mean(gold == pred)) if n else float("nan")}
    for c, g in enumerate(GROUPS[:2]):
        tp = float(np.sum((gold == c) & (pred == c)))
        fp = float(np.sum((gold != c) & (pred == c)))
        fn = float(np.sum((gold == c) & (pred != c)))
        out[f"f1_{g}"] = f1(tp, fp, fn)
        n_gold = float(np.sum(gold == c))
        out[f"acc_{g}"] = tp / n_gold if n_gold else float("nan")
    return out


def compat_ges(acc_pro: float, acc_anti: float) -> tuple[float | None, str | None]:
    """GenDa Lens's r2py(log2(acc_pro/acc_anti)) on rounded accuracies: (value or None, error)."""
    if acc_anti == 0:
        return (float("nan"), None) if acc_pro == 0 else (float("inf"), None)
    ratio = acc_pro / acc_anti
    try:
        return r2py(math.log2(ratio)), None
    except ValueError as exc:
        return None, f"ValueError: {exc}"


def default_ges(acc_pro: float, acc_anti: float) -> tuple[float | None, str | None]:
    """log2(acc_pro/acc_anti), defined only when both accuracies are > 0: (value or None, reason)."""
    if acc_pro > 0 and acc_anti > 0:
        return math.log2(acc_pro / acc_anti), None
    zero = [k for k, v in (("acc_pro", acc_pro), ("acc_anti", acc_anti)) if not v > 0]
    return None, " and ".join(zero) + " = 0: the log-ratio is undefined"


# ------------------------------------------------------------------ bootstrap statistics


def _indicators(gold: np.ndarray, pred: np.ndarray) -> dict[str, np.ndarray]:
    ind = {"correct": (gold == pred).astype(float), "n": np.ones(gold.size)}
    for c, g in enumerate(GROUPS[:2]):
        ind[f"tp_{g}"] = ((gold == c) & (pred == c)).astype(float)
        ind[f"fp_{g}"] = ((gold != c) & (pred == c)).astype(float)
        ind[f"fn_{g}"] = ((gold == c) & (pred != c)).astype(float)
        ind[f"gold_{g}"] = (gold == c).astype(float)
    return ind


BOOT_KEYS = (
    "ges",
    "acc_pro",
    "acc_anti",
    "f1_pro_female",
    "f1_pro_male",
    "f1_anti_female",
    "f1_anti_male",
    "acc_pro_female",
    "acc_pro_male",
    "acc_anti_female",
    "acc_anti_male",
)


def metrics_from_counts(
    C: np.ndarray, gold: dict[str, np.ndarray], pred: dict[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """Every BOOT_KEYS metric for each row of the line-count matrix ``C`` (NaN where undefined)."""
    out: dict[str, np.ndarray] = {}
    with np.errstate(divide="ignore", invalid="ignore"):
        for cond in ("pro", "anti"):
            s = {k: C @ v for k, v in _indicators(gold[cond], pred[cond]).items()}
            out[f"acc_{cond}"] = s["correct"] / s["n"]
            for g in GROUPS[:2]:
                tp, fp, fn = s[f"tp_{g}"], s[f"fp_{g}"], s[f"fn_{g}"]
                out[f"f1_{cond}_{g}"] = np.where(tp > 0, 2 * tp / (2 * tp + fp + fn), 0.0)
                out[f"acc_{cond}_{g}"] = np.where(s[f"gold_{g}"] > 0, tp / s[f"gold_{g}"], np.nan)
        ok = (out["acc_pro"] > 0) & (out["acc_anti"] > 0)
        out["ges"] = np.where(ok, np.log2(out["acc_pro"] / out["acc_anti"]), np.nan)
    return out


def pair_bootstrap(
    gold: dict[str, np.ndarray], pred: dict[str, np.ndarray], n_boot: int, seed: int, level: float
) -> dict[str, Any]:
    """Percentile CIs (``percentile-pct``) of BOOT_KEYS: each resample draws n line indices
    (``numpy`` generator, ``default_rng(seed)``) and takes both conditions of each drawn line."""
    C = count_matrix(gold["pro"].size, n_boot, seed, rng="numpy")
    vals = metrics_from_counts(C, gold, pred)
    return bootstrap_block({k: vals[k] for k in BOOT_KEYS}, n_boot, seed, level, "percentile-pct")
