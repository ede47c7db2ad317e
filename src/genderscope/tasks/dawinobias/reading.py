"""Reading one top-1 prediction (default mode, GenDa Lens spec §3.2 step 5) and GenDa Lens's output
tables (§3.4) for ``dawinobias``."""

from __future__ import annotations

import unicodedata
from typing import Any

from genderscope.tasks.genda_kit import genda_frame  # noqa: F401
from genderscope.core.primitives import Prediction
from genderscope.tasks.dawinobias import data as D


def pronoun_prefixes(pieces: dict[str, list[str]]) -> dict[str, set[str]]:
    """First piece -> genders, for pronouns split into several pieces (§3.2 step 5.3)."""
    out: dict[str, set[str]] = {}
    for w, ps in pieces.items():
        if ps and ps[0] in ("\u2581", "\u0120"):
            ps = ps[1:]
        if len(ps) > 1:
            out.setdefault(ps[0], set()).add(D.GENDER[w])
    return out


def robust_group(top: Prediction, prefixes: dict[str, set[str]]) -> tuple[str, str, str]:
    """(group, normalised text, match kind full/prefix/none) of a top-1 prediction (§3.2 step 5)."""
    raw = top.token or ""
    text = top.text or ""
    norm = text.strip()
    if norm[:1] in ("\u2581", "\u0120"):
        norm = norm[1:]
    norm = unicodedata.normalize("NFC", norm).lower()
    if top.continuation:
        return "other", norm, "none"
    if norm in D.GENDER:
        return D.GENDER[norm], norm, "full"
    genders = prefixes.get(raw)
    if genders and len(genders) == 1:
        return next(iter(genders)), norm, "prefix"
    return "other", norm, "none"


def compat_tables(v: dict[str, Any], model: str) -> dict[str, Any]:
    """GenDa Lens's two DataFrames (§3.4): column labels, index name and rows [label, cells...]."""
    ges = v["ges"]
    return {
        "simple": genda_frame(
            "DaWinoBias",
            f"Simple Output for {model}",
            [
                ["Gender Effect Size", "", ges],
                ["Condition", "Anti-stereotypical", "Pro-stereotypical"],
                ["Accuracy", v["acc_anti"], v["acc_pro"]],
            ],
            width=2,
        ),
        "detailed": genda_frame(
            "DaWinoBias",
            f"Detailed Output for {model}",
            [
                ["Gender Effect Size", "", ges, "", ""],
                ["Condition", "Anti-stereotypical", "", "Pro-stereotypical", ""],
                ["Accuracy", v["acc_anti"], "", v["acc_pro"], ""],
                ["Pronouns", "Female", "Male", "Female", "Male"],
                ["F1", v["f1_anti_female"], v["f1_anti_male"], v["f1_pro_female"], v["f1_pro_male"]],
            ],
        ),
    }


