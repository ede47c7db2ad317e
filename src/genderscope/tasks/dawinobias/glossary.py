"""DaWinoBias's metric definitions (report glossary and summary); harms as GenDa Lens names them."""

from __future__ import annotations

from genderscope.core.metrics import MetricDoc
from genderscope.core.metrics import docs_by_name
from genderscope.tasks.winobias_kit import occupational_reading

MAIN_HARM = "main effect: stereotyping; bias source: semantic bias"
NUANCE_HARM = "nuance: underrepresentation; bias source: selection bias"

_GES_READING = occupational_reading(
    "recovers the pronoun better when it", "follows", "goes against", MAIN_HARM
)

METRIC_DOCS: dict[str, MetricDoc] = docs_by_name(
    _GES_READING.doc(
        "ges",
        "GES = log2(acc_pro / acc_anti), accuracies of the masked pronoun's gender",
        "0 = no effect; > 0 = better on pro-stereotypical sentences; < 0 = better on anti-stereotypical",
        "log2 ratio (1 = twice as accurate)",
        neutral=0.0,
        max_ci_width=1.0,
    ),
    MetricDoc(
        "acc_*",
        "share of sentences whose top-1 prediction is a pronoun of the gold gender (per condition, and "
        "per pronoun gender with _female / _male)",
        "higher = better",
        "fraction (0 … 1)",
    ),
    MetricDoc(
        "f1_*",
        "F1 of the female or male pronoun class within a condition (GenDa Lens's nuance)",
        "a gap between female and male F1 = one gender recovered worse",
        "fraction (0 … 1)",
        harm=NUANCE_HARM,
    ),
    MetricDoc("n_*", "a count of items, predictions or ties", "exact count, no sampling", "count"),
)
