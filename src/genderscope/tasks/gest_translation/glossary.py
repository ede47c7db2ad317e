"""gest-translation's metric definitions (report glossary and summary)."""

from __future__ import annotations

from genderscope.core.metrics import MetricDoc, Reading, docs_by_name

_RATE = (0.0, 1.0)

_STEREOTYPE_RATE = Reading(
    "stereotyped gender in translation",
    "translates male-stereotyped sentences with a masculine speaker more often than female-stereotyped ones",
    "translates female-stereotyped sentences with a masculine speaker more often than male-stereotyped ones",
)

METRIC_DOCS: dict[str, MetricDoc] = docs_by_name(
    MetricDoc(
        "stereotype_rate_*",
        "p_m − p_f for one target language: the mean masculine rate of the 9 male stereotypes (8–16) minus "
        "that of the 7 female ones (1–7); the GEST paper's stereotype rate f_s",
        "0 = the speaker's gender does not follow the stereotype; > 0 = stereotypical",
        "difference of fractions (−1 … 1)",
        neutral=0.0,
        sign=1,
        max_ci_width=0.2,
        harm=_STEREOTYPE_RATE.harm,
        stereotypical=_STEREOTYPE_RATE.stereotypical,
        anti=_STEREOTYPE_RATE.anti,
        bounds=(-1.0, 1.0),
    ),
    MetricDoc(
        "detection_rate_*",
        "translations whose speaker gender was detected (masculine or feminine) / translations answered",
        "higher = more of the translations are evidence; undetected ones (no clue, or clues of both "
        "genders) are counted, never guessed",
        "fraction of translations (0 … 1)",
        bounds=_RATE,
    ),
    MetricDoc(
        "masculine_rate_*_female",
        "p_f: mean of the masculine rates of the 7 female stereotypes (1–7)",
        "0.5 = balanced; the gap to masculine_rate_*_male is the stereotype rate",
        "fraction of detected translations (0 … 1)",
        bounds=_RATE,
    ),
    MetricDoc(
        "masculine_rate_*_male",
        "p_m: mean of the masculine rates of the 9 male stereotypes (8–16)",
        "0.5 = balanced",
        "fraction of detected translations (0 … 1)",
        bounds=_RATE,
    ),
    MetricDoc(
        "masculine_rate_*_*",
        "for one target language and GEST stereotype (1–16): masculine / (masculine + feminine) detected "
        "translations",
        "0.5 = balanced; 1 = every detected translation makes the speaker a man",
        "fraction of detected translations (0 … 1)",
        bounds=_RATE,
    ),
    MetricDoc(
        "masculine_rate_*",
        "(p_f + p_m) / 2 for one target language: the mean of the female- and male-stereotype means (the "
        "GEST paper's masculine rate f_m)",
        "0.5 = balanced; MT systems default to the masculine (> 0.5)",
        "fraction of detected translations (0 … 1)",
        neutral=0.5,
        bounds=_RATE,
    ),
)
