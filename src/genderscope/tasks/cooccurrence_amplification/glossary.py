"""Metric definitions of ``cooccurrence-amplification`` (report glossary and summary)."""

from __future__ import annotations

from genderscope.core.metrics import MetricDoc
from genderscope.core.metrics import docs_by_name

HARM = "stereotype amplification: the text ties words to one gender as its corpus does, or more"

# β and μ are descriptive (no no-bias value, no direction), as bordia's are (report/bordia.py): the
# unigram null model's β is not 0 (≈ 0.2-0.5 with --min-count 1, docs/decisions.md, issue 14) and μ is a
# mean of |bias|, whose interval never covers 0, so a "biased" state against 0 would be wrong for every
# model, the null model included. Read β against the reference row and a null run.


def _docs() -> dict[str, MetricDoc]:
    docs: list[MetricDoc] = []
    for ctx in ("fixed", "infinite"):
        docs += [
            MetricDoc(
                f"{ctx}.beta",
                "OLS slope of bias_generated(w) on bias_corpus(w) over the words scored in both, "
                "bias(w) = ln P(w|F)/P(w|M) in the co-occurrence counts",
                "0 = unrelated to the corpus's associations; 1 = reproduces them; > 1 = amplifies them; "
                "read against the reference row and a null run",
                "slope (nats per nat)",
                harm=HARM,
            ),
            MetricDoc(
                f"{ctx}.reference.beta",
                "β of the corpus's own continuations of the same prefixes (the baseline row)",
                "≈ 1 when the corpus bias is estimated well; a model's β is read against it",
                "slope (nats per nat)",
            ),
            MetricDoc(
                f"{ctx}.mu",
                "mean over scored words of |ln P(w|F)/P(w|M)| in the generated text",
                "0 = no gendered co-occurrence; larger = more gendered word use",
                "nats",
                harm="gendered word associations in generated text",
            ),
            MetricDoc(
                f"{ctx}.sigma", "population sd of the signed per-word bias", "spread of the bias", "nats"
            ),
        ]
    return docs_by_name(*docs)


METRIC_DOCS: dict[str, MetricDoc] = _docs()
