"""Task ``winobias-lm``: the English WinoBias pro/anti pairs for masked and causal LMs.

The pairs, flags and exclusions come from the shared loader (:mod:`genderscope.datasets.winobias`),
the adjective conditions and their insertion from ``winobias-adjectives`` (``--conditions``,
``--placement``).  Per sentence the model predicts the gender of the referring pronoun:

* masked LMs (``fill_mask``, DaWinoBias style): the pronoun is replaced by the mask token; the
  unrestricted top-1 token is mapped to a gender group (he/him/his/himself -> male, she/her/hers/
  herself -> female, anything else, including word continuations, -> other = wrong);
* causal LMs (``candidates``): the sentence with the pair's female pronoun vs with its male pronoun
  (the pro and anti lines of a pair differ only there); the larger summed log-likelihood wins, an
  exact tie is ``other``.

In both forms the model input of a pair's pro and anti item is identical (only the gold pronoun
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

import unicodedata
from dataclasses import dataclass, replace
from typing import Any, Sequence

import numpy as np

from genderscope.core.errors import UsageError
from genderscope.core.options import opt
from genderscope.core.requests import Attempt, AttemptResult, Request
from genderscope.core.task import Metric, Task, TaskResult
from genderscope.datasets.winobias import (
    LABELS,
    PRONOUN_GENDER,
    RELEASES,
    WinoBiasLine,
    WinoBiasSet,
    load_pairs,
    parse_exclude_flags,
)
from genderscope.stats.bootstrap import bootstrap_counts, intervals
from genderscope.tasks.winobias_adjectives.conditions import (
    BASELINE,
    PLACEMENTS,
    adjectives_for,
    condition_id,
    insert_adjectives,
    select_conditions,
)

FILL_MASK, CANDIDATES = "fill_mask", "candidates"
GENDER = PRONOUN_GENDER
NULL_CHOICES = ["he", "she", "him", "her", "his", "it", "they"]
_SLOT = "\x00"


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
        "top1 = masked-LM fill-in, candidates = compare the two pronouns' sentences; auto picks by model",
        ("auto", "top1", "candidates"),
    )
    ci_method: str = opt("percentile", "bootstrap interval", ("percentile", "normal"))
    bootstrap_cycles: int = opt(1000, "bootstrap resamples of line pairs (0 = no CIs)")
    confidence_level: float = opt(0.95, "confidence level of the intervals")

    def __post_init__(self) -> None:
        if self.type not in (1, 2):
            raise ValueError("--type must be 1 or 2")
        if not 0 < self.confidence_level < 1:
            raise ValueError("--confidence-level must be between 0 and 1")

    @property
    def exclude_set(self) -> frozenset[str]:
        return parse_exclude_flags(self.exclude)


def pronoun_group(top: dict[str, Any]) -> str:
    """male / female / other for a top-1 prediction ({token, text, continuation} of ``fill_mask``)."""
    if top.get("continuation"):
        return "other"
    norm = (
        top.get("text") if top.get("text") is not None else top.get("str") or top.get("token") or ""
    ).strip()
    if norm[:1] in ("\u2581", "\u0120"):
        norm = norm[1:]
    return GENDER.get(unicodedata.normalize("NFC", norm).lower(), "other")


def slot_text(line: WinoBiasLine, adj1: str | None, adj2: str | None) -> tuple[str, str]:
    """(left, right) of the adjective-inserted sentence around the (single) pronoun span."""
    ((s, e),) = line.pronoun_ranges
    placeholder = _SLOT * (e - s)  # same length: the mention offsets stay valid
    marked = replace(line, sentence=line.sentence[:s] + placeholder + line.sentence[e:])
    text = insert_adjectives(marked, adj1, adj2)
    k = text.index(placeholder)
    return text[:k], text[k + len(placeholder) :]


class WinoBiasLMTask(Task):
    name = "winobias-lm"
    description = (
        "WinoBias (English) for masked/causal LMs: pronoun fill-in accuracy, pro vs anti, with adjectives"
    )
    Options = WinoBiasLMOptions
    supports = (FILL_MASK, CANDIDATES)
    measurements = {
        FILL_MASK: "masked pronoun top-1 (he/she group)",
        CANDIDATES: "he-vs-she sentence log-likelihood",
    }

    def __init__(self, options: Any, ctx: Any):
        super().__init__(options, ctx)
        self.conds = select_conditions(options.conditions)
        self._set: WinoBiasSet | None = None

    @property
    def scoring(self) -> str:
        s = self.options.scoring
        if s != "auto":
            return s
        return "top1" if FILL_MASK in self.ctx.request_kinds else "candidates"

    def check_model(self) -> None:
        from genderscope.core.matrix import require_kinds

        require_kinds(
            self,
            [FILL_MASK]
            if self.scoring == "top1"
            else [CANDIDATES]
            if self.options.scoring != "auto"
            else None,
        )

    def wb(self) -> WinoBiasSet:
        if self._set is None:
            o = self.options
            s = load_pairs(self.ctx.data, o.release, o.type, o.split, o.exclude_set)
            single = [
                p for p in s.pairs if len(p.pro.pronoun_ranges) == 1 and len(p.anti.pronoun_ranges) == 1
            ]
            self.n_multi_pronoun = len(s.pairs) - len(single)
            s.pairs = single[: self.ctx.limit] if self.ctx.limit is not None else single
            if not s.pairs:
                raise UsageError("winobias-lm: no pairs left to evaluate (check --limit and --exclude)")
            self._set = s
        return self._set

    def datasets(self) -> list[str]:
        return list(self.wb().files)

    def attempts(self) -> list[Attempt]:
        o = self.options
        ws = self.wb()
        scoring = self.scoring
        prefix = f"winobias-lm/{o.release}/type{o.type}-{o.split}"
        out: list[Attempt] = []
        for ci, cond in enumerate(self.conds):
            cid = condition_id(cond, o.placement)
            for si, label in enumerate(LABELS):
                for li, pair in enumerate(ws.pairs):
                    line = pair.pro if label == "pro" else pair.anti
                    a1, a2 = adjectives_for(line, cond, o.placement)
                    left, right = slot_text(line, a1, a2)
                    words = {GENDER.get(p.pronoun.lower(), "?"): p.pronoun for p in (pair.pro, pair.anti)}
                    if scoring == "top1":
                        req = Request(
                            FILL_MASK,
                            {"left": left, "right": right, "top_k": 1, "drop_boundary_piece": True},
                            hints={"choices": NULL_CHOICES},
                        )
                    else:
                        if set(words) != {"female", "male"}:
                            raise UsageError(
                                f"winobias-lm: line {pair.line}: the pro and anti pronouns "
                                f"({pair.pro.pronoun}, {pair.anti.pronoun}) are not one female "
                                "and one male form; exclude the pair with --exclude"
                            )
                        req = Request(
                            CANDIDATES,
                            {"left": left, "right": right, "candidates": [words["female"], words["male"]]},
                        )
                    meta = {
                        "c": ci,
                        "s": si,
                        "l": li,
                        "line": pair.line,
                        "condition": cond.slug,
                        "label": label,
                        "gold": line.pronoun,
                        "gold_group": line.pronoun_gender,
                        "referent": line.referent,
                        "adjective_entity1": a1,
                        "adjective_entity2": a2,
                        "input": left + "_" + right,
                    }
                    out.append(Attempt(f"{prefix}/{cid}/{label}/{pair.line}", 1, req, meta))
        return out

    def score(self, results: Sequence[AttemptResult]) -> TaskResult:
        o = self.options
        ws = self.wb()
        K, N = len(self.conds), len(ws.pairs)
        correct = np.zeros((K, 2, N))
        valid = np.zeros((K, 2, N))
        records: list[dict[str, Any]] = []
        failed = ties = 0
        preds = {g: 0 for g in ("female", "male", "other")}
        for ar in results:
            m = ar.attempt.meta
            rec = {
                k: m[k]
                for k in (
                    "line",
                    "condition",
                    "label",
                    "gold",
                    "gold_group",
                    "referent",
                    "adjective_entity1",
                    "adjective_entity2",
                    "input",
                )
            }
            if not ar.ok or not isinstance(ar.response, dict):
                failed += 1
                rec.update(pred_group=None, correct=None)
                records.append(rec)
                continue
            r = ar.response
            try:
                if ar.attempt.request.kind == FILL_MASK:
                    top = r["top"][0]
                    group = pronoun_group(top)
                    rec["pred_token"] = top.get("token")
                else:
                    f, mw = ar.attempt.request.payload["candidates"]
                    delta = float(r["loglik"][f]) - float(r["loglik"][mw])
                    group = "female" if delta > 0 else "male" if delta < 0 else "other"
                    ties += delta == 0
                    rec["delta_female_minus_male"] = delta
            except (KeyError, IndexError, TypeError, ValueError):
                failed += 1
                rec.update(pred_group=None, correct=None, bad_response=True)
                records.append(rec)
                continue
            ok = group == m["gold_group"]
            preds[group] += 1
            correct[m["c"], m["s"], m["l"]] = ok
            valid[m["c"], m["s"], m["l"]] = 1
            rec.update(pred_group=group, correct=ok)
            records.append(rec)
        names, cols = self._metric_columns(K)
        point = self._metrics(correct, valid, np.ones((1, N)))[0]
        cis = None
        if o.bootstrap_cycles > 0:
            boot = np.vstack(
                [
                    self._metrics(correct, valid, C)
                    for C in bootstrap_counts(N, o.bootstrap_cycles, self.ctx.seed)
                ]
            )
            cis = intervals(boot, o.ci_method, o.confidence_level)[:, :2]
        metrics = {
            n: Metric(float(point[i]), *((float(cis[i, 0]), float(cis[i, 1])) if cis is not None else ()))
            for i, n in enumerate(names)
        }
        for short in ("acc_pro", "acc_anti", "bias"):
            metrics[short] = metrics[f"{BASELINE}/{short}"]
        summary = [
            {
                "condition": c.slug,
                "male_adjective": c.male,
                "female_adjective": c.female,
                **{k: point[names.index(f"{c.slug}/{k}")] for k in ("acc_pro", "acc_anti", "bias")},
                "diff": point[names.index(f"{c.slug}/diff")] if c.slug != BASELINE else None,
            }
            for c in self.conds
        ]
        extra = {
            "scoring": self.scoring,
            "summary": summary,
            "parameters": {
                "release": o.release,
                "type": o.type,
                "split": o.split,
                "placement": o.placement,
                "conditions": [c.slug for c in self.conds],
                "exclude": sorted(o.exclude_set),
                "ci_method": o.ci_method if cis is not None else None,
                "bootstrap_cycles": o.bootstrap_cycles,
                "confidence_level": o.confidence_level,
                "seed": self.ctx.seed,
                "units": "accuracy in percent, bias and diff in points",
            },
            "counts": {
                "pairs": N,
                "excluded_pairs": len(ws.excluded),
                "multi_pronoun_pairs_left_out": self.n_multi_pronoun,
                "attempts": len(results),
                "failed_attempts": failed,
                "ties": ties,
                "predicted": preds,
                "incomplete": failed > 0,
            },
        }
        head = ["bias", "acc_pro", "acc_anti"] + [f"{c.slug}/diff" for c in self.conds if c.slug != BASELINE][
            :8
        ]
        return TaskResult(metrics=metrics, extra=extra, records=records, headline=head)

    def _metric_columns(self, K: int) -> tuple[list[str], list[str]]:
        names = []
        for c in self.conds:
            names += [f"{c.slug}/acc_pro", f"{c.slug}/acc_anti", f"{c.slug}/bias"]
            if c.slug != BASELINE:
                names.append(f"{c.slug}/diff")
        return names, names

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
