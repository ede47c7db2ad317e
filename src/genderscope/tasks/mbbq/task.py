"""Task ``mbbq``: MBBQ (Neplenbroek et al. 2024, "MBBQ: A Dataset for Cross-Lingual Comparison of Stereotypes
in Generative LLMs"), Gender_identity, in English, Spanish, Dutch and Turkish, with its control set.

Each row of each language's MBBQ and control file is asked with each of MBBQ's five prompts (``--prompts``)
in that language, as one user turn (greedy, at most 100 new tokens: MBBQ's ``ask_model``); the reply is
read by MBBQ's answer detection (:mod:`.detect`).  Metrics per language (:mod:`.metrics`): accuracy and bias
scores in ambiguous and disambiguated contexts, the control set's, and the bias scores corrected by the
control set's.  Intervals: the jackknife-t over BBQ's templates (``question_index``: every language, set and
prompt of a template left out together), its degrees of freedom the effective number of templates − 1.
``--limit N``: the first N rows of every file.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from genderscope.common.errors import UsageError
from genderscope.core.evidence import ReportFacts
from genderscope.core.options import opt
from genderscope.core.primitives import CHAT, ChatReply, chat_request
from genderscope.core.requests import Attempt, AttemptResult
from genderscope.core.task import Task, TaskResult
from genderscope.core.metrics import Measurement, Metric
from genderscope.stats.rules import IntervalRule, rule_intervals
from genderscope.tasks.mbbq.data import SETS, Row, data_file, load_rows, prompt_text
from genderscope.tasks.mbbq.detect import LANGUAGES, detect
from genderscope.tasks.mbbq.metrics import COUNTS, answer_counts, effective_df, mbbq_metrics
from genderscope.tasks.scored.docs import load_docs

PROMPTS = (1, 2, 3, 4, 5)
#: every metric's interval: the jackknife-t over templates (degrees of freedom: metrics.effective_df)
JACKKNIFE = IntervalRule(jackknife_metrics=("*",))
#: MBBQ's ask_model: greedy (do_sample=False), max_new_tokens=100
TEMPERATURE, MAX_TOKENS = 0.0, 100


@dataclass
class MbbqOptions:
    languages: list[str] = opt(list(LANGUAGES), "languages asked, comma-separated", LANGUAGES)
    prompts: list[int] = opt(list(PROMPTS), "which of MBBQ's five prompts (1-5), comma-separated")
    control: bool = opt(True, "also ask the control set: its accuracy and the corrected bias scores")
    n_boot: int = opt(
        1000,
        "0 = no intervals; else 95% intervals by the jackknife-t over templates (nothing drawn)",
        minimum=0,
    )

    def __post_init__(self) -> None:
        self.languages = list(dict.fromkeys(self.languages))  # each asked once
        self.prompts = list(dict.fromkeys(self.prompts))
        bad = [p for p in self.prompts if p not in PROMPTS]
        if bad or not self.prompts:
            raise ValueError(
                f"--prompts: {bad[0] if bad else 'none'} is not a prompt; MBBQ's are 1, 2, 3, 4, 5"
            )
        if not self.languages:
            raise ValueError(f"--languages: none given; MBBQ has {', '.join(LANGUAGES)}")


class MbbqTask(Task):
    name = "mbbq"
    description = (
        "MBBQ Gender_identity in en/es/nl/tr: accuracy and bias scores per language, with the control set"
    )
    Options = MbbqOptions
    measurements = {CHAT: Measurement(frozenset({CHAT}), "MBBQ's five prompts, the reply read by its rules")}
    metric_docs, references = load_docs(__file__)
    report_facts = ReportFacts(evidence=("counts.detected",), unreadable=("counts.undetected_share",))

    def sets(self) -> tuple[str, ...]:
        return SETS if self.options.control else SETS[:1]

    def datasets(self) -> list[str]:
        return [data_file(lang, which) for lang in self.options.languages for which in self.sets()]

    def rows(self) -> list[Row]:
        """Every row asked, language by language, MBBQ before control, in file order."""
        return [
            row
            for lang in self.options.languages
            for which in self.sets()
            for row in load_rows(self.ctx.data, lang, which, self.ctx.limit)
        ]

    def attempts(self) -> list[Attempt]:
        g = self.ctx.generation
        temperature, max_tokens = g.get("temperature", TEMPERATURE), g.get("max_tokens", MAX_TOKENS)
        out = []
        for row in self.rows():
            for p in self.options.prompts:
                msgs = [{"role": "user", "content": prompt_text(row, p)}]
                req = chat_request(
                    msgs, temperature=temperature, max_tokens=max_tokens, choices=["A", "B", "C"]
                )
                out.append(Attempt(f"mbbq/{row.key}/p{p}", 1, req))
        return out

    def read(self, ar: AttemptResult, row: Row) -> int | None:
        """The option the reply picks (MBBQ's detection), None when undetected."""
        return detect(row.options, ChatReply.of(ar.response).text, row.unknown, row.lang)

    def score(self, results: Sequence[AttemptResult]) -> TaskResult:
        rows = {row.key: row for row in self.rows()}
        blocks = [(lang, which) for lang in self.options.languages for which in self.sets()]
        templates = {t: j for j, t in enumerate(dict.fromkeys(r.template for r in rows.values()))}
        T = np.zeros((len(templates), len(blocks) * len(COUNTS)))
        records, failed = [], 0
        for ar in results:
            row = rows[ar.attempt.item_id.split("/", 1)[1].rsplit("/", 1)[0]]
            if not ar.ok:
                failed += 1
                records.append({})
                continue
            code = self.read(ar, row)
            b = blocks.index((row.lang, row.which)) * len(COUNTS)
            T[templates[row.template], b : b + len(COUNTS)] += answer_counts(
                code, row.disamb, row.label, row.unknown, row.target
            )
            records.append(_record(code, row))
        return self._result(T, blocks, records, failed, rows)

    def _result(self, T: np.ndarray, blocks: list, records: list, failed: int, rows: dict) -> TaskResult:
        answered = int(T[:, :: len(COUNTS)].sum())
        if answered == 0:
            raise UsageError(f"{self.name}: no answer was read ({failed} failed; see attempts.jsonl)")
        o = self.options
        names, point, cols = rule_intervals(
            lambda C: mbbq_metrics(C, T, blocks), T.shape[0], np.arange(T.shape[0]), o.n_boot,
            0, JACKKNIFE, effective_df(T, blocks),
        )  # fmt: skip
        metrics = {
            k: Metric(_num(point[i]), lo, hi, why) for i, (k, (lo, hi, why)) in enumerate(zip(names, cols))
        }
        undetected = int(T[:, 1 :: len(COUNTS)].sum())
        counts = {
            "attempts": answered + failed, "answered": answered, "detected": answered - undetected,
            "undetected": undetected, "undetected_share": undetected / answered, "failed": failed,
            "templates": int(T.shape[0]),
            "rows_without_target": _without_target(rows.values()),
        }  # fmt: skip
        extra = {"counts": counts, "languages": list(o.languages), "prompts": list(o.prompts)}
        headline = [f"{m}_{lang}" for lang in o.languages for m in HEADLINE if f"{m}_{lang}" in metrics]
        return TaskResult(metrics, extra, records, headline)


HEADLINE = ("bias_score_ambig", "corrected_bias_score_ambig", "bias_score_disambig", "control_accuracy")


def _without_target(rows: Any) -> dict[str, int]:
    """Per language/set: rows without exactly one stereotyped answer (left out of the bias scores)."""
    out: dict[str, int] = {}
    for r in rows:
        out[f"{r.lang}/{r.which}"] = out.get(f"{r.lang}/{r.which}", 0) + (r.target is None)
    return out


def _record(code: int | None, row: Row) -> dict[str, Any]:
    if code is None:
        return {"detected": None, "answer": "undetected"}
    kind = "unknown" if code == row.unknown else "target" if code == row.target else "other person"
    return {"detected": code, "answer": row.options[code], "kind": kind, "correct": code == row.label}


def _num(v: Any) -> float | None:
    x = float(v)
    return None if np.isnan(x) else x
