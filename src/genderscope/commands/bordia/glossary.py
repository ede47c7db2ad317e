"""Metric definitions of ``bordia score`` and ``bordia sweep`` (the report's glossary) and the method's
paper (model cards link it)."""

from __future__ import annotations

from genderscope.core.metrics import MetricDoc
from genderscope.core.metrics import docs_by_name
from genderscope.tasks.references import BORDIA_BOWMAN

REFERENCES = (BORDIA_BOWMAN,)

#: metric definitions of both commands (the report's glossary)
METRIC_DOCS: dict[str, MetricDoc] = docs_by_name(
    MetricDoc(
        "*.mu",
        "μ = mean over scored words of |bias(w)|, bias(w) = ln P(w | female context) / P(w | male context)",
        "0 = no word leans to either gender; larger = more gendered word use (no sign)",
        "nats",
    ),
    MetricDoc(
        "*.sigma", "σ = standard deviation of bias(w) over scored words", "larger = more spread", "nats"
    ),
    MetricDoc(
        "*.beta",
        "β = OLS slope of a word's bias in the model's generated text on its bias in the training corpus",
        "1 = the model reproduces the corpus's bias; > 1 amplifies it; 0 = unrelated",
        "ratio (slope)",
    ),
    MetricDoc("*.intercept", "OLS intercept of the β fit", "bias of the text at corpus bias 0", "nats"),
    MetricDoc(
        "*.n_*", "counts of words scored, dropped or seen with one gender only", "exact count", "count"
    ),
    MetricDoc("*_ppl", "perplexity of the λ-regularised language model", "lower = better fit", "perplexity"),
)
