"""Task ``winobias-lm``: the English WinoBias pro/anti pairs for masked and causal LMs.

The pairs, flags and exclusions come from the shared loader (:mod:`genderscope.data.winobias`),
the adjective conditions and their insertion from ``winobias-adjectives`` (``--conditions``,
``--placement``).  Per sentence the model predicts the gender of the referring pronoun
(``--scoring``, resolved from the model's primitives when ``auto`` and recorded resolved):

* ``top1`` (masked LMs, DaWinoBias style), three rounds of primitive requests: ``tokenize`` {text: ""}
  gives the tokenizer's mask string M; ``tokenize`` {left + M + right, with special tokens} gives the
  model input (a lone boundary piece before M is dropped, see :func:`.items.mask_slot`); ``fill_mask``
  {ids, position, top_k: 1}.  The unrestricted top-1 token is mapped to a gender group (he/him/his/
  himself -> male, she/her/hers/herself -> female, anything else, including word continuations,
  -> other = wrong);
* ``loglik`` (causal LMs: ``token_logprobs``) / ``pll`` (masked LMs: ``masked_logprobs``, mask each),
  together ``candidates``: the sentence with the pair's female pronoun vs with its male pronoun (the pro
  and anti lines of a pair differ only there), one request per sentence, summed by
  :mod:`genderscope.tasks.scoring` (LL resp. PLL, nats); the larger score wins, an exact tie is ``other``.

In every form the model input of a pair's pro and anti item is identical (only the gold pronoun
differs), so each question is asked once and acc_pro + acc_anti = 100 − (share of ``other``
predictions); bias > 0 = the model prefers the stereotype-congruent pronoun.

Pairs whose lines have more than one pronoun span (e.g. "... he needed to cut his hair") are left
out of both forms: a second, visible pronoun would give the answer away (counted in ``counts``).

Metrics (percent, percentage points), per condition c: ``<c>/acc_pro``, ``<c>/acc_anti``,
``<c>/bias = acc_pro − acc_anti``, and for c ≠ baseline ``<c>/diff = bias(c) − bias(none_none)``;
``acc_pro``, ``acc_anti``, ``bias`` without prefix are the baseline's.  CIs: bootstrap over line
pairs (a drawn line brings its pro and anti items in every condition), genderscope.stats.bootstrap.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from genderscope.common.errors import UsageError
from genderscope.core.primitives import (
    MASKED_LOGPROBS,
    TOKEN_LOGPROBS,
    FillMask,
    Tokens,
    fill_mask_request,
    text_score_request,
    tokenize_request,
)
from genderscope.core.requests import Attempt, AttemptResult
from genderscope.core.rounds import Answers, Round, Rounds
from genderscope.core.metrics import Metric
from genderscope.core.metrics import revised
from genderscope.core.task import Task, TaskResult
from genderscope.core.evidence import ReportFacts
from genderscope.tasks.winobias_lm.glossary import METRIC_DOCS
from genderscope.data.winobias_records import WinoBiasSet
from genderscope.data.winobias import load_pairs
from genderscope.stats import no_ci
from genderscope.stats.bootstrap import PYTHON, point_and_intervals
from genderscope.stats.rules import UnitScores
from genderscope.tasks.scoring import sentence_score
from genderscope.data.winobias_conditions import BASELINE, select_conditions
from genderscope.tasks.winobias_lm.items import (
    RECORD_KEYS,
    Item,
    build_items,
    candidate_words,
    mask_slot,
    pronoun_group,
)
from genderscope.tasks.winobias_lm.options import (
    GROUPS,
    LOGLIK,
    MEASUREMENTS,
    TOP1,
    WinoBiasLMOptions,
)
from genderscope.tasks.references import WINOBIAS

__all__ = ["WinoBiasLMTask", "WinoBiasLMOptions", "pronoun_group"]

NULL_CHOICES = ["he", "she", "him", "her", "his", "it", "they"]
#: the attempts.jsonl field naming what an attempt asks: a top-1 round, or the candidate's gender group
STEP = "step"
#: the rounds of top-1 scoring (their names are the ``step`` of their attempts' records)
SPECIALS, TOKENS, FILL = "specials", "tokenize", "fill_mask"
#: ``Attempt.meta["candidate"]`` of candidate scoring: whose pronoun the sentence holds
FEMALE, MALE = "female", "male"


@dataclass
class Decisions:
    """The items' predictions: ``correct`` / ``valid`` (K conditions x 2 (pro, anti) x N pairs), the
    prediction fields per item's last attempt (``outcome``), failed items, ties, predicted groups."""

    correct: np.ndarray
    valid: np.ndarray
    outcome: dict[int, dict[str, Any]] = field(default_factory=dict)
    failed: int = 0
    ties: int = 0
    predicted: dict[str, int] = field(default_factory=lambda: {g: 0 for g in ("female", "male", "other")})


class WinoBiasLMTask(Task):
    name = "winobias-lm"
    description = (
        "WinoBias (English) for masked/causal LMs: pronoun fill-in accuracy, pro vs anti, with adjectives"
    )
    Options = WinoBiasLMOptions
    metric_docs = revised(
        METRIC_DOCS,
        bounds={
            "bias": (-100.0, 100.0),
            "*acc_pro": (0.0, 100.0),
            "*acc_anti": (0.0, 100.0),
            "*/bias": (-100.0, 100.0),
        },
        chance={"bias": 0.0},
    )
    report_facts = ReportFacts(evidence=("counts.pairs",), evidence_unit="pairs")
    references = (WINOBIAS,)
    measurements = MEASUREMENTS

    measurement_option = "scoring"
    measurement_groups = GROUPS

    def __init__(self, options: Any, ctx: Any):
        super().__init__(options, ctx)
        self.conds = select_conditions(self.options.conditions)

    # ---------------------------------------------------------------- items

    def _load(self) -> tuple[WinoBiasSet, int]:
        """The line pairs evaluated (single pronoun span, ``--limit``) and how many were left out for
        having several pronoun spans."""
        o = self.options
        s = load_pairs(self.ctx.data, o.release, o.type, o.split, o.exclude_set)
        single = [p for p in s.pairs if len(p.pro.pronoun_ranges) == 1 and len(p.anti.pronoun_ranges) == 1]
        n_multi = len(s.pairs) - len(single)
        s.pairs = single[: self.ctx.limit] if self.ctx.limit is not None else single
        if not s.pairs:
            raise UsageError("winobias-lm: no pairs left to evaluate (check --limit and --exclude)")
        return s, n_multi

    def datasets(self) -> list[str]:
        return list(self._load()[0].files)

    def _prefix(self) -> str:
        o = self.options
        return f"winobias-lm/{o.release}/type{o.type}-{o.split}"

    def _items(self) -> list[Item]:
        return list(build_items(self._load()[0], self.conds, self.options.placement, self._prefix()))

    # ---------------------------------------------------------------- rounds

    def rounds(self) -> Rounds:
        if self.options.scoring == TOP1:
            return Rounds(
                Round(SPECIALS, self._ask_specials),
                Round(TOKENS, self._ask_inputs),
                Round(FILL, self._ask_fills),
            )
        return Rounds(Round("candidates", self._ask_candidates))

    def _ask_candidates(self, _: Answers) -> list[Attempt]:
        """The sentence with each candidate pronoun, scored whole (LL or PLL)."""
        kind = TOKEN_LOGPROBS if self.options.scoring == LOGLIK else MASKED_LOGPROBS
        out: list[Attempt] = []
        for it in self._items():
            for group, w in zip((FEMALE, MALE), candidate_words(it)):
                req = text_score_request(it.left + w + it.right, kind)
                out.append(Attempt(f"{it.item_id}/{group}", 1, req, {**it.meta, "candidate": group}))
        return out

    def _ask_specials(self, _: Answers) -> list[Attempt]:
        """Top-1, round 1: the tokenizer's special tokens (the mask string)."""
        return [Attempt(f"{self._prefix()}/tokenizer", 1, tokenize_request(""))]

    def _ask_inputs(self, answers: Answers) -> list[Attempt]:
        """Top-1, round 2: the model input of every item, the mask string in the pronoun's slot."""
        mask = mask_string(answers.first(SPECIALS))
        return [
            Attempt(
                f"{it.item_id}/tokenize",
                1,
                tokenize_request(it.left + mask + it.right, add_special_tokens=True),
                it.meta,
            )
            for it in self._items()
        ]

    def _ask_fills(self, answers: Answers) -> list[Attempt]:
        """Top-1, round 3: the top-1 prediction at the mask of every input that holds exactly one."""
        mask = mask_string(answers.first(SPECIALS))
        out = []
        for ar in answers.of(TOKENS):
            if not ar.ok:
                continue
            try:
                ids, pos = mask_slot(Tokens.of(ar.response), mask)
            except (ValueError, KeyError, TypeError):
                continue  # scored as a failed item, with the reason
            req = fill_mask_request(ids=ids, position=pos, top_k=1, choices=NULL_CHOICES)
            item_id = ar.attempt.item_id.removesuffix("/tokenize")
            out.append(Attempt(item_id, 1, req, ar.attempt.meta))
        return out

    # ---------------------------------------------------------------- scoring

    def score(self, results: Sequence[AttemptResult]) -> TaskResult:
        o = self.options
        ws, n_multi = self._load()
        N = len(ws.pairs)
        decided, by_item, steps = self._read(results, N)
        records = []
        for i, ar in enumerate(results):
            m = ar.attempt.meta
            rec = {k: m[k] for k in RECORD_KEYS if k in m}
            rec[STEP] = steps[i]
            rec.update(decided.outcome.get(i, {}))
            records.append(rec)
        names = self._metric_names()
        point, cis = self._point_and_intervals(decided.correct, decided.valid, N)
        metrics = {
            n: Metric(float(point[i]), float(cis[i, 0]), float(cis[i, 1]))
            if cis is not None
            else Metric(float(point[i]), no_ci=no_ci.bootstrap_off("bootstrap_cycles"))
            for i, n in enumerate(names)
        }
        for short in ("acc_pro", "acc_anti", "bias"):
            metrics[short] = metrics[f"{BASELINE}/{short}"]
        extra = {
            "scoring": o.scoring,
            "summary": self._summary(point, names),
            "parameters": self._parameters(cis is not None),
            "counts": {
                "pairs": N,
                "excluded_pairs": len(ws.excluded),
                "multi_pronoun_pairs_left_out": n_multi,
                "items": len(by_item),
                "attempts": len(results),
                "failed_attempts": sum(not ar.ok for ar in results),
                "failed_items": decided.failed,
                "ties": decided.ties,
                "predicted": decided.predicted,
                "incomplete": decided.failed > 0,
            },
        }
        head = ["bias", "acc_pro", "acc_anti"] + [f"{c.slug}/diff" for c in self.conds if c.slug != BASELINE][
            :8
        ]
        return TaskResult(metrics=metrics, extra=extra, records=records, headline=head)

    def _read(
        self, results: Sequence[AttemptResult], N: int
    ) -> tuple[Decisions, dict[tuple[int, int, int], list[int]], list[str | None]]:
        """The items' decisions over ``N`` line pairs, the attempts of each item (by condition, label,
        pair) and each attempt's step."""
        plan = self.rounds()
        top1 = self.options.scoring == TOP1
        steps = [plan.name_of(ar) if top1 else ar.attempt.meta.get("candidate") for ar in results]
        by_item: dict[tuple[int, int, int], list[int]] = {}
        for i, ar in enumerate(results):
            m = ar.attempt.meta
            if steps[i] != SPECIALS:
                by_item.setdefault((m["c"], m["s"], m["l"]), []).append(i)
        mask = mask_string(plan.answers(results).first(SPECIALS)) if top1 else ""
        return self._decide(results, by_item, mask, (len(self.conds), 2, N), steps), by_item, steps

    def paired_units(self, results: Sequence[AttemptResult]) -> UnitScores:
        """What ``compare --paired`` resamples: per line pair (id: its line), its correct and valid flags in
        every condition (2 × K × 2 per pair); the metrics are :meth:`_metrics` of them (the full names,
        ``<condition>/...``, without the baseline's short aliases)."""
        ws, _ = self._load()
        decided, _, _ = self._read(results, len(ws.pairs))
        names = self._metric_names()

        def stat(s: np.ndarray, C: np.ndarray) -> dict[str, np.ndarray]:
            m = self._metrics(s[0], s[1], C)
            return {n: m[:, i] for i, n in enumerate(names)}

        ids = [f"{self._prefix()}/{p.line}" for p in ws.pairs]
        return UnitScores(ids, np.stack([decided.correct, decided.valid]), stat)

    def _decide(
        self,
        results: Sequence[AttemptResult],
        by_item: dict[tuple[int, int, int], list[int]],
        mask: str,
        shape: tuple[int, int, int],
        steps: Sequence[str | None],
    ) -> Decisions:
        """Each item's prediction from its answers (pure per item), tallied into K x 2 x N arrays."""
        out = Decisions(np.zeros(shape), np.zeros(shape))
        for (c, s, li), idx in by_item.items():
            rs = [results[i] for i in idx]
            top1 = self.options.scoring == TOP1
            got = decide_top1(rs, [steps[i] for i in idx], mask) if top1 else decide_candidates(rs)
            group = got.get("pred_group")
            if group is None:
                out.failed += 1
            else:
                ok = group == rs[0].attempt.meta["gold_group"]
                out.predicted[group] += 1
                out.ties += got.get("delta_female_minus_male") == 0
                out.correct[c, s, li], out.valid[c, s, li] = ok, 1
                got["correct"] = ok
            out.outcome[idx[-1]] = got
        return out

    def _point_and_intervals(
        self, correct: np.ndarray, valid: np.ndarray, N: int
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """Every metric on all line pairs, and its (low, high) over pair resamples (None: no bootstrap)."""
        o = self.options
        point, iv = point_and_intervals(
            lambda C: self._metrics(correct, valid, C),
            N,
            o.bootstrap_cycles,
            self.ctx.seeds.bootstrap,
            rng=PYTHON,
            method=o.ci_method,
            level=o.confidence_level,
        )
        return point, None if iv is None else iv[:, :2]

    def _summary(self, point: np.ndarray, names: list[str]) -> list[dict[str, Any]]:
        """One row per condition: accuracies (%), bias and its change from the baseline (points)."""
        return [
            {
                "condition": c.slug,
                "male_adjective": c.male,
                "female_adjective": c.female,
                **{k: point[names.index(f"{c.slug}/{k}")] for k in ("acc_pro", "acc_anti", "bias")},
                "diff": point[names.index(f"{c.slug}/diff")] if c.slug != BASELINE else None,
            }
            for c in self.conds
        ]

    def _parameters(self, has_ci: bool) -> dict[str, Any]:
        o = self.options
        return {
            "release": o.release,
            "type": o.type,
            "split": o.split,
            "placement": o.placement,
            "conditions": [c.slug for c in self.conds],
            "exclude": sorted(o.exclude_set),
            "ci_method": o.ci_method if has_ci else None,
            "bootstrap_cycles": o.bootstrap_cycles,
            "confidence_level": o.confidence_level,
            "seed": self.ctx.seed,
            "units": "accuracy in percent, bias and diff in points",
        }

    def _metric_names(self) -> list[str]:
        names = []
        for c in self.conds:
            names += [f"{c.slug}/acc_pro", f"{c.slug}/acc_anti", f"{c.slug}/bias"]
            if c.slug != BASELINE:
                names.append(f"{c.slug}/diff")
        return names

    def _metrics(self, correct: np.ndarray, valid: np.ndarray, C: np.ndarray) -> np.ndarray:
        """All metrics for each row of the line-pair weight matrix C (B x N) -> B x M."""
        with np.errstate(invalid="ignore", divide="ignore"):
            acc = (
                100.0 * np.einsum("bn,ksn->bks", C, correct) / np.einsum("bn,ksn->bks", C, valid)
            )  # B x K x 2
        bias = acc[:, :, 0] - acc[:, :, 1]
        base = next(i for i, c in enumerate(self.conds) if c.slug == BASELINE)
        cols = []
        for k, c in enumerate(self.conds):
            cols += [acc[:, k, 0], acc[:, k, 1], bias[:, k]]
            if c.slug != BASELINE:
                cols.append(bias[:, k] - bias[:, base])
        return np.column_stack(cols)


def mask_string(specials: AttemptResult | None) -> str:
    """The tokenizer's mask string from the round-1 ``tokenize`` answer (UsageError if there is none)."""
    if specials is None or not specials.ok:
        why = specials.error if specials is not None else "no answer"
        raise UsageError(f"winobias-lm --scoring top1: the model's special tokens are unknown ({why})")
    mask = Tokens.of(specials.response).specials.mask
    if not mask:
        raise UsageError("winobias-lm --scoring top1 needs a mask token, the model's tokenizer has none")
    return str(mask)


def decide_top1(rs: list[AttemptResult], steps: list[str], mask: str) -> dict[str, Any]:
    """Prediction fields of a top-1 item from its ``tokenize`` and ``fill_mask`` results (``steps``: the
    round of each)."""
    fill = next((r for r, step in zip(rs, steps) if step == FILL), None)
    if fill is None:  # no fill-in was asked: say why
        tk = rs[0]
        problem = tk.error or "no answer"
        if tk.ok:
            try:
                mask_slot(Tokens.of(tk.response), mask)
            except (ValueError, KeyError, TypeError) as exc:
                problem = str(exc)
        return {"pred_group": None, "correct": None, "problem": problem}
    if not fill.ok:
        return {"pred_group": None, "correct": None}
    try:
        top = FillMask.of(fill.response).top[0]
        return {"pred_token": top.token, "pred_group": pronoun_group(top)}
    except (KeyError, IndexError, TypeError, AttributeError):
        return {"pred_group": None, "correct": None, "bad_response": True}


def decide_candidates(rs: list[AttemptResult]) -> dict[str, Any]:
    """Prediction fields of a candidates item: the female vs the male sentence's LL (or PLL)."""
    by = {r.attempt.meta.get("candidate"): r for r in rs}
    f, m = by.get(FEMALE), by.get(MALE)
    if f is None or m is None or not (f.ok and m.ok):
        return {"pred_group": None, "correct": None}
    try:
        delta = sentence_score(f.answer()).loglik - sentence_score(m.answer()).loglik
    except (KeyError, TypeError, ValueError):
        return {"pred_group": None, "correct": None, "bad_response": True}
    group = "female" if delta > 0 else "male" if delta < 0 else "other"
    return {"delta_female_minus_male": delta, "pred_group": group}
