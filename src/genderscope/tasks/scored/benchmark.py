"""``ScoredBenchmark``: the task base class of likelihood benchmarks, declared rather than programmed.

A benchmark declares

* its **items** (:meth:`ScoredBenchmark.load_items`, from the data registry, in file order), each with its
  candidates (:class:`~.items.Choice`: a context and continuations; whole sentences = an empty context)
  and the fields its metrics read;
* its **metrics** (:meth:`ScoredBenchmark.compute`): a function of the per-item scores
  (:class:`~.items.Scores`) and a weight matrix C (resamples × items), vectorised with :mod:`.weights`, so
  one call gives the point value (a row of ones) and every bootstrap resample;
* optionally ``analytic(scores)`` for metrics whose intervals come from a model fit (regressions), and
  ``tables(scores)`` for per-group tables.

The layer owns the rest: the requests (``loglikelihood`` for causal LMs: one request per item, its
context computed once for all continuations; ``masked_logprobs`` with mask = each for masked LMs: the
pseudo-log-likelihood of every candidate text), the measurement choice from the model's primitives
(``--scoring auto``), the store and reparse (through the runner), ``--limit`` (the first N items in file
order, as lm-evaluation-harness's ``--limit``), failed items (counted, left out), the bootstrap over items
(or their ``cluster``), the intervals from :mod:`genderscope.stats`, the counts and the report facts.
"""

from __future__ import annotations

from abc import abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar, Sequence

import numpy as np

from genderscope.common.errors import UsageError
from genderscope.core.evidence import ReportFacts
from genderscope.core.options import opt
from genderscope.core.primitives import (
    LOGLIKELIHOOD,
    MASKED_LOGPROBS,
    Loglikelihoods,
    MaskedLogprobs,
    loglikelihood_request,
    masked_logprobs_request,
)
from genderscope.core.requests import Attempt, AttemptResult
from genderscope.core.metrics import Measurement, Metric
from genderscope.core.task import Task, TaskResult
from genderscope.stats.rules import (
    FEW_UNITS,
    MIN_UNITS,
    IntervalRule,
    rule_intervals,
)
from genderscope.tasks.scored.items import ScoredItem, Scores, stack_fields

LOGLIK, PLL = "loglik", "pll"
MEASUREMENTS = {
    LOGLIK: Measurement(
        frozenset({LOGLIKELIHOOD}), "Σ ln p of each candidate after its context (lm-eval's loglikelihood)"
    ),
    PLL: Measurement(
        frozenset({MASKED_LOGPROBS}), "PLL (pseudo log-likelihood) of each candidate text, masked LM"
    ),
}


@dataclass
class ScoredOptions:
    """Options every scored benchmark has (a benchmark's own Options subclass this)."""

    scoring: str = opt(
        "auto",
        "how candidates are scored: auto (from the model), loglik (causal LMs: Σ ln p after the context), "
        "pll (masked LMs: pseudo-log-likelihood of each candidate text)",
        ("auto", LOGLIK, PLL),
    )
    n_boot: int = opt(1000, "bootstrap resamples of the items for the 95% intervals (0 = no intervals)")
    bootstrap_seed: int = opt(0, "seed of the bootstrap resamples (numpy generator)")

    def __post_init__(self) -> None:
        if self.n_boot < 0:
            raise ValueError(f"--n-boot must be >= 0, got {self.n_boot}")


class ScoredBenchmark(Task):
    """Base class of declared likelihood benchmarks (see the module docstring)."""
    limit_meaning = "the first N items in file order (lm-evaluation-harness's --limit)"

    Options: ClassVar[type] = ScoredOptions
    measurements = MEASUREMENTS
    measurement_option = "scoring"
    report_facts = ReportFacts(evidence=("counts.scored",), unreadable=("counts.failed_share",))
    #: the metrics shown first (terminal, report summary), in order
    headline_metrics: ClassVar[tuple[str, ...]] = ()
    #: the interval rule of :mod:`genderscope.stats.intervals` for the bootstrap metrics
    ci_method: ClassVar[str] = "percentile"
    #: metric-name patterns (fnmatch) whose interval is the jackknife-t over the resampling units instead
    #: (:mod:`genderscope.stats.jackknife`; the same ``compute``, point values unchanged), where the
    #: percentile bootstrap under-covers on the null model (docs/decisions.md)
    jackknife_metrics: ClassVar[tuple[str, ...]] = ()
    #: fewer resampling units than this: no interval (:data:`MIN_UNITS`); fewer than ``few_units``: every
    #: metric gets the jackknife-t (:data:`FEW_UNITS`)
    min_units: ClassVar[int] = MIN_UNITS
    few_units: ClassVar[int] = FEW_UNITS

    # -- what a benchmark declares ----------------------------------------------------------------------

    @abstractmethod
    def load_items(self) -> list[ScoredItem]:
        """Every item the options select, in file order (``--limit`` is applied by the layer)."""

    @abstractmethod
    def compute(self, s: Scores, C: np.ndarray) -> dict[str, np.ndarray]:
        """Every bootstrap metric: name -> one value per row of the weight matrix ``C`` (rows × N)."""

    def analytic(self, s: Scores) -> dict[str, Metric]:
        """Metrics whose intervals come from a model fit rather than the bootstrap (default: none)."""
        return {}

    def tables(self, s: Scores) -> dict[str, Any]:
        """Further JSON entries of the results block (e.g. per-group tables; default: none)."""
        return {}

    def record(self, item: ScoredItem, ll: np.ndarray) -> dict[str, Any]:
        """attempts.jsonl fields of an item's attempts, from its candidate scores (default: none)."""
        return {}

    # -- what the layer derives ---------------------------------------------------------------------------

    def items(self) -> list[ScoredItem]:
        """The items asked: the first ``--limit`` of :meth:`load_items` (all without a limit)."""
        items = self.load_items()
        if self.ctx.limit is not None:
            items = items[: self.ctx.limit]
        if not items:
            raise UsageError(f"{self.name}: no items to score (check --limit and the task's filters)")
        return items

    def attempts(self) -> list[Attempt]:
        if self.options.scoring == PLL:
            return [
                Attempt(f"{it.item_id}/{k}", 1, masked_logprobs_request(text, mask="each"), {"candidate": k})
                for it in self.items()
                for k, text in enumerate(it.candidates.texts())
            ]
        return [
            Attempt(
                it.item_id, 1, loglikelihood_request(it.candidates.context, list(it.candidates.continuations))
            )
            for it in self.items()
        ]

    def scores(self, results: Sequence[AttemptResult]) -> tuple[Scores, list[ScoredItem], np.ndarray]:
        """(scores of the items whose every candidate was scored, the failed items, the N_all × K matrix of
        candidate scores of all items, NaN where missing)."""
        items = self.items()
        index = {it.item_id: i for i, it in enumerate(items)}
        k_max = max(len(it.candidates.continuations) for it in items)
        ll = np.full((len(items), k_max), np.nan)
        nt = np.zeros((len(items), k_max))
        for ar in results:
            if not ar.ok:
                continue
            if self.options.scoring == PLL:
                i, k = index[ar.attempt.item_id.rsplit("/", 1)[0]], int(ar.attempt.meta["candidate"])
                m = MaskedLogprobs.of(ar.response)
                ll[i, k], nt[i, k] = float(np.sum(np.asarray(m.logprobs, dtype=np.float64))), len(m.logprobs)
            else:
                i, a = index[ar.attempt.item_id], Loglikelihoods.of(ar.response)
                ll[i, : len(a.logprobs)], nt[i, : len(a.n_tokens)] = a.logprobs, a.n_tokens
        width = np.array([len(it.candidates.continuations) for it in items])
        ok = np.array([not np.isnan(ll[i, : width[i]]).any() for i in range(len(items))], dtype=bool)
        kept = [it for it, good in zip(items, ok) if good]
        failed = [it for it, good in zip(items, ok) if not good]
        s = Scores(ll[ok], nt[ok], stack_fields(kept), kept)
        return s, failed, ll

    def clusters(self, s: Scores) -> np.ndarray:
        """The resampling unit of each item: index of its ``cluster`` (the item itself when it has none)."""
        labels = [it.cluster or it.item_id for it in s.items]
        uniq = {c: j for j, c in enumerate(dict.fromkeys(labels))}
        return np.array([uniq[c] for c in labels], dtype=np.int64)

    @classmethod
    def interval_rule(cls) -> IntervalRule:
        """The task's small-sample interval rule (its ``ci_method``, ``jackknife_metrics``, ``min_units``,
        ``few_units``): used for its metrics and for their paired changes (``compare --paired``)."""
        return IntervalRule(cls.ci_method, tuple(cls.jackknife_metrics), cls.min_units, cls.few_units)

    def bootstrap_metrics(self, s: Scores) -> dict[str, Metric]:
        """Point value and interval of every metric of :meth:`compute` (items, or their clusters, drawn
        with replacement: numpy generator, ``--bootstrap-seed``), by :func:`rule_intervals`."""
        o = self.options
        names, point, cols = rule_intervals(
            lambda C: self.compute(s, C),
            s.n,
            self.clusters(s),
            o.n_boot,
            o.bootstrap_seed,
            self.interval_rule(),
        )
        return {
            k: Metric(_num(point[i]), lo, hi, why) for i, (k, (lo, hi, why)) in enumerate(zip(names, cols))
        }

    def score(self, results: Sequence[AttemptResult]) -> TaskResult:
        s, failed, ll_all = self.scores(results)
        if s.n == 0:
            raise UsageError(f"{self.name}: no item was scored ({len(failed)} failed; see attempts.jsonl)")
        metrics = {**self.bootstrap_metrics(s), **self.analytic(s)}
        skipped = skipped_items(results, self.options.scoring == PLL)
        failed = [it for it in failed if it.item_id not in skipped]  # a replay without their answers
        n_all = s.n + len(failed)
        counts = {
            "items": n_all + len(skipped),
            "scored": s.n,
            "failed": len(failed),
            "failed_share": len(failed) / n_all,
            "failed_items": [it.item_id for it in failed][:20],
            "skipped": len(skipped),
        }
        extra = {"counts": counts, "scoring": self.options.scoring, **self.tables(s)}
        headline = [m for m in self.headline_metrics if m in metrics] or list(metrics)[:6]
        return TaskResult(metrics, extra, self._records(results, ll_all), headline)

    def _records(self, results: Sequence[AttemptResult], ll_all: np.ndarray) -> list[dict[str, Any]]:
        items = self.items()
        index = {it.item_id: i for i, it in enumerate(items)}
        out = []
        for ar in results:
            key = ar.attempt.item_id if self.options.scoring != PLL else ar.attempt.item_id.rsplit("/", 1)[0]
            i = index[key]
            out.append(self.record(items[i], ll_all[i]) if ar.ok else {})
        return out


def skipped_items(results: Sequence[AttemptResult], per_candidate: bool) -> set[str]:
    """Ids of the items with an attempt a replay skipped (``--replay-missing skip``): not asked, so neither
    scored nor failed (``per_candidate``: attempt ids are ``ITEM/k``)."""
    ids = (ar.attempt.item_id for ar in results if ar.skipped)
    return {i.rsplit("/", 1)[0] for i in ids} if per_candidate else set(ids)


def _num(v: Any) -> float | None:
    x = float(v)
    return None if np.isnan(x) else x
