"""Task ``winobias-adjectives``: does adding gender-associated adjectives change a chat model's
WinoBias bias score?  (Briegel & Chen 2023; spec ``winobias_adjectives.md``.)

Attempts: condition x (pro, anti) x evaluated line x trial; one user turn with the exact prompt
of §4 at temperature 1.0.  Scoring: both parsers on every reply, accuracy / bias per condition
and trial, then the replicate (§6.2) and default (§6.3) statistics.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any, Sequence

import numpy as np

from genderscope.common.errors import UsageError
from genderscope.core.jsonutil import JoinedRecord, SharedFields
from genderscope.core.primitives import CHAT, ChatReply, chat_request
from genderscope.core.requests import Attempt, AttemptResult
from genderscope.core.metrics import Measurement, Metric, Reference
from genderscope.core.metrics import revised
from genderscope.core.task import Task, TaskResult
from genderscope.core.evidence import ReportFacts
from genderscope.tasks.winobias_adjectives.glossary import METRIC_DOCS
from genderscope.data.winobias_records import WinoBiasSet
from genderscope.data.winobias import load_pairs
from genderscope.stats import no_ci
from genderscope.data.winobias_conditions import (
    BASELINE,
    Condition,
    adjectives_for,
    build_prompt,
    condition_id,
    insert_adjectives,
    select_conditions,
)
from genderscope.tasks.winobias_adjectives.options import (
    WinoBiasAdjectivesOptions,
)
from genderscope.tasks.winobias_adjectives.parse_robust import ROBUST_PARSER_VERSION, robust_parse
from genderscope.tasks.winobias_adjectives.parse_strict import CLASSES, gold_word, strict_parse
from genderscope.tasks.winobias_adjectives.render import render_result
from genderscope.tasks.winobias_adjectives.summary import summarise
from genderscope.tasks.references import WINOBIAS

SPEC_VERSION = "1.0"
LABELS = ("pro", "anti")


def reply_text(response: Any) -> tuple[str | None, str | None]:
    """(text, finish_reason) of a chat response (see :class:`~genderscope.core.primitives.ChatReply`)."""
    reply = ChatReply.of(response)
    return reply.text, reply.finish_reason


class WinoBiasAdjectivesTask(Task):
    limit_meaning = 'the first N sentence pairs, in file order'
    name = "winobias-adjectives"
    description = (
        "WinoBias + gender-associated adjectives (Briegel & Chen 2023): do adjectives change a chat "
        "model's coreference bias?"
    )
    Options = WinoBiasAdjectivesOptions
    metric_docs = revised(
        METRIC_DOCS,
        bounds={"bias_none_none": (-100.0, 100.0), "bias_*": (-100.0, 100.0), "diff_*": (-200.0, 200.0)},
        chance={"bias_none_none": 0.0},
    )
    report_facts = ReportFacts(
        evidence=("summary.0.n_items",),
        unreadable=("summary.0.answers_pro.other", "summary.0.answers_anti.other"),
        unreadable_percent=True,
    )
    references = (
        Reference(
            "Briegel and Chen (2023), Adjectives Can Reveal Gender Biases Within NLP Models",
            "https://github.com/hannahxchen/winobias-adjective-test",
        ),
        WINOBIAS,
    )
    measurements = {"chat": Measurement(frozenset({CHAT}), "generated answer, parsed")}

    def __init__(self, options: Any, ctx: Any):
        super().__init__(options, ctx)
        self.started = _dt.datetime.now().isoformat(timespec="seconds")
        self.conds: list[Condition] = select_conditions(options.conditions)
        self.trials = 5 if ctx.trials is None else int(ctx.trials)
        if self.trials < 1:
            raise UsageError("--trials must be at least 1")
        from genderscope.data.winobias import check_combination

        check_combination(options.release, options.type, options.split)
        _ = options.exclude_set  # validate early
        self._set: WinoBiasSet | None = None

    # -- data ---------------------------------------------------------------------------------------
    def wb(self) -> WinoBiasSet:
        if self._set is None:
            o = self.options
            self._set = load_pairs(self.ctx.data, o.release, o.type, o.split, o.exclude_set, o.on_parse_error)
            if self.ctx.limit is not None:
                self._set.pairs = self._set.pairs[: max(0, int(self.ctx.limit))]
            if not self._set.pairs:
                raise UsageError(
                    "winobias-adjectives: no pairs left to evaluate (check --limit and --exclude)"
                )
        return self._set

    def datasets(self) -> list[str]:
        return list(self.wb().files) + ["winobias/male_occupations.txt", "winobias/female_occupations.txt"]

    @property
    def sampling(self) -> dict[str, Any]:
        return {
            "temperature": float(self.ctx.generation.get("temperature", 1.0)),
            "max_tokens": int(self.ctx.generation.get("max_tokens", 16)),
        }

    def item_prefix(self) -> str:
        o = self.options
        return f"winobias-adjectives/{o.release}/type{o.type}-{o.split}"

    # -- attempts -----------------------------------------------------------------------------------
    def attempts(self) -> list[Attempt]:
        o = self.options
        ws = self.wb()
        prefix = self.item_prefix()
        sampling = self.sampling
        out: list[Attempt] = []
        self._items: list[SharedFields] = []
        n_lines, trials = len(ws.pairs), self.trials
        for ci, cond in enumerate(self.conds):
            cid = condition_id(cond, o.placement)
            for si, label in enumerate(LABELS):
                for li, pair in enumerate(ws.pairs):
                    line = pair.pro if label == "pro" else pair.anti
                    a1, a2 = adjectives_for(line, cond, o.placement)
                    prompt = build_prompt(insert_adjectives(line, a1, a2), line.pronoun)
                    req = chat_request(
                        prompt,
                        **sampling,
                        choices=[gold_word(line.entity1), gold_word(line.entity2)],
                    )
                    item_id = f"{prefix}/{cid}/{label}/{pair.line}"
                    info = SharedFields(
                        {
                            "release": o.release,
                            "wb_type": o.type,
                            "split": o.split,
                            "line": pair.line,
                            "condition": cond.slug,
                            "placement": o.placement,
                            "label": label,
                            "entities": [line.entity1, line.entity2],
                            "referent": line.referent,
                            "other": line.other,
                            "referent_stereotype": line.referent_gender,
                            "pronoun": line.pronoun,
                            "pronoun_gender": line.pronoun_gender,
                            "adjective_entity1": a1,
                            "adjective_entity2": a2,
                            "flags": list(pair.flags),
                        }
                    )
                    k = len(self._items)
                    self._items.append(info)
                    # one meta dict shared by the item's trials; f0 = flat index of (c, s, l, trial 1) in
                    # the (condition, label, line, trial) answer array of score()
                    meta = {"k": k, "c": ci, "s": si, "l": li, "f0": ((ci * 2 + si) * n_lines + li) * trials}
                    for t in range(1, trials + 1):
                        out.append(Attempt(item_id, t, req, meta))
        return out

    # -- scoring ------------------------------------------------------------------------------------
    def classify(self, info: dict[str, Any], response: Any) -> dict[str, Any]:
        """Both parsers on one reply -> the per-record parse fields."""
        text, finish = reply_text(response)
        ex, scls = strict_parse(text, info["referent"], info["other"])
        adj = {info["entities"][0]: info["adjective_entity1"], info["entities"][1]: info["adjective_entity2"]}
        rob = robust_parse(
            text,
            info["referent"],
            info["other"],
            adj[info["referent"]],
            adj[info["other"]],
            bool(self.options.map_adjective_echo),
        )
        active = scls if self.options.parser == "strict" else rob.cls
        return {
            "finish_reason": finish,
            "strict": {"extraction": ex, "class": scls},
            "robust": rob.to_json(),
            "answer_class": active,
        }

    def score(self, results: Sequence[AttemptResult]) -> TaskResult:
        o = self.options
        ws = self.wb()
        if not hasattr(self, "_items"):
            self.attempts()
        K, N, T = len(self.conds), len(ws.pairs), self.trials
        cls_index = {c: i for i, c in enumerate(CLASSES)}
        echo = bool(o.map_adjective_echo)
        records: list[JoinedRecord] = []
        flat: list[int] = []  # flat index into answers[c, s, l, t] of each answered attempt
        codes: list[int] = []  # its class code (index in CLASSES)
        n_truncated = 0
        # replies repeat: parse each distinct (reply, referent, other) once (plus the adjectives when
        # map_adjective_echo makes them matter); records share the item's and the parse's fields
        memo: dict[tuple[Any, ...], tuple[SharedFields, int, bool]] = {}
        items = self._items
        for ar in results:
            m = ar.attempt.meta
            info = items[m["k"]]
            if not ar.ok:
                records.append(JoinedRecord(info))
                continue
            resp = ar.response
            plain = resp is None or type(resp) is str
            key = (plain, resp if plain else repr(resp), info["referent"], info["other"])
            if echo:
                key += (info["adjective_entity1"], info["adjective_entity2"], info["entities"][0])
            hit = memo.get(key)
            if hit is None:
                parsed = self.classify(info, resp)
                hit = memo[key] = (
                    SharedFields(parsed),
                    cls_index[parsed["answer_class"]],
                    parsed["finish_reason"] == "length",
                )
            records.append(JoinedRecord(info, hit[0]))
            flat.append(m["f0"] + ar.attempt.trial - 1)
            codes.append(hit[1])
            n_truncated += hit[2]
        answers = np.zeros((K, 2, N, T), dtype=np.int8)
        have = np.zeros((K, 2, N, T), dtype=bool)
        answers.flat[flat] = codes
        have.flat[flat] = True
        meta = self.run_metadata(ws, n_truncated)
        missing = int((~have).sum())
        if missing:
            meta["incomplete"] = True
            meta["missing_attempts"] = missing
            return TaskResult(extra={"run": meta, "summary": []}, records=records, headline=[])
        summary = self.summarise(answers)
        metrics: dict[str, Metric] = {}
        no_boot = no_ci.bootstrap_off("bootstrap_samples") if self.options.bootstrap_samples == 0 else None
        for row in summary:
            # intervals over lines (trials averaged per line), by --ci-method
            metrics[f"bias_{row['condition']}"] = Metric(
                row["bias"], row["bias_ci95_low"], row["bias_ci95_high"], no_ci=no_boot
            )
            if row["diff"] is not None:
                metrics[f"diff_{row['condition']}"] = Metric(
                    row["diff"], row["ci95_low"], row["ci95_high"], no_ci=no_boot
                )
        meta["ended"] = _dt.datetime.now().isoformat(timespec="seconds")
        return TaskResult(
            metrics=metrics,
            extra={"run": meta, "summary": summary},
            records=records,
            headline=[f"bias_{BASELINE}"] + [f"diff_{c.slug}" for c in self.conds[1:]],
        )

    def run_metadata(self, ws: WinoBiasSet, n_truncated: int) -> dict[str, Any]:
        o = self.options
        data = self.ctx.data
        return {
            "task": "winobias_adjectives",
            "spec_version": SPEC_VERSION,
            "release": o.release,
            "wb_type": o.type,
            "split": o.split,
            "data_sha256": {n: data.sha256(n) for n in self.datasets()},
            "n_items": len(ws.pairs),
            "n_female_first": ws.n_female_first,
            "excluded": ws.excluded,
            "flag_counts": ws.flag_counts,
            "n_truncated": n_truncated,
            "conditions": [c.slug for c in self.conds],
            "placement": o.placement,
            "parse_mode": o.parser,
            "robust_parser_version": ROBUST_PARSER_VERSION,
            "stats_mode": o.stats,
            "trials": self.trials,
            "model_kind": self.ctx.model_kind,
            "model": getattr(self.ctx, "model_target", "") or None,
            "model_snapshot": None,
            "sampling": {**self.sampling, "top_p": "provider default"},
            "seed_policy": "the task sends no seed; each (item id, trial) is its own request and cache "
            "entry; a backend that sends seeds derives them from (item id, trial) (openai: first 8 "
            "bytes of sha256('<item id>#<trial>'))",
            "bootstrap_samples": o.bootstrap_samples,
            "ci_method": o.ci_method,
            "bootstrap_seed": o.bootstrap_seed,
            "alpha": o.alpha,
            "map_adjective_echo": o.map_adjective_echo,
            "limit": self.ctx.limit,
            "started": self.started,
        }

    def summarise(self, answers: np.ndarray) -> list[dict[str, Any]]:
        """Per-condition rows of spec §6.5 from class codes ``answers[c, s, l, t]`` (0 = correct)."""
        return summarise(answers, self.conds, self.options)

    def render(self, result: TaskResult) -> Any:
        return render_result(result)
