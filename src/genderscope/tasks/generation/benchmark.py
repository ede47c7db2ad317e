"""``GenerationBenchmark``: the task base class of open-ended generation audits, declared, not programmed.

A benchmark declares its prompts (:meth:`GenerationBenchmark.load_prompts`: :class:`~.prompts.GenPrompt`
with group and cluster), its default scorers, headline metrics and glossary, and picks a design
(:class:`~.designs.GroupDesign`: groups and their gap; :class:`~.designs.PairedDesign`: two versions of
each prompt and their paired differences).  The layer owns the rest:

* **requests**: ``--samples K`` per prompt; ``generate`` (plain continuation; sample k's seed from
  :func:`~.prompts.sample_seed`, shared by both versions of a pair) for base models, ``chat`` (the prompt as
  one user turn; sample k = trial k + 1) for chat models (``--form auto`` picks from the model's
  primitives); ``--max-tokens`` and ``--temperature`` (run options; the benchmark's defaults otherwise);
  every request through the response store (a rerun sends nothing, a killed run resumes, ``reparse``
  re-scores: a new ``--scorers`` costs no model call);
* **judge mode** (``--generations RUN_DIR``, what ``genderscope judge`` sets): round 0 replays the recorded
  generations as ``given`` answers, round 1 asks the run's (chat) model for each text's regard
  (:mod:`.judge`), twice with the label order swapped when ``--judge-consistency``;
* **scoring**: the scorers (``--scorers``) over the generated texts (the continuation or answer alone; the
  judge sees prompt + continuation), groups, gaps, paired differences and flips with cluster-bootstrap
  intervals (:mod:`.stats`), counts (prompts, samples, generated, failed, empty), the evidence facts.
"""

from __future__ import annotations

import dataclasses
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar, Sequence

from genderscope.common.errors import UsageError
from genderscope.core.evidence import ReportFacts
from genderscope.core.primitives import CHAT, GENERATE, ChatReply, chat_request, generate_request
from genderscope.core.requests import Attempt, AttemptResult, given_request, request_sha256
from genderscope.core.request_value import Request
from genderscope.core.rounds import Answers, Round, Rounds
from genderscope.core.task import Task, TaskResult
from genderscope.core.metrics import Measurement
from genderscope.tasks.generation.judge import ORDERS, RegardTally, judge_request, parse_verdict
from genderscope.tasks.generation.options import CHAT_FORM, GENERATE_FORM, GenerationOptions
from genderscope.tasks.generation.prompts import GenPrompt, sample_seed
from genderscope.tasks.generation.recorded import RecordedRun
from genderscope.tasks.generation.scoring import (
    ScoreTable,
    build_default_scorers,
    build_scorers,
    score_rows,
    scorer_datasets,
)
from genderscope.tasks.generation.texts import Generated, counts_of, read_generation

MEASUREMENTS = {
    GENERATE_FORM: Measurement(frozenset({GENERATE}), "sampled continuations"),
    CHAT_FORM: Measurement(frozenset({CHAT}), "sampled chat answers"),
}
GENERATE_ROUND, JUDGE_ROUND = "generate", "judge"


class GenerationBenchmark(Task):
    """Base class of declared generation audits (see the module docstring)."""

    Options: ClassVar[type] = GenerationOptions
    measurements = MEASUREMENTS
    measurement_option = "form"
    report_facts = ReportFacts(evidence=("counts.units",), unreadable=("counts.unreadable_share",))
    #: the scorers run without ``--scorers``
    default_scorers: ClassVar[tuple[str, ...]] = ("length",)
    #: the metrics shown first (terminal, report summary, ``check``), in order, where present
    headline_metrics: ClassVar[tuple[str, ...]] = ()
    default_max_tokens: ClassVar[int] = 32
    default_temperature: ClassVar[float] = 1.0
    #: the corpus the random null model draws its words from (a request hint, not part of the key), so its
    #: texts do not depend on the prompt
    null_corpus: ClassVar[str] = "wikitext-2:valid"

    #: the data-registry files the prompts come from (pinned in results.json)
    data_files: ClassVar[tuple[str, ...]] = ()

    # -- what a benchmark declares --------------------------------------------------------------------------

    def load_prompts(self) -> list[GenPrompt]:
        """Every prompt the options select, ``--limit`` applied (file order)."""
        raise NotImplementedError

    def design(self) -> Any:
        """How the texts are compared (:class:`~.designs.GroupDesign` or :class:`~.designs.PairedDesign`)."""
        raise NotImplementedError

    def datasets(self) -> list[str]:
        """The prompts' files and the files the scorers read (HurtLex's lexicon: its licence is shown)."""
        return list(dict.fromkeys([*self.data_files, *(f for s in self.scorers for f in scorer_datasets(s))]))

    def extra_tables(self) -> dict[str, Any]:
        """Further JSON entries of the results block (default: none)."""
        return {}

    # -- options, model, scorers ----------------------------------------------------------------------------

    @property
    def judging(self) -> bool:
        """Judge mode: the model judges the generations of ``--generations RUN_DIR``."""
        return bool(self.options.generations)

    def resolve_options(self, options: Any) -> Any:
        """``form`` from the model; in judge mode the recorded run's form is kept and the sha256 of its
        attempts.jsonl is filled in (a reparse of a judged run whose recorded file changed: one line)."""
        if not options.generations:
            return super().resolve_options(options)
        sha = self.recorded.sha256
        if options.generations_sha256 and options.generations_sha256 != sha:
            raise UsageError(
                f"--generations {options.generations}: its attempts.jsonl changed since it was judged "
                f"(sha256 {options.generations_sha256[:12]}… now {sha[:12]}…); judge it again"
            )
        return dataclasses.replace(options, generations_sha256=sha)

    def check_model(self) -> None:
        if self.ctx.trials is not None:
            raise UsageError(
                f"{self.name}: generation tasks take --samples K (generations per prompt), not --trials"
            )
        if self.judging:
            if CHAT not in self.ctx.request_kinds:
                raise UsageError(
                    f"{self.name} --generations: the judge must answer chat requests; "
                    f"{self.ctx.model_kind} models do not (e.g. an openai: or hf-causal: model)"
                )
            if self.options.form not in MEASUREMENTS:
                raise UsageError(
                    f"{self.name} --generations: give --form generate or chat (the recorded run's)"
                )
            _ = self.recorded
        else:
            super().check_model()
        _ = self.scorers, self.prompts  # a missing extra or a malformed prompts file: before any model loads

    @cached_property
    def built_scorers(self) -> tuple[list[Any], dict[str, str]]:
        """(the run's scorers, default scorers left out -> the extra to install), built once.  Scorers named
        by ``--scorers`` must all build (an unknown name or a missing package: one line, exit 2); of the
        benchmark's defaults, those whose package is missing are left out and named in results.json."""
        names = self.options.scorer_names(self.default_scorers)
        if self.options.scorers:
            return build_scorers(names, self.ctx.data), {}
        return build_default_scorers(names, self.ctx.data)

    @property
    def scorers(self) -> list[Any]:
        return self.built_scorers[0]

    @cached_property
    def recorded(self) -> RecordedRun:
        return RecordedRun.read(Path(self.options.generations), self.name)

    @property
    def max_tokens(self) -> int:
        return int(self.ctx.generation.get("max_tokens", self.default_max_tokens))

    @property
    def temperature(self) -> float:
        return float(self.ctx.generation.get("temperature", self.default_temperature))

    @cached_property
    def prompts(self) -> list[GenPrompt]:
        got = self.load_prompts()
        if not got:
            raise UsageError(f"{self.name}: no prompt to generate from (check --limit and the prompts file)")
        return got

    # -- questions ------------------------------------------------------------------------------------------

    def request(self, p: GenPrompt, k: int) -> Request:
        """Sample ``k`` of prompt ``p``: a ``generate`` or a ``chat`` request (see the module docstring)."""
        if self.options.form == CHAT_FORM:
            return chat_request(p.text, temperature=self.temperature, max_tokens=self.max_tokens)
        seed = sample_seed(self.ctx.seeds.generation, p.seed_unit, k)
        hints = {"corpus": self.null_corpus}
        return generate_request(
            p.text, max_tokens=self.max_tokens, seed=seed, temperature=self.temperature, hints=hints
        )

    def rounds(self) -> Rounds:
        return Rounds(Round(GENERATE_ROUND, self._ask_generations), Round(JUDGE_ROUND, self._ask_judge))

    def _ask_generations(self, _: Answers) -> list[Attempt]:
        out = []
        for p in self.prompts:
            for k in range(self.options.samples):
                req = self.request(p, k)
                meta: dict[str, Any] = {"sample": k}
                if self.judging:
                    req, meta = self._given(p.prompt_id, k, req, meta)
                out.append(Attempt(p.prompt_id, k + 1, req, meta))
        return out

    def _given(
        self, prompt_id: str, k: int, req: Request, meta: dict[str, Any]
    ) -> tuple[Request, dict[str, Any]]:
        """The recorded answer of (prompt, sample k) as a ``given`` request (its error in ``meta``)."""
        rec = self.recorded.lines.get((prompt_id, k + 1))
        if rec is None:
            return given_request(None, req.payload.get("prompt")), {**meta, "recorded_error": "not recorded"}
        if rec.request_sha256 is not None and rec.request_sha256 != request_sha256(req):
            raise UsageError(
                f"--generations {self.recorded.folder}: {prompt_id} sample {k + 1} was generated by another "
                "request than this run's (other options, seed or --max-tokens/--temperature); judge with the "
                "recorded run's settings: `genderscope judge RUN_DIR --model SPEC` copies them"
            )
        if rec.error is not None:
            meta = {**meta, "recorded_error": rec.error}
        text = req.payload.get("prompt") if req.kind == GENERATE else req.payload["messages"][-1]["content"]
        return given_request(rec.response, text), meta

    def _ask_judge(self, answers: Answers) -> list[Attempt]:
        if not self.judging:
            return []
        orders = list(ORDERS) if self.options.judge_consistency else ["a"]
        by_id = {p.prompt_id: p for p in self.prompts}
        out = []
        for ar in answers.of(GENERATE_ROUND):
            g = self.read(ar, by_id[ar.attempt.item_id])
            if g.ok:
                for o in orders:
                    meta = {"sample": g.sample, "order": o}
                    out.append(
                        Attempt(
                            f"{g.prompt.prompt_id}/judge-{o}", g.sample + 1, judge_request(g.judged, o), meta
                        )
                    )
        return out

    # -- answers ------------------------------------------------------------------------------------------

    def read(self, ar: AttemptResult, p: GenPrompt) -> Generated:
        """One generation attempt's answer (pure: the answer, the prompt and the options)."""
        return read_generation(ar, p, self.options.form)

    def generations(self, results: Sequence[AttemptResult]) -> list[Generated]:
        by_id = {p.prompt_id: p for p in self.prompts}
        return [self.read(ar, by_id[ar.attempt.item_id]) for ar in results if ar.attempt.round == 0]

    def verdicts(self, results: Sequence[AttemptResult]) -> dict[tuple[str, int], dict[str, str | None]]:
        """(prompt id, sample) -> order -> verdict (None: the judge's request failed)."""
        out: dict[tuple[str, int], dict[str, str | None]] = {}
        for ar in results:
            if ar.attempt.round != 1 or ar.skipped:
                continue
            pid = ar.attempt.item_id.rsplit("/judge-", 1)[0]
            v = parse_verdict(ChatReply.of(ar.response).text) if ar.ok else None
            out.setdefault((pid, int(ar.attempt.meta["sample"])), {})[str(ar.attempt.meta["order"])] = v
        return out

    def score_table(
        self, ok: Sequence[Generated], verdicts: dict[tuple[str, int], dict[str, str | None]]
    ) -> ScoreTable:
        """Every scorer's rows over the generated texts ``ok`` (+ the regard tally in judge mode)."""
        texts = [g.text for g in ok]
        blocks = [(s, score_rows(s, texts)) for s in self.scorers]
        if self.judging:
            tally = RegardTally(self.options.judge_consistency)
            got = [verdicts.get((g.prompt.prompt_id, g.sample), {}) for g in ok]
            second = [v.get("b") for v in got] if self.options.judge_consistency else None
            blocks.append((tally, tally.rows([v.get("a") for v in got], second)))
        return ScoreTable.of(blocks, len(ok))

    def score(self, results: Sequence[AttemptResult]) -> TaskResult:
        gens = self.generations(results)
        ok = [g for g in gens if g.ok]
        if not ok:
            first = next((ar.error for ar in results if ar.attempt.round == 0 and ar.error), None)
            raise UsageError(
                f"{self.name}: no text was generated: all {len(gens)} attempts failed"
                + (f" (the first: {first})" if first else "")
            )
        verdicts = self.verdicts(results) if self.judging else {}
        table = self.score_table(ok, verdicts)
        design = self.design()
        metrics, tables = design.evaluate(self, table, ok)
        counts = counts_of(gens, self.prompts, design.units(ok), self.options.samples, verdicts, self.judging)
        extra = {
            "counts": counts,
            "scorers": table.describe(),
            "generation": self.generation_facts(),
            **tables,
            **self.extra_tables(),
        }
        if self.built_scorers[1]:
            extra["scorers_left_out"] = self.built_scorers[1]
        if self.judging:
            extra["judged_run"] = self.recorded.describe()
        headline = [m for m in self.headline_metrics if m in metrics] or design.default_headline(metrics)
        return TaskResult(metrics, extra, self.records(results, verdicts), headline)

    def render(self, result: TaskResult) -> Any:
        """The headline metrics table, then one line per default scorer left out (the terminal adds the
        evidence line under it)."""
        from rich.console import Group
        from rich.text import Text

        from genderscope.core.report_terminal import metrics_table

        table = metrics_table(self.name, result)
        left = result.extra.get("scorers_left_out") or {}
        notes = [Text(f"scorer {k} left out: {why}", style="yellow") for k, why in left.items()]
        return Group(table, *notes) if notes else table

    def generation_facts(self) -> dict[str, Any]:
        """The sampling settings, for results.json."""
        return {
            "form": self.options.form,
            "samples": self.options.samples,
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "seeds": "sample_seed(run seed, prompt or pair id, sample)",
        }

    def records(self, results: Sequence[AttemptResult], verdicts: dict[Any, Any]) -> list[dict[str, Any]]:
        """attempts.jsonl fields: group, cluster, sample (generations); order, verdict (judge)."""
        by_id = {p.prompt_id: p for p in self.prompts}
        out: list[dict[str, Any]] = []
        for ar in results:
            k = int(ar.attempt.meta.get("sample", 0))
            if ar.attempt.round == 1:
                pid = ar.attempt.item_id.rsplit("/judge-", 1)[0]
                order = str(ar.attempt.meta["order"])
                out.append(
                    {"order": order, "sample": k + 1, "verdict": verdicts.get((pid, k), {}).get(order)}
                )
            else:
                p = by_id[ar.attempt.item_id]
                out.append({"group": p.group, "cluster": p.cluster, "sample": k + 1})
        return out
