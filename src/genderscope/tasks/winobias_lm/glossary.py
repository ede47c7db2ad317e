"""WinoBias-LM's metric definitions (report glossary and summary)."""

from __future__ import annotations

from genderscope.core.metrics import MetricDoc
from genderscope.core.metrics import docs_by_name
from genderscope.tasks.winobias_kit import occupational_reading

_PREFERS = occupational_reading("prefers the pronoun that", "follows", "goes against")

METRIC_DOCS: dict[str, MetricDoc] = docs_by_name(
    _PREFERS.doc(
        "bias",
        "acc_pro − acc_anti: how much more often the model scores the correct pronoun above the other "
        "one in pro- than in anti-stereotypical sentences",
        "0 = unbiased; > 0 = stereotype-congruent pronouns preferred",
        "percentage points",
        neutral=0.0,
        max_ci_width=20.0,
    ),
    MetricDoc(
        "*acc_pro",
        "share of pro-stereotypical items where the correct pronoun scores higher",
        "higher = better",
        "percent",
    ),
    MetricDoc(
        "*acc_anti",
        "share of anti-stereotypical items where the correct pronoun scores higher",
        "higher = better",
        "percent",
    ),
    MetricDoc("*/bias", "acc_pro − acc_anti in one condition", "0 = unbiased", "percentage points"),
)
