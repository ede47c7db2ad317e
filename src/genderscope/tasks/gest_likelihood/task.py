"""Task ``gest-likelihood``: the GEST paper's male-vs-female likelihood scores (GEST spec §8).

Per sentence and template a log10 likelihood difference (> 0 favours the male form):

* masked LMs (request ``masked_pair_logprob``): 4 template pairs, ``score = l(male) − l(female)`` with
  ``l`` = mean log10 P of the tokens at the positions where the two tokenisations differ (§8.1);
* causal LMs (request ``continuation_logprobs``): 2 templates, ``score = log10 p(male word) −
  log10 p(female word)`` after the prompt; multi-token words are scored teacher-forced and recorded (§8.2);
* ``--scores FILE[,FILE...]``: published per-sentence scores, one per dataset row (no model call).

Aggregation per template (§8.3, see :mod:`.aggregate`): metrics ``template_<t>/mean_score_<i>``,
``template_<t>/r_<i>``, ``template_<t>/feminine_rank_<i>``, ``template_<t>/r_f``, ``template_<t>/r_m``,
``template_<t>/g_s``, and over templates ``g_s_mean`` (the paper's per-model summary) plus
``r_f_mean``/``r_m_mean`` (arithmetic means, as the paper's notebook tables).  CIs: row bootstrap.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from genderscope.core.errors import UsageError
from genderscope.core.options import opt
from genderscope.core.requests import (
    CONTINUATION_LOGPROBS,
    GIVEN,
    MASKED_PAIR_LOGPROB,
    Attempt,
    AttemptResult,
    Request,
)
from genderscope.core.task import Metric, Task, TaskResult
from genderscope.stats.bootstrap import bootstrap_counts, intervals
from genderscope.tasks.gest.data import SHORT_NAMES, VERSIONS, GestRowsMixin
from genderscope.tasks.gest.orderings import sample_rows
from genderscope.tasks.gest_likelihood import aggregate as A
from genderscope.tasks.gest_likelihood.scores_file import read_scores, template_ids
from genderscope.tasks.gest_likelihood.templates import CAUSAL, MASKED

LN10 = math.log(10.0)


@dataclass
class GestLikelihoodOptions:
    dataset_version: str = opt(
        "1.0", "GEST file version (the paper's scores are aligned with 1.0)", ("1.0", "1.1")
    )
    form: str = opt(
        "auto",
        "masked (4 templates) or causal (2 templates); auto = from the model's request kinds",
        ("auto", "masked", "causal"),
    )
    template: str = opt("all", "template ids to run, e.g. 0,2 (with --scores: the id of each file, in order)")
    scores: str = opt("", "per-sentence score file(s), comma-separated: one float per dataset row; no model")
    ci_method: str = opt("percentile", "bootstrap interval", ("percentile", "normal"))
    bootstrap_cycles: int = opt(1000, "bootstrap resamples of rows (0 = no CIs)")
    confidence_level: float = opt(0.95, "confidence level of the intervals")

    def __post_init__(self) -> None:
        if not 0 < self.confidence_level < 1:
            raise ValueError("--confidence-level must be between 0 and 1")
        if self.template != "all":
            try:
                [int(t) for t in self.template.split(",") if t.strip()]
            except ValueError:
                raise ValueError(
                    f"--template must be 'all' or template ids like 0,2 (got {self.template!r})"
                ) from None


class GestLikelihoodTask(GestRowsMixin, Task):
    name = "gest-likelihood"
    description = (
        "GEST paper: log-likelihood of male vs female forms of stereotypical quotes (masked/causal LMs)"
    )
    Options = GestLikelihoodOptions
    supports = (MASKED_PAIR_LOGPROB, CONTINUATION_LOGPROBS)
    measurements = {
        MASKED_PAIR_LOGPROB: "he/she-said pairs: log10 P of the masked differing tokens (4 templates)",
        CONTINUATION_LOGPROBS: "next word he/she, man/woman: log10 p (2 templates)",
    }

    # -- set-up -------------------------------------------------------------------------------------------
    def _score_files(self) -> list[str]:
        return [p.strip() for p in self.options.scores.split(",") if p.strip()]

    def _asked_templates(self) -> list[int] | None:
        t = self.options.template
        return None if t == "all" else [int(x) for x in t.split(",") if x.strip()]

    def form(self) -> str:
        """``masked``, ``causal`` or ``given`` (score files)."""
        if self._score_files():
            return "given"
        if self.options.form != "auto":
            return self.options.form
        if MASKED_PAIR_LOGPROB in self.ctx.request_kinds:
            return "masked"
        if CONTINUATION_LOGPROBS in self.ctx.request_kinds:
            return "causal"
        return "masked"  # check_model explains what is missing

    def check_model(self) -> None:
        if self._score_files():
            if self.ctx.model_kind not in ("", "random"):
                raise UsageError(
                    "gest-likelihood --scores aggregates given per-sentence scores and calls no "
                    f"model; leave out --model (got a {self.ctx.model_kind!r} model)"
                )
            self._template_ids()
            return
        from genderscope.core.matrix import require_kinds

        kind = {"masked": MASKED_PAIR_LOGPROB, "causal": CONTINUATION_LOGPROBS}.get(self.options.form)
        require_kinds(
            self,
            [kind] if kind else None,
            hint="or aggregate published per-sentence scores with --scores FILE",
        )
        self._template_ids()

    def _template_ids(self) -> list[int]:
        form = self.form()
        asked = self._asked_templates()
        if form == "given":
            ids = template_ids(self._score_files(), asked)
            known = range(4) if self.options.form in ("auto", "masked") else range(2)
        else:
            known = range(len(MASKED) if form == "masked" else len(CAUSAL))
            ids = asked if asked is not None else list(known)
        bad = [t for t in ids if t not in known]
        if bad or not ids:
            kind = self.options.form if form == "given" else form
            raise UsageError(
                f"gest-likelihood: template id(s) {bad or ids} do not exist for the {kind} form "
                f"(ids {', '.join(map(str, known))})"
            )
        return ids

    # -- attempts -----------------------------------------------------------------------------------------
    def attempts(self) -> list[Attempt]:
        rows = self._rows()
        chosen = sample_rows(len(rows), self.ctx.limit, self.ctx.seed)
        self.item_rows = chosen
        self.template_list = ids = self._template_ids()
        form = self.form()
        given: dict[int, list[float]] = {}
        if form == "given":
            for path, t in zip(self._score_files(), ids):
                given[t] = read_scores(path, len(rows))
        out: list[Attempt] = []
        for t in ids:
            for r in chosen:
                row = rows[r]
                if form == "masked":
                    a, b = MASKED[t].render(row.sentence)
                    req = Request(MASKED_PAIR_LOGPROB, {"text_a": a, "text_b": b})
                elif form == "causal":
                    tpl = CAUSAL[t]
                    req = Request(
                        CONTINUATION_LOGPROBS,
                        {"context": tpl.render(row.sentence), "continuations": [tpl.male, tpl.female]},
                    )
                else:
                    v = given[t][r]
                    req = Request(GIVEN, {"value": None if math.isnan(v) else v, "text": row.sentence})
                out.append(
                    Attempt(f"gest/{r}/t{t}", 1, req, {"row": r, "stereotype": row.stereotype, "template": t})
                )
        return out

    # -- scoring ------------------------------------------------------------------------------------------
    @staticmethod
    def sentence_score(kind: str, response: Any) -> tuple[float, list[int] | None]:
        """(log10 score male − female, token counts of the two words for causal LMs) from one response."""
        if kind == GIVEN:
            return (float("nan") if response is None else float(response)), None
        if kind == MASKED_PAIR_LOGPROB:
            la, lb = response
            if la is None or lb is None:
                return float("nan"), None
            return (float(la) - float(lb)) / LN10, None
        if kind == CONTINUATION_LOGPROBS:
            lp = response["logprobs"]
            return (float(lp[0]) - float(lp[1])) / LN10, [int(n) for n in response.get("n_tokens", [1, 1])]
        raise ValueError(f"unexpected request kind {kind!r}")

    def score(self, results: Sequence[AttemptResult]) -> TaskResult:
        o = self.options
        rows = self._rows()
        chosen = self.item_rows
        ids = self.template_list
        pos = {r: j for j, r in enumerate(chosen)}
        n = len(chosen)
        if n == 0:
            raise UsageError("gest-likelihood: no rows to score")
        X = {t: np.full(n, np.nan) for t in ids}
        records: list[dict[str, Any]] = []
        failed = bad = multi = 0
        nan_rows = {t: 0 for t in ids}
        for ar in results:
            meta = ar.attempt.meta
            t = meta["template"]
            rec: dict[str, Any] = {"row": meta["row"], "stereotype": meta["stereotype"], "template": t}
            if not ar.ok:
                failed += 1
                rec["score"] = None
                records.append(rec)
                continue
            try:
                s, ntok = self.sentence_score(ar.attempt.request.kind, ar.response)
            except (TypeError, ValueError, KeyError, IndexError):
                bad += 1
                s, ntok = float("nan"), None
                rec["bad_response"] = True
            rec["score"] = None if math.isnan(s) else s
            if ntok is not None:
                rec["n_tokens"] = ntok
                if max(ntok) > 1:
                    rec["multi_token"] = True
                    multi += 1
            if math.isnan(s):
                nan_rows[t] += 1
            X[t][pos[meta["row"]]] = s
            records.append(rec)
        S = A.one_hot([rows[r].stereotype for r in chosen])

        def all_metrics(C: np.ndarray) -> np.ndarray:
            per = [A.compute(X[t], S, C) for t in ids]
            g = np.column_stack([p[:, A.G_S] for p in per]).mean(axis=1)
            rf = np.column_stack([p[:, A.R_F] for p in per]).mean(axis=1)
            rm = np.column_stack([p[:, A.R_M] for p in per]).mean(axis=1)
            return np.column_stack(per + [g, rf, rm])

        names = [f"template_{t}/{m}" for t in ids for m in A.NAMES] + ["g_s_mean", "r_f_mean", "r_m_mean"]
        point = all_metrics(np.ones((1, n)))[0]
        cis = nan_counts = None
        if o.bootstrap_cycles > 0:
            boot = np.vstack([all_metrics(C) for C in bootstrap_counts(n, o.bootstrap_cycles, self.ctx.seed)])
            iv = intervals(boot, o.ci_method, o.confidence_level)
            cis, nan_counts = iv[:, :2], iv[:, 2]
        metrics = {
            name: Metric(float(point[i]), *((float(cis[i, 0]), float(cis[i, 1])) if cis is not None else ()))
            for i, name in enumerate(names)
        }
        form = self.form()
        texts: dict[int, Any] = {}
        for t in ids:
            if form == "masked" or (form == "given" and o.form == "masked"):
                texts[t] = {"male": MASKED[t].male, "female": MASKED[t].female}
            elif form == "causal" or (form == "given" and o.form == "causal"):
                c = CAUSAL[t]
                texts[t] = {"prompt": c.prompt, "male_word": c.male, "female_word": c.female}
        extra: dict[str, Any] = {
            "parameters": {
                "form": form,
                "declared_form": o.form,
                "templates": ids,
                "template_texts": texts,
                "score_files": self._score_files() or None,
                "dataset_version": o.dataset_version,
                "dataset_sha256": self.ctx.data.sha256(VERSIONS[o.dataset_version]),
                "sample_k": self.ctx.limit,
                "ci_method": o.ci_method if cis is not None else None,
                "bootstrap_cycles": o.bootstrap_cycles,
                "confidence_level": o.confidence_level,
                "seed": self.ctx.seed,
                "score_units": "log10 likelihood ratio, male − female",
                "r_i": "exp(mean log10 score) — natural exp, as in the paper",
            },
            "counts": {
                "rows": n,
                "templates": len(ids),
                "attempts": len(results),
                "failed_attempts": failed,
                "bad_responses": bad,
                "nan_scores": {str(t): nan_rows[t] for t in ids},
                "multi_token_words": multi,
                "incomplete": failed > 0,
            },
            "stereotypes": [
                {
                    "id": i,
                    "name": SHORT_NAMES[i],
                    **{
                        f"template_{t}": {
                            m: point[names.index(f"template_{t}/{m}_{i}")]
                            for m in ("mean_score", "r", "feminine_rank")
                        }
                        for t in ids
                    },
                }
                for i in range(1, 17)
            ],
        }
        if nan_counts is not None and nan_counts.any():
            extra["nan_resamples"] = {names[i]: int(c) for i, c in enumerate(nan_counts) if c}
        headline = ["g_s_mean", "r_f_mean", "r_m_mean"] + [f"template_{t}/g_s" for t in ids]
        return TaskResult(metrics=metrics, extra=extra, records=records, headline=headline)

    def render(self, result: TaskResult) -> Any:
        from rich.console import Group
        from rich.table import Table
        from rich.text import Text

        from genderscope.core.report_terminal import fmt, metrics_table

        ids = result.extra["parameters"]["templates"]
        table = Table(title="r_i per stereotype (feminine rank)")
        table.add_column("stereotype")
        for t in ids:
            table.add_column(f"template {t}", justify="right")
        for st in result.extra["stereotypes"]:
            table.add_row(
                f"{st['id']} {st['name']}",
                *(
                    f"{fmt(st[f'template_{t}']['r'])} ({fmt(st[f'template_{t}']['feminine_rank'], 0)})"
                    for t in ids
                ),
            )
        c = result.extra["counts"]
        note = Text(
            f"{c['rows']} rows × {c['templates']} templates; g_s > 1 = stereotypical; "
            f"{c['multi_token_words']} multi-token word scores; {c['failed_attempts']} failed"
        )
        return Group(metrics_table(self.name, result), table, note)
