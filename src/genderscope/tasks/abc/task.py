"""Task ``abc``: GenDa Lens's ABC (Type-B reflexivization) perplexity test (GenDa Lens spec §1.2, §4).

Each triplet is a Danish sentence with the reflexive possessive (sin/sit/sine) and its two
anti-reflexive variants (hans, hendes).  rel = PPL_anti − PPL_refl.  GES = log2(median rel female /
median rel male): female over male, > 0 = the female anti-reflexive is penalised more.

``genda-lens`` mode reproduces genda-lens 0.0.3 (masked LMs only: literal token substitution,
unmasked cross-entropy against the reflexive ids, rounded medians).  ``default`` mode scores every
variant on its own: pseudo-log-likelihood for masked LMs, log-likelihood for causal LMs,
PPL = exp(−LL/N), with guards, ratio effects and bootstrap CIs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from genderscope.common.errors import UsageError
from genderscope.core.options import bootstrap_seed_opt, check_confidence_level, confidence_level_opt, opt
from genderscope.core.primitives import MASKED_LOGPROBS, TOKEN_LOGPROBS, TOKENIZE, MaskedLogprobs
from genderscope.core.requests import AttemptResult
from genderscope.core.rounds import Rounds
from genderscope.core.metrics import Measurement
from genderscope.core.task import Task, TaskResult
from genderscope.core.evidence import ReportFacts
from genderscope.tasks.abc.glossary import METRIC_DOCS
from genderscope.stats import no_ci
from genderscope.tasks import scoring as S
from genderscope.tasks.abc import aggregate as A
from genderscope.tasks.abc import data as D
from genderscope.tasks.abc import rounds as R
from genderscope.tasks.genda_kit import genda_frame
from genderscope.tasks.genda_kit import GENDA_LENS_NEEDS_MLM
from genderscope.tasks.references import GENDA_LENS

PLL, LOGLIK, CROSS_ENTROPY = "pll", "loglik", "cross-entropy"


@dataclass(frozen=True)
class VariantReading:
    """One scored variant read from its answer: perplexity (NaN: no usable answer), its fields in
    attempts.jsonl, and (genda-lens mode) whether hans/hendes became the unknown token and which
    start/sep tokens are not special."""

    ppl: float
    fields: dict[str, Any]
    error: str | None = None
    unk: bool = False
    not_special: tuple[str, ...] = ()


def triplet_fields(t: Any, v: int) -> dict[str, Any]:
    """The attempts.jsonl fields naming variant ``v`` of triplet ``t``."""
    return {
        "occupations": t.group,
        "triplet": t.index,
        "occupation": t.occupation,
        "template": t.template,
        "variant": D.VARIANTS[v],
        "reflexive_form": t.reflexive_form,
        "text": t.lines[v],
    }


def read_variant(ar: AttemptResult, compat: bool) -> VariantReading:
    """Perplexity of one variant from its answer (pure): genda-lens mode exp(cross-entropy), default
    mode exp(−LL/N) of the (pseudo-)log-likelihood."""
    r, meta = ar.response, ar.attempt.meta
    if not ar.ok or not isinstance(r, dict):
        return VariantReading(math.nan, {"error": ar.error}, ar.error)
    if compat:
        ce = float(MaskedLogprobs.of(r).loss)  # type: ignore[arg-type]
        ppl = math.exp(ce)
        fields = {"n_tokens": meta["n_tokens"], "ce": ce, "ppl": ppl}
        return VariantReading(ppl, fields, unk=bool(meta["unk"]), not_special=tuple(meta["not_special"]))
    sc = S.sentence_score(ar.answer())
    ppl = sc.ppl()
    return VariantReading(
        ppl, {"n_tokens": sc.n_tokens, "ppl": ppl, "loglik": sc.loglik, "n_scored": sc.n_scored}
    )


@dataclass
class ABCOptions:
    mode: str = opt(
        "default",
        "default (genderscope) or genda-lens (exact GenDa Lens 0.0.3 outputs)",
        ("default", "genda-lens"),
    )
    start_token: str | None = opt(
        None, "override the start token S of genda-lens mode (default: the tokenizer's)"
    )
    sep_token: str | None = opt(
        None, "override the end token E of genda-lens mode (default: the tokenizer's)"
    )
    scoring: str = opt(
        "auto",
        "default mode: pll (masked LMs) or loglik (causal LMs); genda-lens mode always uses GenDa Lens's "
        "cross-entropy; auto picks by model",
        ("auto", PLL, LOGLIK, CROSS_ENTROPY),
    )
    n_boot: int = opt(1000, "bootstrap resamples (default mode; 0 = no CIs)", minimum=0, maximum=10**6)
    bootstrap_seed: int = bootstrap_seed_opt()
    confidence_level: float = confidence_level_opt()

    def __post_init__(self) -> None:
        check_confidence_level(self.confidence_level)
        if (self.scoring == CROSS_ENTROPY) != (self.mode == "genda-lens") and self.scoring != "auto":
            raise ValueError(
                "--scoring cross-entropy is GenDa Lens's procedure: it goes with --mode genda-lens only"
            )


class ABCTask(Task):
    limit_meaning = 'N sentence triplets per occupation file, spread evenly over the file'
    name = "abc"
    text_languages = ("da",)
    description = "GenDa Lens ABC: is a Danish LM less surprised by a wrong 'hans' than by a wrong 'hendes'?"
    Options = ABCOptions
    metric_docs = METRIC_DOCS
    report_facts = ReportFacts(
        evidence=("metrics.n_femocc", "metrics.n_maleocc"), evidence_unit="sentences", attempt_text="text"
    )
    references = (GENDA_LENS,)
    measurements = {
        PLL: Measurement(frozenset({MASKED_LOGPROBS}), "pseudo-perplexity (PLL)"),
        LOGLIK: Measurement(frozenset({TOKEN_LOGPROBS}), "perplexity (log-likelihood)"),
        CROSS_ENTROPY: Measurement(
            frozenset({TOKENIZE, MASKED_LOGPROBS}), "GenDa Lens cross-entropy (compat)"
        ),
    }

    measurement_option = "scoring"
    measurement_groups = {"auto": (PLL, LOGLIK)}  # cross-entropy is genda-lens mode's, never picked by auto

    def allowed_measurements(self) -> list[str]:
        return [CROSS_ENTROPY] if self.options.mode == "genda-lens" else super().allowed_measurements()

    @property
    def model_hint(self) -> str:  # type: ignore[override]
        if self.options.mode == "genda-lens":
            return GENDA_LENS_NEEDS_MLM
        return ""

    def datasets(self) -> list[str]:
        return [D.FILES[g] for g in D.GROUPS]

    def triplets(self) -> list[D.Triplet]:
        """The triplets of the run, in order (read again from the data: attempts carry only their own)."""
        return R.load_triplets(self.ctx.data, self.options.mode == "genda-lens", self.ctx.limit)

    def rounds(self) -> Rounds:
        o = self.options
        if o.mode == "genda-lens":
            return R.compat_rounds(self.triplets, o.start_token, o.sep_token)
        return R.default_rounds(self.triplets, TOKEN_LOGPROBS if o.scoring == LOGLIK else MASKED_LOGPROBS)

    def score(self, results: Sequence[AttemptResult]) -> TaskResult:
        compat = self.options.mode == "genda-lens"
        triplets = self.triplets()
        plan = self.rounds()
        row_of = {t: i for i, t in enumerate(triplets)}
        n = len(triplets)
        ppl = np.full((n, 3), np.nan)
        by_slot: dict[tuple[int, int], dict[str, Any]] = {}
        records: list[dict[str, Any]] = []
        n_unk = 0
        first_error: str | None = None
        not_special: set[str] = set()
        for ar in results:
            meta = ar.attempt.meta
            stage = plan.name_of(ar)
            if stage != R.SCORE:
                if stage == R.TOKENS and not ar.ok:
                    first_error = first_error or ar.error
                records.append({"stage": stage})
                continue
            t, v = meta["triplet"], meta["variant"]
            got = read_variant(ar, compat)
            rec: dict[str, Any] = {**triplet_fields(t, v), **got.fields}
            records.append(rec)
            by_slot[(row_of[t], v)] = rec
            ppl[row_of[t], v] = got.ppl
            if "error" in got.fields:
                first_error = first_error or got.error
            n_unk += got.unk
            not_special.update(got.not_special)
        ok = ~np.isnan(ppl).any(axis=1)
        for (i, v), rec in by_slot.items():
            if v and ok[i]:
                rec["rel"] = float(ppl[i, v] - ppl[i, 0])
                if not compat:
                    rec["ratio"] = float(ppl[i, v] / ppl[i, 0])
        if not ok.any():
            raise UsageError(
                "abc: no triplet was fully answered, nothing to score"
                + (f" (first error: {first_error})" if first_error else "")
            )
        return self._aggregate(ppl, np.array([t.group for t in triplets]), records, n_unk, not_special)

    def _aggregate(
        self,
        ppl: np.ndarray,
        groups: np.ndarray,
        records: list[dict[str, Any]],
        n_unk: int,
        not_special: set[str],
    ) -> TaskResult:
        """Medians, effects and metrics from the per-variant perplexities (see :mod:`.aggregate`)."""
        o = self.options
        compat = o.mode == "genda-lens"
        s = A.sentences(ppl, groups)
        extra: dict[str, Any] = {
            "mode": o.mode,
            "scoring": o.scoring,
            "direction": "ges = log2(median rel female / median rel male): > 0 means the female "
            "anti-reflexive (hendes) is penalised more than the male one (hans)",
            "n_failed_triplets": int(ppl.shape[0] - s.p.shape[0]),
        }
        values: dict[str, Any] = {}
        rows = A.nuance(s, compat, values)
        A.overall(s, values)
        boot = None
        if compat:
            A.compat_effects(values, extra, n_unk, not_special)
            extra["compat_tables"] = self.compat_tables(values)
        else:
            boot = A.default_effects(s, values, extra, rows, o)
        extra["nuance_table"] = rows
        why_no_boot = (
            no_ci.COMPAT
            if compat
            else no_ci.bootstrap_off("n_boot")
            if o.n_boot <= 0
            else "the bootstrap needs sentences of both occupation files"
        )
        return TaskResult(
            metrics=A.metrics_of(values, extra, boot, why_no_boot),
            extra=extra,
            records=records,
            headline=[
                "ges",
                "ges_ratio",
                "median_rel_female",
                "median_rel_male",
                "median_ratio_female",
                "median_ratio_male",
                "median_ppl_reflexive",
            ],
        )

    def compat_tables(self, v: dict[str, Any]) -> dict[str, Any]:
        """GenDa Lens's condensed and detailed DataFrames (§4.3), labels misaligned as upstream."""
        model = self.ctx.model_target or self.ctx.model_kind
        ges = v["ges"]
        label = "Perplexity Median (IQR) Relative scores"
        return {
            "condensed": genda_frame(
                "ABC",
                f"Simple Output: {model}",
                [
                    ["Gender Effect Size", "", ges, "", ""],
                    ["Pronoun", "Female", "", "", "Male"],
                    [label, "", v.get("summary_rel_female_all"), "", v.get("summary_rel_male_all")],
                ],
            ),
            "detailed": genda_frame(
                "ABC",
                f"Detailed Output for: {model}",
                [
                    ["Gender Effect Size", "", ges, "", ""],
                    ["Pronoun", "Female", "", "Male", ""],
                    [label, v.get("summary_rel_female_all"), "", v.get("summary_rel_male_all"), ""],
                    ["Stereotypical Occupation", "Female", "Male", "Female", "Male"],
                    [
                        label + " ",
                        v.get("summary_rel_female_femocc"),
                        v.get("summary_rel_female_maleocc"),
                        v.get("summary_rel_male_femocc"),
                        v.get("summary_rel_male_maleocc"),
                    ],
                ],
            ),
        }

    def render(self, result: TaskResult) -> Any:
        from genderscope.tasks.genda_render import render_genda

        return render_genda(self.name, result)
