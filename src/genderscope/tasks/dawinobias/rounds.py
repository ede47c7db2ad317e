"""The questions ``dawinobias`` asks, round by round, as primitive requests (GenDa Lens spec §3).

top-1 scoring (masked LMs):

1. ``info``: ``tokenize("")`` for the tokenizer's special tokens and precision; in default mode also
   ``tokenize(" " + pronoun)`` for the pieces of each pronoun (§3.2 step 5.3).
2. genda-lens mode, ``fill``: ``fill_mask`` of ``left + M + right`` (M = the mask token, or
   ``--mask-token``; ``--glue-mask`` drops the space before a ``<mask>``, GenDa Lens's DanskBert rule,
   §3.1 step 6).  Default mode, ``encode``: ``tokenize`` of that text with special tokens, then
3. ``fill``: ``fill_mask`` at the mask position of those ids, with a lone word-boundary piece
   (``▁``/``Ġ``) right before the mask removed (§3.2 step 4).

candidate scoring, one round (``candidate``): one text score (``token_logprobs`` = LL, or
``masked_logprobs`` = PLL) per candidate sentence ``left + w + right``, w the female and male pronoun of
the slot.

The items are read again from the data whenever they are needed; every attempt's ``meta`` holds only its
own item (condition, line, text, left, right, gold, flags) and what it asks about it.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from genderscope.tasks.genda_kit import INFO, info_tokens  # noqa: F401
from genderscope.common.errors import UsageError
from genderscope.core.primitives import Tokens, fill_mask_request, text_score_request, tokenize_request
from genderscope.core.requests import Attempt, AttemptResult
from genderscope.core.rounds import Answers, Round, Rounds
from genderscope.tasks.dawinobias import data as D

PRONOUNS = ("hun", "hende", "hendes", "han", "ham", "hans")
NULL_CHOICES = ["hun", "han", "hende", "ham", "hendes", "hans", "det", "##en"]
BOUNDARY_PIECES = ("\u2581", "\u0120")  # SentencePiece ▁ and byte-level Ġ
INFO_ID = "dawinobias/tokenizer"
#: the rounds; with ``PIECES`` (the pronoun pieces asked in round ``info``) the ``stage`` of the records
ENCODE, FILL, CANDIDATE, PIECES = "encode", "fill", "candidate", "pieces"

Items = Callable[[], list[dict[str, Any]]]


def item_id(item: dict[str, Any]) -> str:
    return f"dawinobias/{item['condition']}/{item['line']}"


def stage(plan: Rounds, result: AttemptResult) -> str:
    """What an attempt asked: its round's name, ``pieces`` for a pronoun's tokenisation."""
    name = plan.name_of(result)
    return PIECES if name == INFO and "pronoun" in result.attempt.meta else name


def candidate_rounds(items: Items, kind: str) -> Rounds:
    """Candidate scoring: one text-score request per (item, candidate word)."""

    def ask(_: Answers) -> list[Attempt]:
        out = []
        for it in items():
            orig = D.default_text(it["text"])[len(it["left"]) : len(it["left"]) + len(it["gold"])]
            f, m = D.candidate_texts(D.MaskedInput(it["left"], it["right"], it["gold"]), orig)
            for gender, w in (("female", f), ("male", m)):
                req = text_score_request(it["left"] + w + it["right"], kind)
                out.append(
                    Attempt(
                        f"{item_id(it)}/{gender}", 1, req, {**it, "candidate": w, "candidate_gender": gender}
                    )
                )
        return out

    return Rounds(Round(CANDIDATE, ask))


def top1_rounds(items: Items, compat: bool, mask_token: str | None, glue: bool) -> Rounds:
    """top-1 scoring: the rounds of the module docstring (two in genda-lens mode, three in default mode)."""

    def ask_info(_: Answers) -> list[Attempt]:
        out = [Attempt(INFO_ID, 1, tokenize_request(""))]
        if not compat:
            for w in PRONOUNS:
                out.append(
                    Attempt(f"dawinobias/pronoun_pieces/{w}", 1, tokenize_request(" " + w), {"pronoun": w})
                )
        return out

    def ask_masked(answers: Answers) -> list[Attempt]:
        info = info_tokens(answers)
        if compat and info.dtype not in (None, "float32"):
            raise UsageError(
                f"--mode genda-lens reproduces GenDa Lens in float32, but the model runs in {info.dtype}; "
                "pass --dtype float32 (reduced precision: --mode default only)"
            )
        mask = mask_token or info.specials.mask
        if not mask:
            raise UsageError("dawinobias top-1 scoring needs a masked LM: the tokenizer has no mask token")
        warn = bool(mask_token) and mask_token != info.specials.mask
        out = []
        for it in items():
            text = masked_text(it["left"], it["right"], mask, glue and compat)
            meta = {**it, "input": text, "mask_warn": warn}
            if compat:
                req = fill_mask_request(text, top_k=1, choices=NULL_CHOICES)
                out.append(Attempt(item_id(it), 1, req, meta))
            else:
                req = tokenize_request(text, add_special_tokens=True)
                out.append(Attempt(f"dawinobias/encode/{it['condition']}/{it['line']}", 1, req, meta))
        return out

    def ask_fills(answers: Answers) -> list[Attempt]:
        return _fill_from_ids(answers.of(ENCODE), mask_token or info_tokens(answers).specials.mask or "")

    if compat:
        return Rounds(Round(INFO, ask_info), Round(FILL, ask_masked))
    return Rounds(Round(INFO, ask_info), Round(ENCODE, ask_masked), Round(FILL, ask_fills))


def masked_text(left: str, right: str, mask: str, glue: bool) -> str:
    """``left + mask + right``; with ``glue`` (GenDa Lens's DanskBert rule) `` <mask>`` becomes ``<mask>``."""
    if glue and mask == "<mask>" and left.endswith(" "):
        left = left[:-1]
    return left + mask + right


def _fill_from_ids(encoded: Sequence[AttemptResult], mask: str) -> list[Attempt]:
    out = []
    for r in encoded:
        if not r.ok:
            continue
        answer = Tokens.of(r.response)
        ids, toks = list(answer.ids), list(answer.tokens)
        if toks.count(mask) != 1:
            continue  # scored as a failed line: the encoded input has no single mask token
        k = toks.index(mask)
        if k > 0 and toks[k - 1] in BOUNDARY_PIECES:
            del ids[k - 1]
            k -= 1
        req = fill_mask_request(ids=ids, position=k, top_k=1, choices=NULL_CHOICES)
        out.append(Attempt(item_id(r.attempt.meta), 1, req, r.attempt.meta))
    return out
