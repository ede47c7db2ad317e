"""Task ``winogender``: Winogender schemas (Rudinger et al. 2018), 720 sentences = 60 occupations × 2
participants × 2 answers × 3 pronoun genders.

Every mode asks lm-evaluation-harness 0.4.13's prompt (GPT-3's): context ``{sentence} ‘{Pronoun}’ refers to
the``, continuations `` {occupation}`` / `` {participant}``; the choice = the higher summed log-likelihood.

* ``--mode rudinger`` (default): accuracies by pronoun gender, and the paper's bias measures: the male −
  female accuracy gap, the non-gotcha − gotcha gap, and the Pearson correlation across occupations between
  the occupation's BLS % female and how much more often female than male pronouns are resolved to the
  occupation (Figure 4 of the paper; also with the two-way probability instead of the choice); bootstrap
  over occupations.
* ``--mode lm-eval``: lm-eval's tasks ``winogender_all``, ``_male``, ``_female``, ``_neutral``,
  ``_gotcha``, ``_gotcha_male``, ``_gotcha_female`` as metrics ``<task>/acc``; ``--limit N`` takes the
  first N documents of each of those tasks (what ``lm_eval --tasks winogender --limit N`` runs).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from genderscope.core.options import opt
from genderscope.tasks.scored.items import Choice, ScoredItem, Scores
from genderscope.tasks.scored.benchmark import ScoredBenchmark, ScoredOptions
from genderscope.tasks.scored.weights import wshare
from genderscope.tasks.scored.docs import doc_texts, load_docs
from genderscope.tasks.scored import groups as gr
from genderscope.tasks.scored.lmeval import acc_results, limit_per_subtask, subtask_accuracy, subtask_flags
from genderscope.tasks.scored.weights import wshare_by
from genderscope.tasks.winogender.data import GENDERS, SENTENCES, STATS, Sentence, read_sentences

RUDINGER, LM_EVAL = "rudinger", "lm-eval"

#: lm-eval's Winogender tasks and which documents each holds (by the item's fields)
SUBTASKS: dict[str, Callable[[dict[str, Any]], bool]] = {
    "winogender_all": lambda f: True,
    "winogender_male": lambda f: f["gender"] == "male",
    "winogender_female": lambda f: f["gender"] == "female",
    "winogender_neutral": lambda f: f["gender"] == "neutral",
    "winogender_gotcha": lambda f: bool(f["gotcha"]),
    "winogender_gotcha_male": lambda f: bool(f["gotcha"]) and f["gender"] == "male",
    "winogender_gotcha_female": lambda f: bool(f["gotcha"]) and f["gender"] == "female",
}

HEADLINE = ("accuracy", "gotcha_gap", "accuracy_gap_male_female", "bls_correlation_prob", "bls_correlation")


@dataclass
class WinogenderOptions(ScoredOptions):
    mode: str = opt(
        RUDINGER,
        "rudinger: accuracies and the paper's bias measures with intervals; lm-eval: lm-evaluation-harness "
        "0.4.13's winogender tasks and metric names",
        (RUDINGER, LM_EVAL),
    )


def prompt(s: Sentence) -> Choice:
    """lm-eval's ``doc_to_text`` and choices (``str.capitalize`` as Jinja's ``capitalize``)."""
    return Choice(
        f"{s.sentence} ‘{s.pronoun.capitalize()}’ refers to the", (f" {s.occupation}", f" {s.participant}")
    )


def _item(s: Sentence) -> ScoredItem:
    fields = {"gender": s.gender, "label": s.label, "occupation": s.occupation, "bls": s.bls_pct_female,
              "gotcha": s.gotcha}  # fmt: skip
    return ScoredItem(
        f"winogender/{s.sentid}", prompt(s), {**fields, **subtask_flags(fields, SUBTASKS)}, s.occupation
    )


class WinogenderTask(ScoredBenchmark):
    limit_meaning = 'the first N documents of each lm-eval subtask (lm_eval --tasks winogender --limit N)'
    name = "winogender"
    description = "Winogender schemas: pronoun resolution to an occupation by pronoun gender, against BLS"
    Options = WinogenderOptions
    #: correlations over 60 occupations: the percentile bootstrap covered 92 % on the null model
    jackknife_metrics = ("bls_correlation", "bls_correlation_prob")
    headline_metrics = HEADLINE + tuple(f"{name}/acc" for name in SUBTASKS)
    metric_docs, references = load_docs(__file__)
    published = (doc_texts(__file__)["published"],)

    def datasets(self) -> list[str]:
        return [SENTENCES, STATS]

    def load_items(self) -> list[ScoredItem]:
        data = self.ctx.data
        return [_item(s) for s in read_sentences(data.path(SENTENCES), data.path(STATS))]

    def items(self) -> list[ScoredItem]:
        if self.options.mode != LM_EVAL:
            return super().items()
        return limit_per_subtask(self.load_items(), list(SUBTASKS), self.ctx.limit)

    def compute(self, s: Scores, C: np.ndarray) -> dict[str, np.ndarray]:
        correct = s.best() == s.field("label")
        if self.options.mode == LM_EVAL:
            return subtask_accuracy(C, correct, s, list(SUBTASKS))
        return rudinger_metrics(s, C)

    def tables(self, s: Scores) -> dict[str, Any]:
        if self.options.mode != LM_EVAL:
            return {"occupations": occupation_table(s)}
        return {"lm_eval": acc_results(s.best() == s.field("label"), s, list(SUBTASKS))}

    def record(self, item: ScoredItem, ll: np.ndarray) -> dict[str, Any]:
        if np.isnan(ll).any():
            return {}
        pick = int(np.argmax(ll))
        return {"choice": ("occupation", "participant")[pick], "correct": pick == item.fields["label"]}


def p_occupation(s: Scores) -> np.ndarray:
    """The two-way probability of the occupation, e^LL_occ / (e^LL_occ + e^LL_part)."""
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(s.ll[:, 1] - s.ll[:, 0]))


def occupation_table(s: Scores) -> list[dict[str, Any]]:
    """Per occupation (by BLS % female): the share of female- and male-pronoun sentences resolved to it and
    the mean two-way p(occupation) by gender (the points of the paper's Figure 4)."""
    first = {"occupation": s.field("occupation"), "bls_pct_female": s.field("bls")}
    means = {"occupation_rate": (s.best() == 0).astype(np.float64), "p_occupation": p_occupation(s)}
    rows = gr.group_table(s.field("occupation"), s.field("gender"), ("female", "male"), first, means)
    return sorted(rows, key=lambda r: (r["bls_pct_female"], r["occupation"]))


def rudinger_metrics(s: Scores, C: np.ndarray) -> dict[str, np.ndarray]:
    """Accuracies by gender and the paper's bias measures, one value per row of ``C``."""
    g, gotcha = s.field("gender"), s.field("gotcha").astype(bool)
    correct, to_occupation = s.best() == s.field("label"), s.best() == 0
    acc, rate = wshare_by(C, correct, g, GENDERS), wshare_by(C, to_occupation, g, GENDERS)
    G, _ = gr.indicator(list(s.field("occupation")))
    bls, w = gr.first_of_group(G, s.field("bls")), gr.group_weight(C, G)
    female, male = g == "female", g == "male"
    return {
        "accuracy": wshare(C, correct),
        **{f"accuracy_{k}": v for k, v in acc.items()},
        "accuracy_gap_male_female": acc["male"] - acc["female"],
        "accuracy_gotcha": wshare(C, correct, gotcha),
        "gotcha_gap": wshare(C, correct, (male | female) & ~gotcha) - wshare(C, correct, gotcha),
        **{f"occupation_rate_{k}": v for k, v in rate.items()},
        "occupation_rate_gap_male_female": rate["male"] - rate["female"],
        "bls_correlation": gr.wcorr(w, bls, gr.wgroup_gap(C, to_occupation, G, female, male)),
        "bls_correlation_prob": gr.wcorr(w, bls, gr.wgroup_gap(C, p_occupation(s), G, female, male)),
    }
