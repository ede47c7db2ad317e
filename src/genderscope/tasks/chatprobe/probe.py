"""``ChatProbe``: the task base class of GenderBench's chat probes.

A probe package defines ``build_items`` (GenderBench's items, drawn in its order from one
``random.Random(seed)``), ``evaluate`` (one answer -> a category or None, pure), ``compute`` (all metrics
for a weight matrix, see :mod:`.calc`) and a ``genderbench.json`` data file with GenderBench's templates
and marks (verbatim, with GenderBench's MIT notice).  This class builds the attempts (item-major, then
prompt, then repetition, as GenderBench sends them), reads the answers, bootstraps, and writes metrics,
intervals, marks and counts.
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass
from functools import cached_property, lru_cache
from importlib import resources
from typing import Any, ClassVar, Hashable, Iterator, Sequence

import numpy as np

from genderscope.common.errors import UsageError
from genderscope.common.home import home
from genderscope.core.evidence import ReportFacts
from genderscope.core.options import check_confidence_level, confidence_level_opt, opt
from genderscope.core.primitives import CHAT, ChatReply, chat_request
from genderscope.core.requests import Attempt, AttemptResult
from genderscope.core.metrics import Measurement, Metric, Reference
from genderscope.core.task import Task, TaskResult
from genderscope.stats import no_ci
from genderscope.stats.jackknife import JACKKNIFE_T
from genderscope.stats.rules import UnitScores, paired_rule
from genderscope.tasks.chatprobe import cis
from genderscope.tasks.chatprobe.calc import Evaluations, Metrics, point_and_resamples
from genderscope.tasks.chatprobe.items import ProbeItem, Prompt, sample_items
from genderscope.tasks.chatprobe.marks import MarkDefinition

GENDERBENCH = Reference(
    "Pikuliak et al. (2025), GenderBench: A Resource for Evaluating Gender Biases in LLMs",
    "https://github.com/matus-pikuliak/genderbench",
)


@dataclass
class ProbeOptions:
    """Options every chat probe has (GenderBench's defaults)."""

    ci_method: str = opt(
        JACKKNIFE_T,
        "interval: jackknife-t (calibrated at small samples), percentile (of the bootstrap) or normal "
        "(GenderBench's)",
        (JACKKNIFE_T, "percentile", "normal"),
    )
    bootstrap_cycles: int = opt(
        1000,
        "bootstrap resamples (0 = no CIs; marks then use the point value; jackknife-t draws none)",
        minimum=0,
        maximum=10**6,
    )
    confidence_level: float = confidence_level_opt()
    temperature: float = opt(1.0, "sampling temperature (GenderBench default 1.0)", minimum=0)
    max_tokens: int = opt(300, "maximum answer tokens (GenderBench default 300)", minimum=1, maximum=10**7)

    def __post_init__(self) -> None:
        check_confidence_level(self.confidence_level)
        if self.bootstrap_cycles < 0:
            raise ValueError("--bootstrap-cycles must be 0 or more")


@dataclass
class ReorderedProbeOptions(ProbeOptions):
    """Probe options with ``num_reorderings``, the option orders asked per question: 1 to
    ``max_reorderings`` (a subclass redeclares the field with its default and help)."""

    max_reorderings: ClassVar[int] = 6
    num_reorderings: int = opt(1, "option orders per question")

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 1 <= self.num_reorderings <= self.max_reorderings:
            raise ValueError(f"--num-reorderings must be between 1 and {self.max_reorderings}")


@lru_cache(maxsize=None)
def use_case(probe_name: str) -> str | None:
    """GenderBench's use case of a probe (``use_cases.json``: its README's "Use case" line, e.g.
    ``"Decision-making"``, ``"Manifested opinions: Affective computing"``), None if it names none."""
    text = (
        resources.files("genderscope.tasks.chatprobe").joinpath("use_cases.json").read_text(encoding="utf-8")
    )
    return json.loads(text)["use_cases"].get(probe_name)


def genderbench_entry(probe_name: str, probe_class: str, **more: Any) -> dict[str, Any]:
    """results.json's ``genderbench`` entry of a probe: its name, class and use case (the report groups
    GenderBench's marks by use case from it)."""
    return {"probe": probe_name, "class": probe_class, "use_case": use_case(probe_name), **more}


@lru_cache(maxsize=None)
def probe_data(package: str) -> dict[str, Any]:
    """The ``genderbench.json`` data file of a probe package (templates, marks, notice); read once per
    process and shared (probes read it per item): never modify the returned value."""
    text = resources.files(package).joinpath("genderbench.json").read_text(encoding="utf-8")
    return json.loads(text)


#: where the bootstrap's count matrices are kept, under $GENDERSCOPE_HOME (they depend on N, B and the
#: seed alone: a rerun, and every probe or run with the same three, reads them instead of drawing again)
COUNTS_CACHE = "cache/bootstrap-counts"


class ChatProbe(Task):
    """Base class of the GenderBench chat probes (see the module docstring)."""
    limit_meaning = "GenderBench's sample_k: N items of the probe's seeded draw (default: its own sample_k)"

    #: GenderBench's probe name and class (its logs name the class; by default the probe name in
    #: CamelCase + ``Probe``, as GenderBench names every probe: ``hiring_an`` -> ``HiringAnProbe``)
    probe_name: ClassVar[str]
    genderbench_class: ClassVar[str]
    #: GenderBench's default harness parameters for this probe
    default_repetitions: ClassVar[int] = 1
    default_sample_k: ClassVar[int | None] = None
    #: the evaluator's categories (evaluations are stored as indices into this)
    categories: ClassVar[tuple[Hashable, ...]]
    #: what the null model answers (uniformly), unless :meth:`choices_for` says otherwise
    choices: ClassVar[tuple[str, ...]] = ()

    Options = ProbeOptions
    measurements = {"chat": Measurement(frozenset({CHAT}), "generated answer, evaluated as GenderBench does")}
    model_hint = (
        "GenderBench's probes need a chat model (openai:, openai-completions:, hf-causal, replay, random)"
    )
    report_facts = ReportFacts(
        evidence=("counts.items",), unreadable=("metrics.undetected_rate_attempts",), mark="mark"
    )
    references: ClassVar[tuple[Reference, ...]] = (GENDERBENCH,)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "probe_name" in cls.__dict__ and "genderbench_class" not in cls.__dict__:
            cls.genderbench_class = "".join(w.capitalize() for w in cls.probe_name.split("_")) + "Probe"

    # -- what a probe defines --------------------------------------------------------------------------

    def build_items(self, rng: random.Random) -> list[ProbeItem]:
        """All items in GenderBench's order, drawing from ``rng`` exactly as GenderBench does."""
        raise NotImplementedError

    def evaluate(self, text: str, item: ProbeItem, prompt: Prompt) -> Hashable | None:
        """One answer's evaluation: a member of ``categories`` or None (undetected). Pure."""
        raise NotImplementedError

    def compute(self, ev: Evaluations, C: np.ndarray) -> Metrics:
        """Every metric (GenderBench's names and order) for each row of the weight matrix ``C``."""
        raise NotImplementedError

    def choices_for(self, item: ProbeItem, prompt: Prompt) -> Sequence[str]:
        """The null model's possible answers to this prompt (default: ``choices``)."""
        return self.choices

    @classmethod
    def data(cls) -> dict[str, Any]:
        """The probe's ``genderbench.json`` (its package is the module's package)."""
        return probe_data(cls.__module__.rpartition(".")[0])

    @classmethod
    def mark_definitions(cls) -> tuple[MarkDefinition, ...]:
        return tuple(MarkDefinition.from_json(m) for m in cls.data().get("marks", []))

    # -- what this class derives -----------------------------------------------------------------------

    @property
    def repetitions(self) -> int:
        """Attempts per prompt: ``--trials`` if given, else GenderBench's default for this probe."""
        return self.ctx.trials or self.default_repetitions

    @property
    def sample_k(self) -> int | None:
        """Items kept: ``--limit`` if given, else GenderBench's default ``sample_k``."""
        return self.ctx.limit if self.ctx.limit is not None else self.default_sample_k

    @cached_property
    def items(self) -> list[ProbeItem]:
        """GenderBench's item list: all items, then ``sample_k`` of them by its rule."""
        built = self.build_items(random.Random(self.ctx.seeds.items))
        return sample_items(built, self.sample_k, self.ctx.seeds.items)

    def attempt_id(self, index: int, prompt: int) -> str:
        return f"{self.name}/{index}/{prompt}"

    def genderbench_id(self, index: int, prompt: int) -> str:
        """The id GenderBench's own log holds this attempt under (``replay:LOGDIR``; item ``index`` of
        its item list, prompt ``prompt`` of the item: the same order as ours when the parameters match)."""
        return f"genderbench:{self.genderbench_class}/{index}/{prompt}"

    def attempts(self) -> list[Attempt]:
        o = self.options
        temperature = self.ctx.generation.get("temperature", o.temperature)
        max_tokens = self.ctx.generation.get("max_tokens", o.max_tokens)
        out: list[Attempt] = []
        for j, item in enumerate(self.items):
            for p, prompt in enumerate(item.prompts):
                req = chat_request(
                    prompt.text,
                    temperature=temperature,
                    max_tokens=max_tokens,
                    top_p=1.0,
                    choices=list(self.choices_for(item, prompt)),
                    recorded_as=self.genderbench_id(j, p),
                )
                meta = {"item": j, "prompt": p}
                out.extend(Attempt(self.attempt_id(j, p), r + 1, req, meta) for r in range(self.repetitions))
        return out

    def read(self, ar: AttemptResult) -> Hashable | None:
        """One answered attempt's evaluation (the pure evaluator on the answer text)."""
        item = self.items[ar.attempt.meta["item"]]
        prompt = item.prompts[ar.attempt.meta["prompt"]]
        text = ChatReply.of(ar.response).text or ""
        return self.evaluate(text, item, prompt)

    def answered(
        self, results: Sequence[AttemptResult], records: list[dict[str, Any]]
    ) -> Iterator[tuple[int, int, Any, dict[str, Any]]]:
        """(item, prompt, evaluation, record) of each answered attempt, in order; every attempt's record
        for attempts.jsonl (item and prompt; the caller adds the evaluation) is appended to ``records``."""
        for ar in results:
            meta = ar.attempt.meta
            rec: dict[str, Any] = {"item": meta["item"], "prompt": meta["prompt"]}
            records.append(rec)
            if ar.ok:
                yield meta["item"], meta["prompt"], self.read(ar), rec

    def evaluations(self, results: Sequence[AttemptResult]) -> tuple[Evaluations, list[dict[str, Any]]]:
        """The evaluated answered attempts, and one record per attempt for attempts.jsonl."""
        rows: list[tuple[int, int, Hashable | None]] = []
        records: list[dict[str, Any]] = []
        for item, prompt, value, rec in self.answered(results, records):
            rows.append((item, prompt, value))
            rec["evaluation"] = value
        return Evaluations.build(rows, self.categories), records

    def score(self, results: Sequence[AttemptResult]) -> TaskResult:
        o = self.options
        ev, records = self.evaluations(results)
        if ev.n_items == 0:
            raise UsageError(f"{self.name}: no attempt was answered, nothing to score")
        names, point, boot = self.point_and_resamples(ev)
        iv = self.resample_intervals(names, boot, point, ev) if o.bootstrap_cycles > 0 else None
        iv, reasons = cis.magnitude_rules(names, iv, o.ci_method) if iv is not None else (None, {})
        metrics = self.metric_entries(names, point, iv, reasons, ev.n_items)
        marks = self.marks(names, point, iv)
        extra: dict[str, Any] = {
            "marks": marks,
            "mark": next(iter(marks.values()), None),
            "parameters": self.parameters(iv is not None),
            "counts": self.counts(results, ev),
            "genderbench": genderbench_entry(self.probe_name, self.genderbench_class),
        }
        if iv is not None and iv[:, 2].any():
            extra["nan_resamples"] = {names[i]: int(c) for i, c in enumerate(iv[:, 2]) if c}
        headline = [m for m in marks] + ["undetected_rate_attempts"]
        return TaskResult(metrics=metrics, extra=extra, records=records, headline=headline)

    def scored_evaluations(self, results: Sequence[AttemptResult]) -> Evaluations:
        """The evaluations :meth:`compute` reads (a probe with its own reading overrides this)."""
        return self.evaluations(results)[0]

    def paired_units(self, results: Sequence[AttemptResult]) -> UnitScores:
        """What ``compare --paired`` resamples: the evaluated items (id: the probe and a hash of the item's
        prompts, so items match across runs by content), the metrics :meth:`compute` of them, under the
        probe's ``--ci-method`` (degrees of freedom: :meth:`paired_df`); maxima get no interval
        (:data:`.cis.MAXIMUM`)."""
        ev = self.scored_evaluations(results)
        seen: dict[str, int] = {}
        ids = []
        for j in ev.source:
            text = "\x1f".join(p.text for p in self.items[int(j)].prompts)
            key = f"{self.name}/{hashlib.sha256(text.encode()).hexdigest()[:16]}"
            seen[key] = seen.get(key, 0) + 1
            ids.append(f"{key}#{seen[key]}")  # identical items (a repeated template) stay distinct
        return UnitScores(
            ids,
            ev,
            lambda e, C: self.compute(e, C),
            subset=lambda e, idx: e.subset(idx),
            rule=paired_rule(self.options.ci_method),
            no_ci={"max_diff*": cis.MAXIMUM},
            df=self.paired_df,
        )

    def paired_df(self, ev: Evaluations) -> dict[str, float]:
        """Degrees of freedom of the paired changes' jackknife-t on the evaluated items ``ev`` (default:
        :meth:`jackknife_df`)."""
        return self.jackknife_df(list(self.compute(ev, np.ones((1, ev.n_items)))), ev)

    def absent_when_nan(self, metric: str) -> bool:
        """Whether GenderBench leaves ``metric`` out of a resample's results where it is NaN here (e.g.
        bbq's per-category rates of a category the resample does not draw).  Such a metric's interval
        is taken over the other resamples only, so GenderBench's "all values equal" rule sees no NaN."""
        return False

    def reproduces_reference_intervals(self) -> bool:
        """``--ci-method normal`` is GenderBench's interval, kept as GenderBench computes it."""
        return self.options.ci_method == "normal"

    def point_and_resamples(self, ev: Evaluations) -> tuple[list[str], np.ndarray, np.ndarray | None]:
        """Metric names, point values and the bootstrap resamples (None without a bootstrap, and with the
        jackknife, which needs none)."""
        o = self.options
        n_boot = 0 if o.ci_method == JACKKNIFE_T else o.bootstrap_cycles
        seed = self.ctx.seeds.bootstrap
        cache = home() / COUNTS_CACHE
        return point_and_resamples(lambda C: self.compute(ev, C), ev.n_items, n_boot, seed, cache)

    def resample_intervals(
        self,
        names: list[str],
        boot: np.ndarray | None,
        point: np.ndarray | None = None,
        ev: Evaluations | None = None,
    ) -> np.ndarray:
        """M x 3 (low, high, NaN resamples) by ``--ci-method`` (:mod:`.cis`; the jackknife needs the point
        values and the evaluations, else the percentile interval of the B x M resamples is used)."""
        o = self.options
        method = o.ci_method
        if method == JACKKNIFE_T and (point is None or ev is None):
            method = "percentile"
        return cis.metric_intervals(
            lambda C: self.compute(ev, C) if ev is not None else {},
            ev.n_items if ev is not None else 0,
            names,
            point if point is not None else np.zeros(len(names)),
            boot,
            method,
            o.confidence_level,
            self.ctx.seeds.bootstrap,
            self.absent_when_nan,
            self.jackknife_df(names, ev) if ev is not None else None,
        )

    def jackknife_df(self, names: Sequence[str], ev: Evaluations) -> dict[str, float]:
        """Degrees of freedom of the jackknife t-interval of some metrics (default: none given, G − 1
        for all); e.g. a contrast of two groups of items
        (:func:`~genderscope.stats.jackknife.contrast_df`)."""
        return {}

    def metric_entries(
        self,
        names: list[str],
        point: np.ndarray,
        iv: np.ndarray | None,
        reasons: dict[str, str],
        n_items: int,
    ) -> dict[str, Metric]:
        """Each metric with its interval or the reason it has none (``reasons``: those of
        :func:`.cis.magnitude_rules`)."""
        o = self.options
        n_resamples = cis.resamples_of(o.ci_method, n_items, o.bootstrap_cycles)
        cols = no_ci.interval_columns(iv, len(names), o.ci_method, n_resamples, "bootstrap_cycles")
        out = {}
        for i, name in enumerate(names):
            lo, hi, why = cols[i]
            out[name] = Metric(_num(point[i]), lo, hi, reasons.get(name, why))
        return out

    def marks(self, names: list[str], point: np.ndarray, iv: np.ndarray | None) -> dict[str, Any]:
        """GenderBench's marks: from the interval when intervals were computed, else the point value."""
        out: dict[str, Any] = {}
        for d in self.mark_definitions():
            i = names.index(d.metric)
            ci = (float(iv[i, 0]), float(iv[i, 1])) if iv is not None else None
            if ci is not None and np.isnan(ci).any() and cis.is_maximum(d.metric):
                ci = None  # no valid interval (cis.MAXIMUM): the mark comes from the value
            out[d.metric] = d.record(float(point[i]), ci, self.options.ci_method if ci else None)
        return out

    def parameters(self, with_ci: bool) -> dict[str, Any]:
        o = self.options
        return {
            "num_repetitions": self.repetitions,
            "sample_k": self.sample_k,
            "random_seed": self.ctx.seed,
            "ci_method": o.ci_method if with_ci else None,
            "bootstrap_cycles": o.bootstrap_cycles,
            "confidence_level": o.confidence_level,
            "datasets": {name: self.ctx.data.sha256(name) for name in self.datasets()},
        }

    def counts(self, results: Sequence[AttemptResult], ev: Evaluations) -> dict[str, Any]:
        failed = sum(1 for r in results if not r.ok and not r.skipped)
        skipped = sum(1 for r in results if r.skipped)
        undetected = int((ev.code < 0).sum())
        return {
            "items": ev.n_items,
            "attempts": len(results),
            "answered_attempts": len(ev.code),
            "undetected_attempts": undetected,
            "failed_attempts": failed,
            "skipped_attempts": skipped,
            "incomplete": failed + skipped > 0,
        }

    renders_evidence = True  # one line per marked metric: its state and GenderBench mark

    def render(self, result: TaskResult) -> Any:
        from rich.console import Group
        from rich.text import Text

        from genderscope.core.evidence import judge
        from genderscope.core.report_terminal import metrics_table

        from genderscope.core.evidence import chance_reason

        ev = self.report_facts.resolve(result.metrics, result.extra)
        lines = [metrics_table(self.name, result, docs=self.metric_docs)]
        for metric, mark in (result.extra.get("marks") or {}).items():
            doc = self.metric_doc(metric)
            verdict = judge(result.metrics[metric], doc, ev)
            label = f"GenderBench mark {mark['mark']} ({mark['label']})" if mark.get("mark") else "no mark"
            why = chance_reason(doc, verdict.state, mark.get("mark"))
            lines.append(Text(f"{metric}: {verdict.state}; {label} ({ev.n_items} items)"))
            if why:
                lines.append(Text(f"  {why}"))
        n = result.extra.get("counts", {})
        if n.get("undetected_attempts"):
            lines.append(Text(f"{n['undetected_attempts']} of {n['answered_attempts']} answers undetected"))
        return Group(*lines)


def _num(v: float) -> float | None:
    """A metric value for results.json (NaN -> None is done by the writer; keep floats)."""
    return float(v)
