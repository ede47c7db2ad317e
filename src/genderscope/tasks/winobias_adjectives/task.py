"""Task ``winobias-adjectives``: does adding gender-associated adjectives change a chat model's
WinoBias bias score?  (Briegel & Chen 2023; spec ``winobias_adjectives.md``.)

Attempts: condition x (pro, anti) x evaluated line x trial; one user turn with the exact prompt
of §4 at temperature 1.0.  Scoring: both parsers on every reply, accuracy / bias per condition
and trial, then the replicate (§6.2) and default (§6.3) statistics.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from genderscope.core.errors import UsageError
from genderscope.core.jsonutil import JoinedRecord, SharedFields
from genderscope.core.options import opt
from genderscope.core.requests import CHAT, Attempt, AttemptResult, Request
from genderscope.core.task import Metric, Task, TaskResult, Measurement
from genderscope.datasets.winobias import RELEASES, WinoBiasSet, load_pairs, parse_exclude_flags
from genderscope.stats import no_ci
from genderscope.tasks.winobias_adjectives import stats as S
from genderscope.tasks.winobias_adjectives.conditions import (
    BASELINE,
    PLACEMENTS,
    Condition,
    adjectives_for,
    build_prompt,
    condition_id,
    insert_adjectives,
    select_conditions,
)
from genderscope.tasks.winobias_adjectives.parse_robust import ROBUST_PARSER_VERSION, robust_parse
from genderscope.tasks.winobias_adjectives.parse_strict import CLASSES, gold_word, strict_parse

SPEC_VERSION = "1.0"
LABELS = ("pro", "anti")
#: ``bias_<condition>`` is reported without an interval: its uncertainty enters the paired CI of ``diff_``
BIAS_NO_CI = "the item-level paired bootstrap CI is on diff_<condition>; trial SD: bias_sd in the summary"
DEFAULTS = {
    "release": "head",
    "type": 1,
    "split": "dev",
    "placement": "position",
    "parser": "robust",
    "stats": "default",
    "exclude": "not_minimal_pair",
}
PRESETS = {
    "replicate": {
        "release": "2018-03-authors",
        "type": 1,
        "split": "test",
        "placement": "position",
        "parser": "strict",
        "stats": "replicate",
        "exclude": "none",
    }
}


@dataclass
class WinoBiasAdjectivesOptions:
    preset: str | None = opt(
        None,
        "replicate = release 2018-03-authors, type 1, test, strict parser, replicate "
        "statistics, nothing excluded (explicit options still win)",
        ("replicate",),
    )
    release: str | None = opt(None, "WinoBias release (default head)", RELEASES)
    type: int | None = opt(None, "WinoBias type 1 or 2 (default 1)")
    split: str | None = opt(None, "dev or test (default dev)", ("dev", "test"))
    conditions: str = opt("all", "comma-separated condition slugs (the baseline none_none is always added)")
    placement: str | None = opt(None, "which mention gets which adjective (default position)", PLACEMENTS)
    parser: str | None = opt(None, "answer parser driving the metrics (default robust)", ("robust", "strict"))
    stats: str | None = opt(None, "statistics reported (default default)", ("default", "replicate"))
    exclude: str | None = opt(
        None, "comma-separated flags whose pairs are dropped, or none (default not_minimal_pair)"
    )
    on_parse_error: str = opt("raise", "what to do with unparseable lines", ("raise", "exclude"))
    bootstrap_samples: int = opt(10_000, "item-level paired bootstrap replicates (0 = no CIs)")
    bootstrap_seed: int = opt(0, "seed of the bootstrap (NumPy PCG64)")
    alpha: float = opt(0.05, "significance level")
    map_adjective_echo: bool = opt(False, "robust parser: map an echoed adjective to the entity carrying it")

    def __post_init__(self) -> None:
        preset = PRESETS.get(self.preset or "", {})
        for name, default in DEFAULTS.items():
            if getattr(self, name) is None:
                setattr(self, name, preset.get(name, default))
        if self.type not in (1, 2):
            raise ValueError("--type must be 1 or 2")
        if self.bootstrap_samples < 0:
            raise ValueError("--bootstrap-samples must be >= 0")
        if not 0 < self.alpha < 1:
            raise ValueError("--alpha must be between 0 and 1")

    @property
    def exclude_set(self) -> frozenset[str]:
        return parse_exclude_flags(self.exclude)


def reply_text(response: Any) -> tuple[str | None, str | None]:
    """(text, finish_reason) of a chat response: a string, None, or a dict with text/content."""
    if response is None or isinstance(response, str):
        return response, None
    if isinstance(response, dict):
        text = response.get("text", response.get("content"))
        return (text if isinstance(text, str) or text is None else str(text)), response.get("finish_reason")
    return str(response), None


class WinoBiasAdjectivesTask(Task):
    name = "winobias-adjectives"
    description = (
        "WinoBias + gender-associated adjectives (Briegel & Chen 2023): do adjectives change a chat "
        "model's coreference bias?"
    )
    Options = WinoBiasAdjectivesOptions
    measurements = {"chat": Measurement(frozenset({CHAT}), "generated answer, parsed")}

    def __init__(self, options: Any, ctx: Any):
        super().__init__(options, ctx)
        self.started = _dt.datetime.now().isoformat(timespec="seconds")
        self.conds: list[Condition] = select_conditions(options.conditions)
        self.trials = 5 if ctx.trials is None else int(ctx.trials)
        if self.trials < 1:
            raise UsageError("--trials must be at least 1")
        from genderscope.datasets.winobias import check_combination

        check_combination(options.release, options.type, options.split)
        _ = options.exclude_set  # validate early
        self._set: WinoBiasSet | None = None

    def check_model(self) -> None:
        if CHAT not in self.ctx.request_kinds:
            raise UsageError(
                f"task winobias-adjectives needs a chat model (openai:, replay:, random); "
                f"{self.ctx.model_kind!r} cannot chat"
            )

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
                    req = Request(
                        CHAT,
                        {"messages": [{"role": "user", "content": prompt}], **sampling},
                        hints={"choices": [gold_word(line.entity1), gold_word(line.entity2)]},
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
            metrics[f"bias_{row['condition']}"] = Metric(row["bias"], no_ci=BIAS_NO_CI)
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
            "seed_policy": "the task sends no seed; each (item id, trial) is its own request and cache entry; "
            "a backend that sends seeds derives them from (item id, trial) (openai: first 8 "
            "bytes of sha256('<item id>#<trial>'))",
            "bootstrap_samples": o.bootstrap_samples,
            "bootstrap_seed": o.bootstrap_seed,
            "alpha": o.alpha,
            "map_adjective_echo": o.map_adjective_echo,
            "limit": self.ctx.limit,
            "started": self.started,
        }

    def summarise(self, answers: np.ndarray) -> list[dict[str, Any]]:
        """Per-condition rows of spec §6.5 from class codes ``answers[c, s, l, t]`` (0 = correct)."""
        o = self.options
        K, _, N, T = answers.shape
        correct = answers == 0
        counts = correct.sum(axis=2)  # K x 2 x T
        acc = 100.0 * counts / N
        bias_t = acc[:, 0, :] - acc[:, 1, :]  # K x T
        rep = [S.replicate_summary(counts[c, 0], counts[c, 1], N) for c in range(K)]
        for c in range(1, K):
            S.replicate_test(rep[c], rep[0], T)
        welch = [S.welch_p(bias_t[c], bias_t[0]) if c else (None, None, None) for c in range(K)]
        p_holm = [None] + S.holm_adjust([w[2] for w in welch[1:]])
        ci = np.full((K, 2), np.nan)
        if o.bootstrap_samples > 0 and K > 1:
            d = 100.0 / T * (correct[:, 0].astype(np.float64) - correct[:, 1]).sum(axis=2)  # K x N
            ci[1:] = S.item_paired_bootstrap(d[1:].T, d[0], o.bootstrap_samples, o.bootstrap_seed)
        rows = []
        for c, cond in enumerate(self.conds):
            base = c == 0
            if o.stats == "replicate":
                acc_pro = [round(x / 10, 1) for x in S.replicate_accuracy_tenths(counts[c, 0], N)]
                acc_anti = [round(x / 10, 1) for x in S.replicate_accuracy_tenths(counts[c, 1], N)]
                bias_trials = [b / 10 for b in rep[c].b_tenths]
                bias, bias_sd = rep[c].m, (rep[c].s if T > 1 else None)
                diff = None if base else rep[c].diff
                significant = (
                    None if base or rep[c].p is None else bool(rep[c].p < o.alpha)
                )  # None: untestable
            else:
                acc_pro, acc_anti = acc[c, 0].tolist(), acc[c, 1].tolist()
                bias_trials = bias_t[c].tolist()
                bias = float(bias_t[c].mean())
                bias_sd = float(np.std(bias_t[c], ddof=1)) if T > 1 else None
                diff = None if base else float(bias - bias_t[0].mean())
                significant = None if base or p_holm[c] is None else bool(p_holm[c] < o.alpha)
            breakdown = []
            for s in range(2):
                codes = answers[c, s]
                breakdown.append(
                    (
                        {k: 100.0 * float((codes == i).sum()) / (N * T) for k, i in zip(CLASSES, range(4))},
                        [{k: int((codes[:, t] == i).sum()) for i, k in enumerate(CLASSES)} for t in range(T)],
                    )
                )
            rows.append(
                {
                    "condition": cond.slug,
                    "male_adjective": cond.male,
                    "female_adjective": cond.female,
                    "placement": o.placement,
                    "n_items": N,
                    "n_trials": T,
                    "acc_pro": acc_pro,
                    "acc_anti": acc_anti,
                    "bias_trials": bias_trials,
                    "bias": bias,
                    "bias_sd": bias_sd,
                    "diff": diff,
                    "answers_pro": breakdown[0][0],
                    "answers_anti": breakdown[1][0],
                    "counts_pro": breakdown[0][1],
                    "counts_anti": breakdown[1][1],
                    "p_replicate": None if base else rep[c].p,
                    "t_replicate": None if base else rep[c].t,
                    "p_welch": None if base else welch[c][2],
                    "t_welch": None if base else welch[c][0],
                    "df_welch": None if base else welch[c][1],
                    "p_holm": None if base else p_holm[c],
                    "test": None
                    if base
                    else (
                        "one-sided pooled t-test on rounded summaries"
                        if o.stats == "replicate"
                        else "two-sided Welch t-test, Holm-adjusted"
                    ),
                    "ci95_low": None if base or np.isnan(ci[c, 0]) else float(ci[c, 0]),
                    "ci95_high": None if base or np.isnan(ci[c, 1]) else float(ci[c, 1]),
                    "significant": significant,
                    "stats_mode": o.stats,
                    "parse_mode": o.parser,
                }
            )
        return rows

    def render(self, result: TaskResult) -> Any:
        from rich.console import Group
        from rich.table import Table
        from rich.text import Text

        run = result.extra.get("run", {})
        rows = result.extra.get("summary") or []
        if not rows:
            return Text(
                f"winobias-adjectives: incomplete run ({run.get('missing_attempts', '?')} attempts "
                "without an answer); rerun to fill them in"
            )
        replicate = run.get("stats_mode") == "replicate"
        pname = "p (one-sided)" if replicate else "p (Holm)"
        table = Table(
            title=f"winobias-adjectives — {run['release']} type {run['wb_type']} {run['split']}, "
            f"{run['n_items']} pairs × {run['trials']} trials"
        )
        for col, just in (
            ("male adj.", "left"),
            ("female adj.", "left"),
            ("bias", "right"),
            ("diff", "right"),
            (pname, "right"),
        ):
            table.add_column(col, justify=just, no_wrap=True)
        if not replicate:
            table.add_column("95% CI of diff", justify="right", no_wrap=True)
        for r in rows:
            p = r["p_replicate"] if replicate else r["p_holm"]
            cells = [
                r["male_adjective"] or "—",
                r["female_adjective"] or "—",
                _f1(r["bias"]),
                "—" if r["diff"] is None else _f1(r["diff"]),
                _fp(p, r["diff"] is None, run.get("alpha", 0.05)),
            ]
            if not replicate:
                cells.append(
                    "—" if r["ci95_low"] is None else f"[{_f1(r['ci95_low'])}, {_f1(r['ci95_high'])}]"
                )
            table.add_row(*cells)
        note = Text(
            f"bias = acc(pro) − acc(anti) in points; diff vs none_none; * p > {run['alpha']}; parser "
            f"{run['parse_mode']}, stats {run['stats_mode']}; truncated replies: {run['n_truncated']}",
            style="dim",
        )
        return Group(table, note)


def _f1(x: float | None) -> str:
    if x is None:
        return "—"
    s = f"{x:.1f}"
    return "0.0" if s == "-0.0" else s.replace("-", "−")


def _fp(p: float | None, baseline: bool, alpha: float = 0.05) -> str:
    """p with three decimals ("0.000" below 0.0005), ``*`` when p > alpha (published: alpha = 0.05)."""
    if baseline:
        return "—"
    if p is None:
        return "n/a"
    return f"{p:.3f}" + ("*" if p > alpha else "")
