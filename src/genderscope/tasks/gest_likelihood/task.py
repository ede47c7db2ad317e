"""Task ``gest-likelihood``: the GEST paper's male-vs-female likelihood scores (GEST spec §8).

Per sentence and template a log10 likelihood difference (> 0 favours the male form), from primitive
requests (:mod:`.rounds`):

* masked LMs (``--form masked``: ``tokenize`` then ``masked_logprobs``): 4 template pairs, ``score =
  l(male) − l(female)`` with ``l`` = mean log10 P of the tokens at the positions where the two
  tokenisations differ, all of them masked (§8.1);
* causal LMs (``--form causal``: ``token_logprobs``): 2 templates, ``score = log10 p(male word) −
  log10 p(female word)`` after the prompt (preceded by the model's start token); multi-token words
  are scored teacher-forced and recorded (§8.2);
* ``--scores FILE[,FILE...]``: published per-sentence scores, one per dataset row (no model call).

``--form auto`` is resolved from the model's primitives when the task is built (recorded resolved).
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

from genderscope.common.errors import UsageError
from genderscope.core.options import check_confidence_level, confidence_level_opt, opt
from genderscope.core.primitives import MASKED_LOGPROBS, TOKEN_LOGPROBS, TOKENIZE
from genderscope.core.requests import Attempt, AttemptResult, given_request
from genderscope.core.rounds import Answers, Round, Rounds
from genderscope.core.metrics import Measurement, Metric
from genderscope.core.task import Task, TaskResult
from genderscope.core.evidence import ReportFacts
from genderscope.tasks.gest_likelihood.glossary import METRIC_DOCS
from genderscope.stats import no_ci
from genderscope.stats.bootstrap import PYTHON, point_and_intervals
from genderscope.stats.jackknife import JACKKNIFE_T, jackknife_intervals, jackknife_weights
from genderscope.stats.rules import UnitScores, paired_rule
from genderscope.data.gest import SHORT_NAMES, VERSIONS, GestRowsMixin
from genderscope.data.gest import sample_rows
from genderscope.tasks.gest_likelihood import aggregate as A
from genderscope.tasks.gest_likelihood import rounds as R
from genderscope.tasks.gest_likelihood.scores_file import read_scores, template_ids
from genderscope.tasks.gest_likelihood.templates import CAUSAL, MASKED
from genderscope.tasks.references import GEST

MASKED_FORM, CAUSAL_FORM, GIVEN_FORM = "masked", "causal", "given"


#: ``no_ci`` of a feminine rank (a rank of 16 means has no valid interval from item resamples)
RANK_NO_CI = (
    "a rank has no valid interval here (resamples can exclude the rank itself); read the r_i intervals"
)


@dataclass
class GestLikelihoodOptions:
    dataset_version: str = opt(
        "1.0", "GEST file version (the paper's scores are aligned with 1.0)", ("1.0", "1.1")
    )
    form: str = opt(
        "auto",
        "masked (4 templates) or causal (2 templates); auto = from the model's request kinds",
        ("auto", MASKED_FORM, CAUSAL_FORM),
    )
    template: str = opt("all", "template ids to run, e.g. 0,2 (with --scores: the id of each file, in order)")
    scores: str = opt("", "per-sentence score file(s), comma-separated: one float per dataset row; no model")
    ci_method: str = opt(
        JACKKNIFE_T,
        "interval: jackknife-t over rows (calibrated at small samples), percentile or normal (bootstrap)",
        (JACKKNIFE_T, "percentile", "normal"),
    )
    bootstrap_cycles: int = opt(1000, "bootstrap resamples of rows (0 = no CIs)", minimum=0, maximum=10**6)
    confidence_level: float = confidence_level_opt()

    def __post_init__(self) -> None:
        check_confidence_level(self.confidence_level)
        if self.template != "all":
            try:
                [int(t) for t in self.template.split(",") if t.strip()]
            except ValueError:
                raise ValueError(
                    f"--template must be 'all' or template ids like 0,2 (got {self.template!r})"
                ) from None


@dataclass(frozen=True)
class ItemReading:
    """One item (row × template) read: its log10 score male − female (NaN: undefined; None: a request
    failed), the words' token counts (causal LMs), whether an answer could not be read."""

    score: float | None
    n_tokens: list[int] | None = None
    failed: bool = False
    bad: bool = False

    @property
    def multi_token(self) -> bool:
        return self.n_tokens is not None and max(self.n_tokens) > 1

    def fields(self) -> dict[str, Any]:
        """The item's fields on its last attempt's line of attempts.jsonl."""
        if self.failed:
            return {"score": None}
        rec: dict[str, Any] = {"bad_response": True} if self.bad else {}
        rec["score"] = None if self.score is None or math.isnan(self.score) else self.score
        if self.n_tokens is not None:
            rec["n_tokens"] = self.n_tokens
            if self.multi_token:
                rec["multi_token"] = True
        return rec


@dataclass
class _Read:
    """What scoring reads from a run's answers: the attempts of each item (template, row position), their
    readings, per template the scores by row position, the stereotypes one-hot and each position's row."""

    by_item: dict[tuple[int, int], list[int]]
    readings: dict[tuple[int, int], Any]
    X: dict[int, np.ndarray]
    S: np.ndarray
    rows: list[int]


def _record(meta: dict[str, Any], step: str, outcome: dict[str, Any]) -> dict[str, Any]:
    """An attempt's attempts.jsonl fields: its row, and (model forms) the round that asked it and the side."""
    rec = {"row": meta["row"], "stereotype": meta["stereotype"], "template": meta["template"]}
    if "side" in meta:
        rec.update(step=step, side=meta["side"])
    rec.update(outcome)
    return rec


def _counts(
    readings: dict[tuple[int, int], ItemReading], ids: list[int], n: int, results: Sequence[AttemptResult]
) -> dict[str, Any]:
    """Rows, items and what went wrong (``nan_scores`` per template counts undefined scores)."""
    ok = [(t, r) for (t, _), r in readings.items() if not r.failed]
    failed = sum(r.failed for r in readings.values())
    return {
        "rows": n,
        "templates": len(ids),
        "items": len(readings),
        "attempts": len(results),
        "failed_attempts": sum(not ar.ok for ar in results),
        "failed_items": failed,
        "bad_responses": sum(r.bad for r in readings.values()),
        "nan_scores": {str(t): sum(1 for u, r in ok if u == t and math.isnan(r.score)) for t in ids},  # type: ignore[arg-type]
        "multi_token_words": sum(r.multi_token for _, r in ok),
        "incomplete": failed > 0,
    }


def _stereotype_table(point: np.ndarray, names: list[str], ids: list[int]) -> list[dict[str, Any]]:
    """Per stereotype and template: mean score, r_i and feminine rank."""
    return [
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
    ]


class GestLikelihoodTask(GestRowsMixin, Task):
    limit_meaning = "N GEST rows drawn by GenderBench's subset rule, as in the chat form"
    name = "gest-likelihood"
    description = (
        "GEST paper: log-likelihood of male vs female forms of stereotypical quotes (masked/causal LMs)"
    )
    Options = GestLikelihoodOptions
    metric_docs = METRIC_DOCS
    report_facts = ReportFacts(evidence=("counts.rows",), evidence_unit="rows")
    references = (GEST,)
    measurements = {
        MASKED_FORM: Measurement(
            frozenset({TOKENIZE, MASKED_LOGPROBS}),
            "he/she-said pairs: log10 P of the masked differing tokens (4 templates)",
        ),
        CAUSAL_FORM: Measurement(
            frozenset({TOKEN_LOGPROBS}), "next word he/she, man/woman: log10 p (2 templates)"
        ),
    }

    measurement_option = "form"
    model_hint = "or aggregate published per-sentence scores with --scores FILE"

    def resolve_options(self, options: GestLikelihoodOptions) -> GestLikelihoodOptions:
        """``form`` resolved from the model (``auto`` stays with ``--scores``: no model is asked)."""
        return options if self._score_files() else super().resolve_options(options)

    # -- set-up -------------------------------------------------------------------------------------------
    def _score_files(self) -> list[str]:
        return [p.strip() for p in self.options.scores.split(",") if p.strip()]

    def _asked_templates(self) -> list[int] | None:
        t = self.options.template
        return None if t == "all" else [int(x) for x in t.split(",") if x.strip()]

    def form(self) -> str:
        """``masked``, ``causal`` or ``given`` (score files)."""
        if self._score_files():
            return GIVEN_FORM
        return MASKED_FORM if self.options.form == "auto" else self.options.form

    def check_model(self) -> None:
        if self._score_files():
            if self.ctx.model_kind not in ("", "random"):
                raise UsageError(
                    "gest-likelihood --scores aggregates given per-sentence scores and calls no "
                    f"model; leave out --model (got a {self.ctx.model_kind!r} model)"
                )
            self._template_ids()
            return
        super().check_model()
        self._template_ids()

    def _template_ids(self) -> list[int]:
        form = self.form()
        asked = self._asked_templates()
        if form == GIVEN_FORM:
            ids = template_ids(self._score_files(), asked)
            known = range(4) if self.options.form in ("auto", MASKED_FORM) else range(2)
        else:
            known = range(len(MASKED) if form == MASKED_FORM else len(CAUSAL))
            ids = asked if asked is not None else list(known)
        bad = [t for t in ids if t not in known]
        if bad or not ids:
            kind = self.options.form if form == GIVEN_FORM else form
            raise UsageError(
                f"gest-likelihood: template id(s) {bad or ids} do not exist for the {kind} form "
                f"(ids {', '.join(map(str, known))})"
            )
        return ids

    # -- attempts -----------------------------------------------------------------------------------------
    def items(self) -> list[tuple[str, str, int, dict[str, Any]]]:
        """(item id base, sentence, template, meta) per item: templates, then rows (GEST's GenderBench subset
        rule under ``--limit``); ``meta["j"]`` is the row's position in the run."""
        rows = self._rows()
        chosen = sample_rows(len(rows), self.ctx.limit, self.ctx.seeds.items)
        return [
            (
                f"gest/{r}/t{t}",
                rows[r].sentence,
                t,
                {"row": r, "j": j, "stereotype": rows[r].stereotype, "template": t},
            )
            for t in self._template_ids()
            for j, r in enumerate(chosen)
        ]

    def rounds(self) -> Rounds:
        form = self.form()
        if form == MASKED_FORM:
            return R.masked_rounds(self.items)
        if form == CAUSAL_FORM:
            return R.causal_rounds(self.items)
        return Rounds(Round(GIVEN_FORM, self._ask_given))

    def _ask_given(self, _: Answers) -> list[Attempt]:
        """``--scores``: each item's published score, answered by the runner itself (no model)."""
        n_rows = len(self._rows())
        given = {t: read_scores(path, n_rows) for path, t in zip(self._score_files(), self._template_ids())}
        out = []
        for base, sentence, t, meta in self.items():
            v = given[t][meta["row"]]
            out.append(Attempt(base, 1, given_request(None if math.isnan(v) else v, sentence), meta))
        return out

    # -- scoring ------------------------------------------------------------------------------------------
    def item_score(self, rs: Sequence[AttemptResult]) -> tuple[float, list[int] | None]:
        """(log10 score male − female, the words' token counts for causal LMs) of one item from its
        results; :class:`~.rounds.Failed` when a request of the item failed."""
        form = self.form()
        if form == GIVEN_FORM:
            if not rs[0].ok:
                raise R.Failed
            return (float("nan") if rs[0].response is None else float(rs[0].response)), None
        if form == MASKED_FORM:
            return R.masked_score(rs), None
        return R.causal_score(rs)

    def read_item(self, rs: Sequence[AttemptResult]) -> ItemReading:
        """One item's answers read (pure: depends on these answers and the options only)."""
        try:
            s, ntok = self.item_score(rs)
        except R.Failed:
            return ItemReading(None, failed=True)
        except (TypeError, ValueError, KeyError, IndexError, AttributeError):
            return ItemReading(float("nan"), bad=True)
        return ItemReading(s, ntok)

    def _read(self, results: Sequence[AttemptResult]) -> _Read:
        """Every item's reading, and the per-row scores of each template (NaN: failed or unreadable)."""
        ids = self._template_ids()
        by_item: dict[tuple[int, int], list[int]] = {}
        for i, ar in enumerate(results):
            by_item.setdefault(R.item_key(ar.attempt.meta), []).append(i)
        stereotype = {ar.attempt.meta["j"]: ar.attempt.meta["stereotype"] for ar in results}
        row = {ar.attempt.meta["j"]: ar.attempt.meta["row"] for ar in results}
        n = len(stereotype)
        if n == 0:
            raise UsageError("gest-likelihood: no rows to score")
        readings = {key: self.read_item([results[i] for i in idx]) for key, idx in by_item.items()}
        X = {t: np.full(n, np.nan) for t in ids}
        for (t, j), item in readings.items():
            if not item.failed:
                X[t][j] = item.score
        rows = [row[j] for j in range(n)]
        return _Read(by_item, readings, X, A.one_hot([stereotype[j] for j in range(n)]), rows)

    def paired_units(self, results: Sequence[AttemptResult]) -> UnitScores:
        """What ``compare --paired`` resamples: per dataset row (id ``gest/<row>``), its score in each
        template and its stereotype (one-hot); the metrics are those of :meth:`score`, ranks without an
        interval (:data:`RANK_NO_CI`), under the task's ``--ci-method``; a stereotype's ``mean_score_i`` and
        ``r_i`` take its rows − 1 degrees of freedom."""
        ids = self._template_ids()
        got = self._read(results)
        T = len(ids)
        scores = np.vstack([np.vstack([got.X[t] for t in ids]), got.S.T])  # (T + 16) × rows
        names = self._metric_names(ids)

        def stat(s: np.ndarray, C: np.ndarray) -> dict[str, np.ndarray]:
            m = self._all_metrics(dict(zip(ids, s[:T])), s[T:].T, ids, C)
            return {k: m[:, i] for i, k in enumerate(names)}

        units = [f"gest/{r}" for r in got.rows]

        def df(s: np.ndarray) -> dict[str, float]:  # a stereotype's mean rests on its rows alone
            n_rows = s[T:].sum(axis=1)
            return {f"template_{t}/{m}_{i + 1}": n_rows[i] - 1 for t in ids for m in ("mean_score", "r")
                    for i in range(16)}  # fmt: skip

        rule = paired_rule(self.options.ci_method)
        return UnitScores(units, scores, stat, rule=rule, no_ci={"*/feminine_rank_*": RANK_NO_CI}, df=df)

    @staticmethod
    def _metric_names(ids: list[int]) -> list[str]:
        return [f"template_{t}/{m}" for t in ids for m in A.NAMES] + ["g_s_mean", "r_f_mean", "r_m_mean"]

    @staticmethod
    def _all_metrics(X: dict[int, np.ndarray], S: np.ndarray, ids: list[int], C: np.ndarray) -> np.ndarray:
        """Every metric (:meth:`_metric_names`' order) for each row of the row weight matrix C."""
        per = [A.compute(X[t], S, C) for t in ids]
        g = np.column_stack([p[:, A.G_S] for p in per]).mean(axis=1)
        rf = np.column_stack([p[:, A.R_F] for p in per]).mean(axis=1)
        rm = np.column_stack([p[:, A.R_M] for p in per]).mean(axis=1)
        return np.column_stack(per + [g, rf, rm])

    def score(self, results: Sequence[AttemptResult]) -> TaskResult:
        ids = self._template_ids()
        plan = self.rounds()
        got = self._read(results)
        by_item, readings, X, S = got.by_item, got.readings, got.X, got.S
        n = len(got.rows)
        outcome = {by_item[key][-1]: item.fields() for key, item in readings.items()}
        records = [
            _record(ar.attempt.meta, plan.name_of(ar), outcome.get(i, {})) for i, ar in enumerate(results)
        ]
        names = self._metric_names(ids)
        point, iv = self._point_and_intervals(X, S, ids, n)
        metrics = {name: self._metric(name, float(point[i]), iv, i) for i, name in enumerate(names)}
        extra: dict[str, Any] = {
            "parameters": self._parameters(ids, iv is not None),
            "counts": _counts(readings, ids, n, results),
            "stereotypes": _stereotype_table(point, names, ids),
        }
        if iv is not None and iv[:, 2].any():
            extra["nan_resamples"] = {names[i]: int(c) for i, c in enumerate(iv[:, 2]) if c}
        headline = ["g_s_mean", "r_f_mean", "r_m_mean"] + [f"template_{t}/g_s" for t in ids]
        return TaskResult(metrics=metrics, extra=extra, records=records, headline=headline)

    def _metric(self, name: str, value: float, iv: np.ndarray | None, i: int) -> Metric:
        """One metric with its interval; with the jackknife a rank has none (:data:`RANK_NO_CI`)."""
        if iv is None:
            return Metric(value, no_ci=no_ci.bootstrap_off("bootstrap_cycles"))
        if self.options.ci_method == JACKKNIFE_T and "/feminine_rank_" in name:
            return Metric(value, no_ci=RANK_NO_CI)
        return Metric(value, float(iv[i, 0]), float(iv[i, 1]))

    def _point_and_intervals(
        self, X: dict[int, np.ndarray], S: np.ndarray, ids: list[int], n: int
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """Every metric on all rows, and its interval rows (low, high, NaN resamples) over row resamples
        (None without a bootstrap)."""
        o = self.options

        def all_metrics(C: np.ndarray) -> np.ndarray:
            return self._all_metrics(X, S, ids, C)

        # the jackknife-t interval; a metric undefined in a replicate (a stereotype without rows) keeps the
        # percentile interval of the row bootstrap
        boot_method = "percentile" if o.ci_method == JACKKNIFE_T else o.ci_method
        point, iv = point_and_intervals(
            all_metrics, n, o.bootstrap_cycles, self.ctx.seeds.bootstrap, rng=PYTHON, method=boot_method,
            level=o.confidence_level,
        )  # fmt: skip
        if iv is None or o.ci_method != JACKKNIFE_T:
            return point, iv
        weights = jackknife_weights(n, self.ctx.seeds.bootstrap)
        jk = jackknife_intervals(point, all_metrics(weights), o.confidence_level)
        undefined = np.isnan(jk[:, 0])
        jk[undefined] = iv[undefined]
        return point, jk

    def _parameters(self, ids: list[int], has_ci: bool) -> dict[str, Any]:
        o = self.options
        form = self.form()
        texts: dict[int, Any] = {}
        for t in ids:
            if form == "masked" or (form == "given" and o.form == "masked"):
                texts[t] = {"male": MASKED[t].male, "female": MASKED[t].female}
            elif form == "causal" or (form == "given" and o.form == "causal"):
                c = CAUSAL[t]
                texts[t] = {"prompt": c.prompt, "male_word": c.male, "female_word": c.female}
        return {
            "form": form,
            "declared_form": o.form,
            "templates": ids,
            "template_texts": texts,
            "score_files": self._score_files() or None,
            "dataset_version": o.dataset_version,
            "dataset_sha256": self.ctx.data.sha256(VERSIONS[o.dataset_version]),
            "sample_k": self.ctx.limit,
            "ci_method": o.ci_method if has_ci else None,
            "bootstrap_cycles": o.bootstrap_cycles,
            "confidence_level": o.confidence_level,
            "seed": self.ctx.seed,
            "score_units": "log10 likelihood ratio, male − female",
            "r_i": "exp(mean log10 score) — natural exp, as in the paper",
        }

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
        empty = False
        for st in result.extra["stereotypes"]:
            cells = []
            for t in ids:
                cell = st[f"template_{t}"]
                r = cell.get("r")
                if r is None or r != r:  # None (results.json) or NaN: the stereotype has no scored row
                    empty = True
                    cells.append("–")
                else:
                    cells.append(f"{fmt(r)} ({fmt(cell['feminine_rank'], 0)})")
            table.add_row(f"{st['id']} {st['name']}", *cells)
        c = result.extra["counts"]
        note = Text(
            f"{c['rows']} rows × {c['templates']} templates; g_s > 1 = stereotypical; "
            f"{c['multi_token_words']} multi-token word scores; {c['failed_items']} failed"
        )
        parts = [metrics_table(self.name, result), table, note]
        if empty:
            limit = f" (--limit {self.ctx.limit} keeps {c['rows']} rows)" if self.ctx.limit else ""
            parts.append(Text(f"–: no scored row of this stereotype{limit}: r_i and its rank undefined"))
        return Group(*parts)
