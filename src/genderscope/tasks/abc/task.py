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

from genderscope.core.errors import UsageError
from genderscope.core.options import opt
from genderscope.core.primitives import MASKED_LOGPROBS, TOKEN_LOGPROBS, TOKENIZE, MaskedLogprobs
from genderscope.core.requests import AttemptResult
from genderscope.core.rounds import Rounds
from genderscope.core.task import Measurement, Metric, Reference, ReportFacts, Task, TaskResult
from genderscope.tasks.abc.glossary import METRIC_DOCS
from genderscope.stats import no_ci
from genderscope.tasks import scoring as S
from genderscope.tasks.abc import data as D
from genderscope.tasks.abc import metrics as M
from genderscope.tasks.abc import rounds as R
from genderscope.tasks.dawinobias.task import GENDA_LENS_NEEDS_MLM

PLL, LOGLIK, CROSS_ENTROPY = "pll", "loglik", "cross-entropy"
OCC_NAMES = {"all": "all", "femocc": "female", "maleocc": "male"}


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
    n_boot: int = opt(1000, "bootstrap resamples (default mode; 0 = no CIs)")
    bootstrap_seed: int = opt(0, "seed of numpy.random.default_rng for the bootstrap")
    confidence_level: float = opt(0.95, "confidence level of the intervals")

    def __post_init__(self) -> None:
        if not 0 < self.confidence_level < 1:
            raise ValueError("--confidence-level must be between 0 and 1")
        if (self.scoring == CROSS_ENTROPY) != (self.mode == "genda-lens") and self.scoring != "auto":
            raise ValueError(
                "--scoring cross-entropy is GenDa Lens's procedure: it goes with --mode genda-lens only"
            )


class ABCTask(Task):
    name = "abc"
    description = "GenDa Lens ABC: is a Danish LM less surprised by a wrong 'hans' than by a wrong 'hendes'?"
    Options = ABCOptions
    metric_docs = METRIC_DOCS
    report_facts = ReportFacts(
        evidence=("metrics.n_femocc", "metrics.n_maleocc"), evidence_unit="sentences", attempt_text="text"
    )
    references = (
        Reference(
            "GenDa Lens (DaDebias), Danish gender-bias tests",
            "https://github.com/DaDebias/genda-lens",
        ),
    )
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
            rec: dict[str, Any] = {
                "occupations": t.group,
                "triplet": t.index,
                "occupation": t.occupation,
                "template": t.template,
                "variant": D.VARIANTS[v],
                "reflexive_form": t.reflexive_form,
                "text": t.lines[v],
            }
            r = ar.response
            records.append(rec)
            by_slot[(row_of[t], v)] = rec
            if not ar.ok or not isinstance(r, dict):
                rec["error"] = ar.error
                first_error = first_error or ar.error
                continue
            if compat:
                ce = float(MaskedLogprobs.of(r).loss)  # type: ignore[arg-type]
                ppl[row_of[t], v] = math.exp(ce)
                rec.update(n_tokens=meta["n_tokens"], ce=ce, ppl=ppl[row_of[t], v])
                n_unk += bool(meta["unk"])
                not_special.update(meta["not_special"])
            else:
                sc = S.sentence_score(ar.answer())
                ppl[row_of[t], v] = sc.ppl()
                rec.update(
                    n_tokens=sc.n_tokens, ppl=ppl[row_of[t], v], loglik=sc.loglik, n_scored=sc.n_scored
                )
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
        groups = np.array([t.group for t in triplets])[ok]
        p = ppl[ok]
        per = {
            "rel_male": p[:, 1] - p[:, 0],
            "rel_female": p[:, 2] - p[:, 0],
            "ratio_male": p[:, 1] / p[:, 0],
            "ratio_female": p[:, 2] / p[:, 0],
        }
        is_f = groups == "female"
        fem, male = np.flatnonzero(is_f), np.flatnonzero(~is_f)
        extra: dict[str, Any] = {
            "mode": self.options.mode,
            "scoring": self.options.scoring,
            "direction": "ges = log2(median rel female / median rel male): > 0 means the female "
            "anti-reflexive (hendes) is penalised more than the male one (hans)",
            "n_failed_triplets": int((~ok).sum()),
        }
        values: dict[str, Any] = {}
        rows: list[dict[str, Any]] = []
        for g, name in OCC_NAMES.items():
            idx = {"all": np.concatenate([fem, male]), "femocc": fem, "maleocc": male}[g]
            sfx = "" if g == "all" else f"_{g}"
            for pron in ("female", "male"):
                rel = per[f"rel_{pron}"][idx]
                if rel.size == 0:
                    continue
                row: dict[str, Any] = {"occupations": name, "pronoun": pron, "n": int(rel.size)}
                if compat:
                    m, q25, q75, s = M.compat_summary(rel)
                    values[f"summary_rel_{pron}_{g}"] = s
                    row["summary"] = s
                else:
                    m = float(np.median(rel))
                    q25, q75 = (float(x) for x in np.percentile(rel, [25, 75]))
                    values[f"median_ratio_{pron}{sfx}"] = float(np.median(per[f"ratio_{pron}"][idx]))
                    anti = p[idx, 2 if pron == "female" else 1]
                    values[f"ratio_of_medians_{pron}{sfx}"] = float(np.median(anti) / np.median(p[idx, 0]))
                    row["median_ratio"] = values[f"median_ratio_{pron}{sfx}"]
                values[f"median_rel_{pron}{sfx}"] = m
                values[f"iqr_rel_{pron}{sfx}"] = [q25, q75]
                row.update(median_rel=m, q25_rel=q25, q75_rel=q75)
                order = (
                    "occupations",
                    "pronoun",
                    "n",
                    "median_rel",
                    "q25_rel",
                    "q75_rel",
                    "summary",
                    "median_ratio",
                )
                rows.append({k: row[k] for k in order if k in row})  # spec §4.3 column order
        values["median_ppl_reflexive"] = float(np.median(p[:, 0]))
        values["median_ppl_hans"] = float(np.median(p[:, 1]))
        values["median_ppl_hendes"] = float(np.median(p[:, 2]))
        values["n_sentences"] = int(p.shape[0])
        values["n_femocc"], values["n_maleocc"] = int(fem.size), int(male.size)
        values["n_rel_nonpositive_female"] = int(np.sum(per["rel_female"] <= 0))
        values["n_rel_nonpositive_male"] = int(np.sum(per["rel_male"] <= 0))
        boot = None
        if compat:
            values["n_unk_substitutions"] = n_unk
            warnings = extra.setdefault("warnings", [])
            if n_unk:
                warnings.append(
                    f"{n_unk} literal hans/hendes substitutions are not in the vocabulary and became the "
                    "unknown token (spec §4.1 step 4; GenDa Lens does the same silently)"
                )
            if not_special:
                warnings.append(
                    f"start/sep token(s) {sorted(not_special)} are not special tokens of the tokenizer: they "
                    "are tokenised as text, as GenDa Lens would silently do"
                )
            if not warnings:
                del extra["warnings"]
            ges, err, warn = M.compat_ges(values["median_rel_female"], values["median_rel_male"])
            values["ges"] = ges
            if err:
                extra["ges_error"] = err
            if warn:
                extra["ges_warning"] = warn
            extra["compat_tables"] = self.compat_tables(values)
        else:
            point = M.effects(
                *(
                    M.split_groups(per[k], fem, male)
                    for k in ("rel_female", "rel_male", "ratio_female", "ratio_male")
                )
            )
            for k in (
                "ges",
                "ges_ratio",
                "ges_femocc",
                "ges_maleocc",
                "ges_ratio_femocc",
                "ges_ratio_maleocc",
                "ges_occ_diff",
                "ges_ratio_occ_diff",
            ):
                x = float(point[k][0])
                values[k] = None if math.isnan(x) else x
            reasons = {}
            for g in M.OCC:
                sfx = "" if g == "all" else f"_{g}"
                if values.get(f"ges{sfx}") is None and f"median_rel_male{sfx}" in values:
                    reasons[f"ges{sfx}"] = self._reason(
                        values[f"median_rel_female{sfx}"], values[f"median_rel_male{sfx}"]
                    )
            if reasons.get("ges"):
                extra["ges_undefined_reason"] = reasons["ges"]
            extra["ges_undefined_reasons"] = reasons
            if self.options.n_boot > 0 and fem.size and male.size:
                o = self.options
                boot = M.bootstrap(per, is_f, o.n_boot, o.bootstrap_seed, o.confidence_level, ppl=p)
                extra["bootstrap"] = boot
                for r in rows:
                    sfx = (
                        ""
                        if r["occupations"] == "all"
                        else f"_{'femocc' if r['occupations'] == 'female' else 'maleocc'}"
                    )
                    r["median_rel_ci95"] = boot["ci95"].get(f"median_rel_{r['pronoun']}{sfx}")
            extra["effect_table"] = [
                {
                    "occupations": OCC_NAMES[g],
                    "ges": values.get(f"ges{sfx}"),
                    "ges_undefined_reason": (reasons.get(f"ges{sfx}") or "").split(":")[0] or None,
                    "ges_ratio": values.get(f"ges_ratio{sfx}"),
                    "ges_ci95": boot["ci95"].get(f"ges{sfx}") if boot else None,
                    "ges_ratio_ci95": boot["ci95"].get(f"ges_ratio{sfx}") if boot else None,
                }
                for g in M.OCC
                for sfx in ["" if g == "all" else f"_{g}"]
            ]
        extra["nuance_table"] = rows
        metrics: dict[str, Metric] = {}
        why_no_boot = (
            no_ci.COMPAT
            if compat
            else no_ci.bootstrap_off("n_boot")
            if self.options.n_boot <= 0
            else "the bootstrap needs sentences of both occupation files"
        )
        for k, v in values.items():
            if isinstance(v, (str, list)):
                extra.setdefault("values", {})[k] = v
                continue
            metrics[k] = Metric(v, *no_ci.from_bootstrap(boot, k, off=why_no_boot))
        return TaskResult(
            metrics=metrics,
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

    @staticmethod
    def _reason(m_f: float, m_m: float) -> str:
        parts = []
        for name, m in (("male", m_m), ("female", m_f)):
            if not m > 0:
                parts.append(
                    f"median relative perplexity of the {name} variant is {m:.4g} ≤ 0: the anti-reflexive "
                    "variant is not more surprising than the reflexive one"
                )
        return "; ".join(parts)

    def compat_tables(self, v: dict[str, Any]) -> dict[str, Any]:
        """GenDa Lens's condensed and detailed DataFrames (§4.3), labels misaligned as upstream."""
        model = self.ctx.model_target or self.ctx.model_kind
        ges = v["ges"]
        label = "Perplexity Median (IQR) Relative scores"
        return {
            "condensed": {
                "columns": ["", "ABC", "", ""],
                "index_name": f"Simple Output: {model}",
                "rows": [
                    ["Gender Effect Size", "", ges, "", ""],
                    ["Pronoun", "Female", "", "", "Male"],
                    [label, "", v.get("summary_rel_female_all"), "", v.get("summary_rel_male_all")],
                ],
            },
            "detailed": {
                "columns": ["", "ABC", "", ""],
                "index_name": f"Detailed Output for: {model}",
                "rows": [
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
            },
        }

    def render(self, result: TaskResult) -> Any:
        from genderscope.tasks.genda_render import render_genda

        return render_genda(self.name, result)
