"""The raw-attempt sample of a run's task section: at most :data:`SAMPLE` rows, prompt shown, answers
summarised in words (a structured answer such as token log-probabilities is never dumped as JSON).

Which attempts: the scored ones (recognised by having the most task fields and a prompt): the first
half of the sample in file order, the rest evenly spaced over the file so that it covers conditions.
"""

from __future__ import annotations

from typing import Any, Callable

from genderscope.core.primitives import (
    FillMask,
    Generation,
    MaskedLogprobs,
    ProtocolError,
    TokenLogprobs,
    Tokens,
    kind_of_response,
    read_answer,
)
from genderscope.report.runs import BASE_ATTEMPT_KEYS
from genderscope.report.summary import declared_facts
from genderscope.core.textfmt import fmt

SAMPLE = 20
#: characters of a prompt or answer shown before cutting (the export has the full text)
MAX_TEXT = 600
#: at most this many of the task's own fields become columns
MAX_FIELDS = 6
#: attempts read per task before sampling (bounds time and memory on very large runs)
MAX_SCAN = 50_000


def cut(x: Any, n: int = MAX_TEXT) -> str:
    s = "" if x is None else (x if isinstance(x, str) else fmt(x))
    return s if len(s) <= n else s[:n] + f"… [{len(s) - n} more characters]"


def _top_predictions(a: FillMask) -> str:
    tops = [f"{p.decoded or p.token} ({fmt(p.logprob)})" for p in a.top[:5]]
    return "top predictions (log-prob): " + ", ".join(tops)


def _cross_entropy(a: MaskedLogprobs) -> str:
    return f"mean cross-entropy {fmt(a.loss)} nats over {len(a.logprobs)} positions"


def _logprob_sum(a: TokenLogprobs) -> str:
    lps = [v for v in a.logprobs if isinstance(v, (int, float))]
    return f"{len(a.tokens)} tokens, sum of log-probs {fmt(float(sum(lps)))} nats"


def _token_list(a: Tokens) -> str:
    toks = a.tokens
    return f"{len(toks)} tokens: " + cut(" ".join(str(t) for t in toks[:30]), 200) if toks else "no tokens"


def _continuation(a: Generation) -> str:
    return cut(a.text or "") or "(empty continuation)"


#: answer view -> the answer in words
SUMMARIES: dict[type, Callable[[Any], str]] = {
    FillMask: _top_predictions,
    MaskedLogprobs: _cross_entropy,
    TokenLogprobs: _logprob_sum,
    Tokens: _token_list,
    Generation: _continuation,
}


def response_text(resp: Any, kind: str | None = None) -> str:
    """An answer in words: text as is; a structured answer summarised through its request ``kind``'s view
    (None: the kind is recognised from the answer, for lines written before they recorded it)."""
    if resp is None:
        return "(no answer)"
    if isinstance(resp, str):
        return cut(resp)
    if not isinstance(resp, dict):
        return cut(fmt(resp))
    try:
        view = read_answer(kind or kind_of_response(resp) or "", resp)
    except (ProtocolError, KeyError, TypeError, AttributeError):
        view = None
    summarise = SUMMARIES.get(type(view))
    if summarise is not None:
        return summarise(view)
    return cut(", ".join(f"{k}: {fmt(v)}" for k, v in list(resp.items())[:6]))


def _text_field(rec: dict[str, Any]) -> str | None:
    """The task's record field that shows an attempt's text (``ReportFacts.attempt_text``)."""
    return declared_facts(str(rec.get("task", ""))).attempt_text


def _prompt(rec: dict[str, Any]) -> str:
    p = rec.get("prompt")
    if isinstance(p, str) and p.strip():
        return cut(p)
    key = _text_field(rec)
    if key and isinstance(rec.get(key), str) and rec[key].strip():
        return cut(rec[key])
    return "(no text prompt: a tokenizer or model-information request)"


def sample(records: list[dict[str, Any]], n: int = SAMPLE) -> list[dict[str, Any]]:
    """At most ``n`` informative records, evenly spaced over ``records`` (see the module docstring)."""

    def richness(r: dict[str, Any]) -> int:
        return sum(1 for k in r if k not in BASE_ATTEMPT_KEYS) + (
            1 if str(r.get("prompt") or "").strip() else 0
        )

    if not records:
        return []
    best = max(richness(r) for r in records)
    pool = [r for r in records if richness(r) == best]
    if len(pool) <= n:
        return pool
    head = n // 2  # the first ones in file order, then the rest spread over the file
    rest = pool[head:]
    step = len(rest) / (n - head)
    return pool[:head] + [rest[int(i * step)] for i in range(n - head)]


def attempt_table(records: list[dict[str, Any]]) -> tuple[list[str], list[list[str]]]:
    """(columns, rows) of the sample: item, trial, prompt, answer, the task's fields (short ones first)."""
    fields: list[str] = []
    for rec in records:
        for k, v in rec.items():
            if k in BASE_ATTEMPT_KEYS or k in fields or k == _text_field(rec):
                continue
            if isinstance(v, (dict, list)) and len(fmt(v)) > 40:
                continue
            fields.append(k)
    fields = fields[:MAX_FIELDS]
    cols = (
        ["item_id", "trial", "prompt", "response"]
        + fields
        + (["error"] if any("error" in r for r in records) else [])
    )
    rows = []
    for rec in records:
        row = []
        for c in cols:
            if c == "prompt":
                row.append(_prompt(rec))
            elif c == "response":
                row.append(response_text(rec.get("response"), rec.get("request_kind")))
            elif c == "error":
                row.append(cut(rec.get("error")))
            else:
                row.append(fmt(rec.get(c)))
        rows.append(row)
    return cols, rows


def task_samples(run: Any, n: int = SAMPLE) -> dict[str, list[dict[str, Any]]]:
    """Per task of ``run``, its sample (reads at most :data:`MAX_SCAN` attempts per task)."""
    seen: dict[str, list[dict[str, Any]]] = {t: [] for t in run.tasks}
    for rec in run.iter_attempts():
        bucket = seen.setdefault(str(rec.get("task", "?")), [])
        if len(bucket) < MAX_SCAN:
            bucket.append(rec)
        elif all(len(v) >= MAX_SCAN for v in seen.values()):
            break
    return {t: sample(recs, n) for t, recs in seen.items()}
