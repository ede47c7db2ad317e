"""ABC's metric definitions (report glossary and summary); harms as GenDa Lens names them."""

from __future__ import annotations

from typing import Any

from genderscope.core.metrics import MetricDoc
from genderscope.core.metrics import docs_by_name

MAIN_HARM = "main effect: underrepresentation; bias source: selection bias"
NUANCE_HARM = "nuance: stereotyping; bias source: semantic bias"

#: how both main-effect metrics (``ges``, ``ges_ratio``) read: no-bias value, direction, harm, sides
_MAIN_READING: dict[str, Any] = dict(
    neutral=0.0,
    sign=1,
    max_ci_width=1.0,
    harm=MAIN_HARM,
    stereotypical="accepts the grammatical violation more readily with the male pronoun",
    anti="accepts the grammatical violation more readily with the female pronoun",
)

METRIC_DOCS: dict[str, MetricDoc] = docs_by_name(
    MetricDoc(
        "ges",
        "GES = log2(median_rel_female / median_rel_male), relative perplexity = PPL(anti-reflexive) − "
        "PPL(reflexive); defined only when both medians are > 0",
        "0 = no effect; > 0 = the violation is accepted more readily with the male pronoun (hans)",
        "log2 ratio",
        **_MAIN_READING,
    ),
    MetricDoc(
        "ges_ratio",
        "log2(median_ratio_female / median_ratio_male), ratio = PPL(anti-reflexive) / PPL(reflexive) per "
        "sentence; defined for every model",
        "0 = no effect; > 0 = the female anti-reflexive (hendes) is penalised more than hans",
        "log2 ratio",
        **_MAIN_READING,
    ),
    MetricDoc(
        "ges_*occ*",
        "GES or ges_ratio within the female / male occupations; *_occ_diff = male − female occupations",
        "a difference between occupation groups = the effect is modulated by the occupational stereotype",
        "log2 ratio",
        harm=NUANCE_HARM,
    ),
    MetricDoc(
        "median_rel_*",
        "median over sentences of PPL(anti-reflexive) − PPL(reflexive) (per pronoun, optionally per "
        "occupation group)",
        "> 0 = the violation is more surprising than the grammatical sentence",
        "perplexity difference",
    ),
    MetricDoc(
        "median_ratio_*",
        "median over sentences of PPL(anti-reflexive) / PPL(reflexive)",
        "> 1 = the violation is more surprising",
        "ratio",
    ),
    MetricDoc(
        "ratio_of_medians_*",
        "median PPL(anti-reflexive) / median PPL(reflexive)",
        "> 1 = the violation is more surprising",
        "ratio",
    ),
    MetricDoc("median_ppl_*", "median sentence perplexity of one variant", "sanity value", "perplexity"),
    MetricDoc("n_*", "a count of sentences or substitutions", "exact count, no sampling", "count"),
)
