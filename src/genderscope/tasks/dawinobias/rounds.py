"""The questions ``dawinobias`` asks, round by round, as primitive requests (GenDa Lens spec §3).

top-1 scoring (masked LMs):

1. ``info``: ``tokenize("")`` for the tokenizer's special tokens and precision; in default mode also
   ``tokenize(" " + pronoun)`` for the pieces of each pronoun (§3.2 step 5.3).
2. genda-lens mode: ``fill_mask`` of ``left + M + right`` (M = the mask token, or ``--mask-token``;
   ``--glue-mask`` drops the space before a ``<mask>``, GenDa Lens's DanskBert rule, §3.1 step 6).
   Default mode: ``tokenize`` of that text with special tokens, then
3. ``fill_mask`` at the mask position of those ids, with a lone word-boundary piece (``▁``/``Ġ``)
   right before the mask removed (§3.2 step 4).

candidate scoring: one text score (``token_logprobs`` = LL, or ``masked_logprobs`` = PLL) per
candidate sentence ``left + w + right``, w the female and male pronoun of the slot.

Every attempt's ``meta`` carries its item (condition, line, text, left, right, gold, flags) and its
``stage``; the info attempt also carries the list of all items, so scoring needs nothing else.
"""

from __future__ import annotations

from typing import Any, Sequence

from genderscope.core.errors import UsageError
from genderscope.core.primitives import FILL_MASK, TOKENIZE
from genderscope.core.requests import Attempt, AttemptResult, Request
from genderscope.tasks import scoring as S
from genderscope.tasks.dawinobias import data as D

PRONOUNS = ("hun", "hende", "hendes", "han", "ham", "hans")
NULL_CHOICES = ["hun", "han", "hende", "ham", "hendes", "hans", "det", "##en"]
BOUNDARY_PIECES = ("\u2581", "\u0120")  # SentencePiece ▁ and byte-level Ġ
INFO_ID = "dawinobias/tokenizer"


def item_id(item: dict[str, Any]) -> str:
    return f"dawinobias/{item['condition']}/{item['line']}"


def info_round(items: list[dict[str, Any]], with_pieces: bool) -> list[Attempt]:
    """Round 1 of top-1 scoring: the tokenizer's specials (+ pronoun pieces in default mode)."""
    out = [Attempt(INFO_ID, 1, Request(TOKENIZE, {"text": ""}), {"stage": "info", "items": items})]
    if with_pieces:
        for w in PRONOUNS:
            req = Request(TOKENIZE, {"text": " " + w})
            out.append(Attempt(f"dawinobias/pronoun_pieces/{w}", 1, req, {"stage": "pieces", "pronoun": w}))
    return out


def candidate_round(items: list[dict[str, Any]], kind: str) -> list[Attempt]:
    """Candidate scoring: one text-score request per (item, candidate word)."""
    out = []
    for it in items:
        orig = D.default_text(it["text"])[len(it["left"]) : len(it["left"]) + len(it["gold"])]
        f, m = D.candidate_texts(D.MaskedInput(it["left"], it["right"], it["gold"]), orig)
        for gender, w in (("female", f), ("male", m)):
            req = Request(kind, S.text_score_request(it["left"] + w + it["right"], kind))
            meta = {**it, "stage": "candidate", "candidate": w, "candidate_gender": gender}
            out.append(Attempt(f"{item_id(it)}/{gender}", 1, req, meta))
    return out


def masked_text(left: str, right: str, mask: str, glue: bool) -> str:
    """``left + mask + right``; with ``glue`` (GenDa Lens's DanskBert rule) `` <mask>`` becomes ``<mask>``."""
    if glue and mask == "<mask>" and left.endswith(" "):
        left = left[:-1]
    return left + mask + right


def info_result(results: Sequence[AttemptResult]) -> AttemptResult:
    info = next(r for r in results if r.attempt.meta.get("stage") == "info")
    if not info.ok or not isinstance(info.response, dict):
        raise UsageError(
            f"dawinobias: the model did not describe its tokenizer ({info.error or 'no answer'})"
        )
    return info


def next_top1_round(
    results: Sequence[AttemptResult], compat: bool, mask_token: str | None, glue: bool
) -> list[Attempt]:
    """Rounds 2 and 3 of top-1 scoring (see the module docstring); [] when done."""
    stages = {r.attempt.meta.get("stage") for r in results}
    info = info_result(results)
    if "fill" in stages:
        return []
    if "encode" in stages:
        return _fill_from_ids(results, info.response["specials"]["mask"] if not mask_token else mask_token)
    resp = info.response
    if compat and resp.get("dtype") not in (None, "float32"):
        raise UsageError(
            f"--mode genda-lens reproduces GenDa Lens in float32, but the model runs in {resp['dtype']}; "
            "pass --dtype float32 (reduced precision: --mode default only)"
        )
    mask = mask_token or resp["specials"]["mask"]
    if not mask:
        raise UsageError("dawinobias top-1 scoring needs a masked LM: the tokenizer has no mask token")
    warn = bool(mask_token) and mask_token != resp["specials"]["mask"]
    out = []
    for it in info.attempt.meta["items"]:
        text = masked_text(it["left"], it["right"], mask, glue and compat)
        meta = {**it, "input": text, "mask_warn": warn}
        if compat:
            req = Request(FILL_MASK, {"text": text, "top_k": 1}, hints={"choices": NULL_CHOICES})
            out.append(Attempt(item_id(it), 1, req, {**meta, "stage": "fill"}))
        else:
            req = Request(TOKENIZE, {"text": text, "add_special_tokens": True})
            out.append(
                Attempt(
                    f"dawinobias/encode/{it['condition']}/{it['line']}", 1, req, {**meta, "stage": "encode"}
                )
            )
    return out


def _fill_from_ids(results: Sequence[AttemptResult], mask: str) -> list[Attempt]:
    out = []
    for r in results:
        meta = r.attempt.meta
        if meta.get("stage") != "encode" or not r.ok:
            continue
        ids, toks = list(r.response["ids"]), list(r.response["tokens"])
        if toks.count(mask) != 1:
            continue  # scored as a failed line: the encoded input has no single mask token
        k = toks.index(mask)
        if k > 0 and toks[k - 1] in BOUNDARY_PIECES:
            del ids[k - 1]
            k -= 1
        req = Request(FILL_MASK, {"ids": ids, "position": k, "top_k": 1}, hints={"choices": NULL_CHOICES})
        out.append(Attempt(item_id(meta), 1, req, {**meta, "stage": "fill"}))
    return out
