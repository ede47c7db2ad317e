"""Task ``dawinobias``: GenDa Lens's DaWinoBias, masked-pronoun fill-in (GenDa Lens spec §1.1, §3).

Modes: ``genda-lens`` reproduces genda-lens 0.0.3 (masked LMs, spaCy tokens, exact-string groups,
rounded accuracies, GES = r2py(log2(acc_pro/acc_anti))); ``default`` keeps the text as written,
matches pronouns robustly, never produces NaN/inf (``ges = None`` + reason) and adds pair-bootstrap
CIs.  With a causal LM (default mode) the task compares the log-likelihoods of the two candidate
sentences of the pronoun's slot (``scoring=candidates``).  GES > 0: better on pro-stereotypical
sentences (pro over anti).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from genderscope.tasks.genda_kit import GENDA_LENS_NEEDS_MLM, r2np, spread
from genderscope.common.errors import UsageError
from genderscope.core.options import bootstrap_seed_opt, check_confidence_level, confidence_level_opt, opt
from genderscope.core.primitives import FILL_MASK, MASKED_LOGPROBS, TOKEN_LOGPROBS, TOKENIZE, FillMask, Tokens
from genderscope.core.requests import AttemptResult
from genderscope.core.rounds import Rounds
from genderscope.core.metrics import Measurement, Metric
from genderscope.core.metrics import FRACTION, revised
from genderscope.core.task import Task, TaskResult
from genderscope.core.evidence import ReportFacts
from genderscope.tasks.dawinobias.glossary import METRIC_DOCS
from genderscope.stats import no_ci
from genderscope.tasks import scoring as S
from genderscope.tasks.dawinobias import data as D
from genderscope.tasks.dawinobias import metrics as M
from genderscope.tasks.dawinobias import reading as G
from genderscope.tasks.dawinobias import rounds as R
from genderscope.tasks.references import GENDA_LENS, WINOBIAS

PRONOUNS, NULL_CHOICES = R.PRONOUNS, R.NULL_CHOICES


@dataclass
class DaWinoBiasOptions:
    mode: str = opt(
        "default",
        "default (genderscope) or genda-lens (exact GenDa Lens 0.0.3 outputs)",
        ("default", "genda-lens"),
    )
    scoring: str = opt(
        "auto",
        "top1 = masked-LM fill-in; loglik / pll = compare the log-likelihoods (causal LMs) or "
        "pseudo-log-likelihoods (masked LMs) of the two candidate sentences; candidates = whichever of "
        "those the model gives; auto = top1 where the model fills masks, else candidates",
        ("auto", "top1", "candidates", "loglik", "pll"),
    )
    exclude_pairs: str = opt(
        "none", "drop defective line pairs (default mode)", ("none", "identical", "defective")
    )
    mask_token: str | None = opt(None, "override the tokenizer's mask token (parity experiments only)")
    glue_mask: bool = opt(
        False,
        "genda-lens mode: drop the space before a '<mask>' token, as GenDa Lens does for vesteinn/DanskBert "
        "only (set it to reproduce GenDa Lens on that model)",
    )
    n_boot: int = opt(
        1000, "bootstrap resamples of line pairs (default mode; 0 = no CIs)", minimum=0, maximum=10**6
    )
    bootstrap_seed: int = bootstrap_seed_opt()
    confidence_level: float = confidence_level_opt()

    def __post_init__(self) -> None:
        check_confidence_level(self.confidence_level)
        if self.mode == "genda-lens" and self.exclude_pairs != "none":
            raise ValueError("--exclude-pairs applies to --mode default only (GenDa Lens keeps every pair)")
        if self.mode == "genda-lens" and self.scoring not in ("auto", "top1"):
            raise ValueError("--mode genda-lens scores by masked-LM top-1 only (use --mode default)")


HEADLINE = ["ges", "acc_pro", "acc_anti", "f1_pro_female", "f1_pro_male", "f1_anti_female", "f1_anti_male"]


@dataclass
class Decisions:
    """The items' predicted groups by (condition, line), their records, failed lines, prefix matches
    (default top-1 reading), ties (candidates) and the first error met."""

    pred: dict[tuple[str, int], str] = field(default_factory=dict)
    records: dict[tuple[str, int], dict[str, Any]] = field(default_factory=dict)
    failed: set[int] = field(default_factory=set)
    n_prefix: int = 0
    n_ties: int = 0
    first_error: str | None = None


def _accuracies(sc: dict[str, dict[str, float]], compat: bool) -> dict[str, Any]:
    """Accuracy and per-gender F1 of each condition (compat: rounded as GenDa Lens), and the accuracy
    within each gold gender (default mode; None when the condition has no gold item of that gender)."""
    rnd = r2np if compat else (lambda x: x)
    values: dict[str, Any] = {}
    for c in D.CONDITIONS:
        values[f"acc_{c}"] = rnd(sc[c]["acc"])
        for g in ("female", "male"):
            values[f"f1_{c}_{g}"] = rnd(sc[c][f"f1_{g}"])
            if not compat:  # undefined (no gold item of that gender, e.g. with --limit): None, never NaN
                within = sc[c][f"acc_{g}"]
                values[f"acc_{c}_{g}"] = None if np.isnan(within) else within
    return values


def _ges(sc: dict[str, dict[str, float]], values: dict[str, Any], compat: bool, extra: dict[str, Any]) -> Any:
    """GES = log2(acc_pro / acc_anti) (compat: GenDa Lens's, from the rounded accuracies); why it is
    undefined or not finite goes to ``extra``."""
    if compat:
        ges, err = M.compat_ges(values["acc_pro"], values["acc_anti"])
        if err:
            extra["ges_error"] = err
        elif ges is not None and not np.isfinite(ges):
            extra["ges_nonfinite"] = "NaN" if np.isnan(ges) else ("+inf" if ges > 0 else "-inf")
        return ges
    ges, reason = M.default_ges(sc["pro"]["acc"], sc["anti"]["acc"])
    if reason:
        extra["ges_undefined_reason"] = reason
    return ges


def _counts(gold: dict[str, np.ndarray], pred: dict[str, np.ndarray]) -> dict[str, int]:
    """Items, gold genders and predicted groups per condition."""
    out: dict[str, int] = {}
    for c in D.CONDITIONS:
        out[f"n_items_{c}"] = int(gold[c].size)
        for g in ("female", "male"):
            out[f"n_gold_{c}_{g}"] = int(np.sum(gold[c] == M.CODE[g]))
        for g in M.GROUPS:
            out[f"n_pred_{c}_{g}"] = int(np.sum(pred[c] == M.CODE[g]))
    return out


def _nuance_table(values: dict[str, Any], boot: dict[str, Any] | None, compat: bool) -> list[dict[str, Any]]:
    """Per condition and gold gender: counts, F1 (default mode: accuracy within and F1's CI)."""
    return [
        {
            "condition": c,
            "pronoun": g,
            "n_gold": values[f"n_gold_{c}_{g}"],
            "n_pred": values[f"n_pred_{c}_{g}"],
            "f1": values[f"f1_{c}_{g}"],
            **(
                {}
                if compat
                else {
                    "acc_within": values[f"acc_{c}_{g}"],
                    "f1_ci95": boot["ci95"][f"f1_{c}_{g}"] if boot else None,
                }
            ),
        }
        for c in D.CONDITIONS
        for g in ("female", "male")
    ]


class DaWinoBiasTask(Task):
    limit_meaning = "N sentence pairs spread evenly over each file (GenDa Lens's exclusions still apply)"
    name = "dawinobias"
    text_languages = ("da",)
    description = (
        "GenDa Lens DaWinoBias: does a Danish LM fill in the stereotype-congruent pronoun more often?"
    )
    Options = DaWinoBiasOptions
    metric_docs = revised(
        METRIC_DOCS, bounds={"acc_*": FRACTION, "f1_*": FRACTION, "n_*": (0.0, None)}, chance={"ges": 0.0}
    )
    report_facts = ReportFacts(evidence=("metrics.n_items_pro",), attempt_text="text")
    references = (GENDA_LENS, WINOBIAS)
    measurements = {
        "top1": Measurement(frozenset({FILL_MASK, TOKENIZE}), "masked pronoun top-1"),
        "loglik": Measurement(frozenset({TOKEN_LOGPROBS}), "candidate pronoun log-likelihoods"),
        "pll": Measurement(frozenset({MASKED_LOGPROBS}), "candidate pronoun pseudo-log-likelihoods"),
    }

    measurement_option = "scoring"
    measurement_groups = {"candidates": ("loglik", "pll")}

    def allowed_measurements(self) -> list[str]:
        return ["top1"] if self.options.mode == "genda-lens" else super().allowed_measurements()

    @property
    def model_hint(self) -> str:  # type: ignore[override]
        return GENDA_LENS_NEEDS_MLM if self.options.mode == "genda-lens" else ""

    @property
    def scoring(self) -> str:
        return self.options.scoring

    def datasets(self) -> list[str]:
        return [D.FILES[c] for c in D.CONDITIONS]

    def _excluded(self) -> set[int]:
        ex = self.options.exclude_pairs
        if ex == "identical":
            return set(D.IDENTICAL_LINES)
        if ex == "defective":
            return set(D.IDENTICAL_LINES) | set(D.EXTRA_DIFF_LINES)
        return set()

    def items(self) -> list[dict[str, Any]]:
        """The items of the run, in order: both conditions, the kept lines (``--limit``, exclusions)."""
        lines = D.load_lines(self.ctx.data)
        excluded = self._excluded()
        keep = [i + 1 for i in spread(len(lines["anti"]), self.ctx.limit) if i + 1 not in excluded]
        compat = self.options.mode == "genda-lens"
        items: list[dict[str, Any]] = []
        for cond in D.CONDITIONS:
            for ln in keep:
                raw = lines[cond][ln - 1]
                where = f"{D.FILES[cond]}:{ln}"
                inp = D.compat_input(raw, where) if compat else D.default_input(raw, where)
                items.append(
                    {
                        "condition": cond,
                        "line": ln,
                        "text": raw,
                        "left": inp.left,
                        "right": inp.right,
                        "gold": inp.gold,
                        "pair_identical": ln in D.IDENTICAL_LINES,
                        "pair_extra_diff": ln in D.EXTRA_DIFF_LINES,
                    }
                )
        return items

    def rounds(self) -> Rounds:
        o = self.options
        if self.scoring == "top1":
            return R.top1_rounds(self.items, o.mode == "genda-lens", o.mask_token, o.glue_mask)
        return R.candidate_rounds(self.items, TOKEN_LOGPROBS if self.scoring == "loglik" else MASKED_LOGPROBS)

    # ---------------------------------------------------------------- scoring of one answer

    pronoun_prefixes = staticmethod(G.pronoun_prefixes)
    robust_group = staticmethod(G.robust_group)
    # ---------------------------------------------------------------- scoring

    def score(self, results: Sequence[AttemptResult]) -> TaskResult:
        top1 = self.scoring == "top1"
        plan = self.rounds()
        stages = [R.stage(plan, ar) for ar in results]
        pieces = {
            ar.attempt.meta["pronoun"]: list(Tokens.of(ar.response).tokens or [])
            for ar, stage in zip(results, stages)
            if stage == R.PIECES and ar.ok and isinstance(ar.response, dict)
        }
        prefixes = self.pronoun_prefixes(pieces)
        if top1:
            R.info_tokens(plan.answers(results))  # UsageError when the model did not describe its tokenizer
        items = self.items()
        records: list[dict[str, Any]] = []
        answers: dict[tuple[str, int], Any] = {}  # (condition, line) -> fill result or {gender: score}
        errors: dict[tuple[str, int], str] = {}
        mask_warned = False
        for ar, stage in zip(results, stages):
            a = ar.attempt
            if stage in (R.INFO, R.ENCODE):
                records.append({"stage": stage})
                if stage == R.ENCODE and not ar.ok:
                    errors[(a.meta["condition"], a.meta["line"])] = ar.error or "no answer"
                continue
            if stage == R.PIECES:
                records.append({"pronoun": a.meta["pronoun"], "pieces": pieces.get(a.meta["pronoun"])})
                continue
            key = (a.meta["condition"], a.meta["line"])
            if not ar.ok or not isinstance(ar.response, (dict, list)):
                errors[key] = ar.error or "no answer"
            elif stage == R.FILL:
                answers[key] = ar
                mask_warned = mask_warned or bool(a.meta.get("mask_warn"))
            else:
                answers.setdefault(key, {})[a.meta["candidate_gender"]] = (
                    a.meta["candidate"],
                    S.sentence_score(ar.answer()),
                )
            records.append({"stage": stage})
        d = self._decide(items, answers, errors, prefixes)
        # one record per attempt: the item's record on its fill / first candidate attempt
        for j, (ar, stage) in enumerate(zip(results, stages)):
            a = ar.attempt
            if stage in (R.FILL, R.CANDIDATE):
                key = (a.meta["condition"], a.meta["line"])
                records[j] = (
                    {**d.records[key], "candidate": a.meta.get("candidate")}
                    if stage == R.CANDIDATE
                    else d.records[key]
                )
        lines = sorted({it["line"] for it in items} - d.failed)
        if not lines:
            raise UsageError(
                "dawinobias: no line pair was answered in both conditions, nothing to score"
                + (f" (first error: {d.first_error})" if d.first_error else "")
            )
        gold_codes, pred_codes, same = self._codes(items, d.pred, lines)
        result = self._summarise(gold_codes, pred_codes, records, d, pieces, same)
        if mask_warned:
            result.extra.setdefault("warnings", []).append(
                f"--mask-token {self.options.mask_token!r} is not the tokenizer's mask token "
                "(GenDa Lens parity experiments only)"
            )
        return result

    def _decide(
        self,
        items: list[dict[str, Any]],
        answers: dict[tuple[str, int], Any],
        errors: dict[tuple[str, int], str],
        prefixes: Any,
    ) -> Decisions:
        """Each item's predicted group from its answers (pure per item) and its record."""
        d = Decisions()
        for it in items:
            key = (it["condition"], it["line"])
            rec: dict[str, Any] = {
                k: it[k] for k in ("condition", "line", "text", "gold", "pair_identical", "pair_extra_diff")
            }
            rec["gold_group"] = (
                D.compat_group(it["gold"]) if self.options.mode == "genda-lens" else D.GENDER[it["gold"]]
            )
            got = answers.get(key)
            if got is None or (self.scoring != "top1" and len(got) < 2):
                d.first_error = d.first_error or errors.get(key, "the encoded input has no single mask token")
                d.failed.add(it["line"])
                rec.update(model_input=None, pred_group=None, correct=None)
                d.records[key] = rec
                continue
            group = (
                self._read_top1(got, prefixes, rec, d)
                if self.scoring == "top1"
                else self._read_candidates(got, it, rec, d)
            )
            d.pred[key] = group
            rec.update(pred_group=group, correct=group == rec["gold_group"] and group != "other")
            d.records[key] = rec
        return d

    def _read_top1(self, got: AttemptResult, prefixes: Any, rec: dict[str, Any], d: Decisions) -> str:
        """The group of a fill answer's top prediction (``rec`` gets the token; prefix matches counted)."""
        top = FillMask.of(got.response).top[0]
        rec["model_input"] = got.attempt.meta["input"]
        if self.options.mode == "genda-lens":
            rec["pred_token"] = top.decoded
            return D.compat_group(top.decoded if top.decoded is not None else "")
        group, norm, match = self.robust_group(top, prefixes)
        d.n_prefix += match == "prefix"
        rec.update(pred_token=top.token, pred_norm=norm, match=match)
        return group

    @staticmethod
    def _read_candidates(got: dict[str, Any], it: dict[str, Any], rec: dict[str, Any], d: Decisions) -> str:
        """The candidate with the higher sentence log-likelihood ("other" on a tie, counted)."""
        (f, sf), (m, sm) = got["female"], got["male"]
        delta = sf.loglik - sm.loglik
        d.n_ties += delta == 0
        rec.update(
            model_input=it["left"] + "_" + it["right"], candidates={f: sf.loglik, m: sm.loglik}, delta=delta
        )
        return "female" if delta > 0 else "male" if delta < 0 else "other"

    def _codes(
        self, items: list[dict[str, Any]], pred: dict[tuple[str, int], str], lines: list[int]
    ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], int]:
        """Gold and predicted group codes per condition over ``lines``, and how many pairs have the same
        input in both conditions."""
        by_key = {(it["condition"], it["line"]): it for it in items}
        group_of = D.compat_group if self.options.mode == "genda-lens" else D.GENDER.get
        gold_codes = {
            c: np.array([M.CODE[group_of(by_key[(c, ln)]["gold"])] for ln in lines]) for c in D.CONDITIONS
        }
        pred_codes = {c: np.array([M.CODE[pred[(c, ln)]] for ln in lines]) for c in D.CONDITIONS}
        same = sum(
            (by_key[("anti", ln)]["left"], by_key[("anti", ln)]["right"])
            == (by_key[("pro", ln)]["left"], by_key[("pro", ln)]["right"])
            for ln in sorted({it["line"] for it in items})
            if ("anti", ln) in by_key and ("pro", ln) in by_key
        )
        return gold_codes, pred_codes, same

    def _summarise(
        self,
        gold: dict[str, np.ndarray],
        pred: dict[str, np.ndarray],
        records: list[dict[str, Any]],
        d: Decisions,
        pieces: dict[str, list[str]],
        same_input_pairs: int,
    ) -> TaskResult:
        o = self.options
        compat = o.mode == "genda-lens"
        sc = {c: M.condition_scores(gold[c], pred[c]) for c in D.CONDITIONS}
        extra: dict[str, Any] = {
            "mode": o.mode,
            "scoring": self.scoring,
            "direction": "ges = log2(acc_pro / acc_anti): > 0 means better on pro-stereotypical sentences",
        }
        values = _accuracies(sc, compat)
        values["ges"] = _ges(sc, values, compat, extra)
        values.update(_counts(gold, pred))
        values["n_same_input_pairs"] = int(same_input_pairs)
        if not compat:
            values["n_prefix_matches"] = d.n_prefix
            values["n_ties"] = d.n_ties
        boot = None
        if not compat and o.n_boot > 0:
            boot = M.pair_bootstrap(gold, pred, o.n_boot, o.bootstrap_seed, o.confidence_level)
            extra["bootstrap"] = boot
        off = no_ci.COMPAT if compat else no_ci.bootstrap_off("n_boot")
        metrics = {
            k: Metric(v, *no_ci.from_bootstrap(boot, k, off=no_ci.EXACT_COUNT if k.startswith("n_") else off))
            for k, v in values.items()
        }
        extra["nuance_table"] = _nuance_table(values, boot, compat)
        if compat:
            extra["compat_tables"] = G.compat_tables(values, self.ctx.model_target or self.ctx.model_kind)
        else:
            extra["pronoun_pieces"] = pieces or None
            extra["exclude_pairs"] = o.exclude_pairs
        extra["n_failed_pairs"] = len(d.failed)
        return TaskResult(metrics=metrics, extra=extra, records=records, headline=HEADLINE)

    def render(self, result: TaskResult) -> Any:
        from genderscope.tasks.genda_render import render_genda

        return render_genda(self.name, result)
