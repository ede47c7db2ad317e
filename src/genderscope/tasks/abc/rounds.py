"""The questions ``abc`` asks, as primitive requests (GenDa Lens spec §4).

Default mode, one round: every variant sentence is scored on its own, by its log-likelihood
(``token_logprobs``, causal LMs) or pseudo-log-likelihood (``masked_logprobs``, mask = each).

genda-lens mode (GenDa Lens's procedure, masked LMs in float32), three rounds:

1. ``tokenize("")``: the tokenizer's start/end tokens (CLS/BOS, SEP/EOS) and precision;
2. ``tokenize(S + " " + reflexive sentence + " " + E)`` as literal text, looking up the ids of
   ``hans`` and ``hendes``;
3. per variant, ``masked_logprobs`` with nothing masked: the reflexive ids with the first token among
   sin/sit/sine replaced literally by the variant's id, scored at every position against the
   *reflexive* ids; cross-entropy = the answer's float32 ``loss``.

Every scoring attempt carries its :class:`~genderscope.tasks.abc.data.Triplet` and variant in ``meta``
(``stage = "score"``), so scoring needs nothing else.
"""

from __future__ import annotations

from typing import Any, Sequence

from genderscope.core.errors import UsageError
from genderscope.core.primitives import MASKED_LOGPROBS, TOKENIZE
from genderscope.core.requests import Attempt, AttemptResult, Request
from genderscope.tasks import scoring as S
from genderscope.tasks.abc import data as D
from genderscope.tasks.dawinobias.task import spread

REPLACEMENTS = ("hans", "hendes")
INFO_ID = "abc/tokenizer"


def load_triplets(data: Any, compat: bool, limit: int | None) -> list[D.Triplet]:
    """The triplets of the run: both occupation files, ``limit`` spread evenly per file."""
    out: list[D.Triplet] = []
    for g in D.GROUPS:
        text = D.read_text(data, g)
        trips = D.parse_triplets(text, g, validate=not compat)
        if compat:
            refl = D.compat_reflexives(text)
            trips = [
                D.Triplet(g, i, (refl[i],) + t.lines[1:], refl[i].split(" ")[0], t.reflexive_form)
                for i, t in enumerate(trips[: len(refl)])
            ]
        out.extend(trips[i] for i in spread(len(trips), limit))
    return out


def _variant_id(t: D.Triplet, v: int) -> str:
    return f"abc/{t.group}/{t.index}/{D.VARIANTS[v]}"


def default_round(trips: list[D.Triplet], kind: str) -> list[Attempt]:
    """Default mode: one text-score request per variant sentence."""
    return [
        Attempt(_variant_id(t, v), 1, Request(kind, S.text_score_request(t.lines[v], kind)), _meta(t, v))
        for t in trips
        for v in range(3)
    ]


def _meta(t: D.Triplet, v: int, **more: Any) -> dict[str, Any]:
    return {"stage": "score", "triplet": t, "variant": v, **more}


def compat_round(trips: list[D.Triplet]) -> list[Attempt]:
    """genda-lens mode, round 1: the tokenizer's specials; the triplets travel with it."""
    return [Attempt(INFO_ID, 1, Request(TOKENIZE, {"text": ""}), {"stage": "info", "triplets": trips})]


def next_compat_round(
    results: Sequence[AttemptResult], start_token: str | None, sep_token: str | None
) -> list[Attempt]:
    """genda-lens mode, rounds 2 and 3 (see the module docstring); [] when done."""
    stages = {r.attempt.meta.get("stage") for r in results}
    if "score" in stages:
        return []
    info = next(r for r in results if r.attempt.meta.get("stage") == "info")
    if not info.ok or not isinstance(info.response, dict):
        raise UsageError(f"abc: the model did not describe its tokenizer ({info.error or 'no answer'})")
    sp = info.response["specials"]
    if "tokens" not in stages:
        if info.response.get("dtype") not in (None, "float32"):
            raise UsageError(
                f"--mode genda-lens reproduces GenDa Lens in float32, but the model runs in "
                f"{info.response['dtype']}; pass --dtype float32 (reduced precision: --mode default only)"
            )
        start, end = start_token or sp.get("cls") or sp.get("bos"), sep_token or sp.get("sep") or sp.get("eos")
        if start is None or end is None:
            raise UsageError("abc --mode genda-lens: the tokenizer has no cls/bos or sep/eos token; pass them")
        not_special = [x for x in (start, end) if x not in {v for v in sp.values() if v}]
        out = []
        for t in info.attempt.meta["triplets"]:
            req = Request(TOKENIZE, {"text": f"{start} {t.lines[0]} {end}", "lookup": list(REPLACEMENTS)})
            meta = {"stage": "tokens", "triplet": t, "not_special": not_special}
            out.append(Attempt(f"abc/tokens/{t.group}/{t.index}", 1, req, meta))
        return out
    return _score_round(results, info.response.get("unk_id"))


def run_triplets(results: Sequence[AttemptResult]) -> list[D.Triplet]:
    """Every triplet of the run, in order (from the info attempt, or the scoring attempts)."""
    for r in results:
        if r.attempt.meta.get("stage") == "info":
            return list(r.attempt.meta["triplets"])
    return list(dict.fromkeys(r.attempt.meta["triplet"] for r in results if r.attempt.meta.get("stage") == "score"))


def _score_round(results: Sequence[AttemptResult], unk_id: int | None) -> list[Attempt]:
    out = []
    for r in results:
        meta = r.attempt.meta
        if meta.get("stage") != "tokens":
            continue
        t = meta["triplet"]
        if not r.ok:
            continue  # the triplet fails: scoring finds no answer for it and records the error
        toks, ids = r.response["tokens"], list(r.response["ids"])
        k = next((i for i, x in enumerate(toks) if x in D.COMPAT_FIND), None)
        if k is None:
            raise UsageError(
                "--mode genda-lens does not apply to this tokenizer: no token of the "
                f"tokenisation {toks} is sin/sit/sine (e.g. byte-level BPE 'Ġsin'); use --mode default"
            )
        for v in range(3):
            vid, unk = list(ids), False
            if v:
                rid = r.response["lookup"][v - 1]
                unk = rid is None or (rid == unk_id and REPLACEMENTS[v - 1] != r.response["specials"].get("unk"))
                vid[k] = unk_id if rid is None else rid
            payload = {"ids": vid, "positions": list(range(len(ids))), "targets": ids, "mask": "none"}
            extra = {"n_tokens": len(toks), "unk": unk, "not_special": meta["not_special"]}
            out.append(Attempt(_variant_id(t, v), 1, Request(MASKED_LOGPROBS, payload), _meta(t, v, **extra)))
    return out
