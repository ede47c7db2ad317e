"""The questions ``abc`` asks, as primitive requests, in rounds (GenDa Lens spec §4).

Default mode, one round (``score``): every variant sentence is scored on its own, by its log-likelihood
(``token_logprobs``, causal LMs) or pseudo-log-likelihood (``masked_logprobs``, mask = each).

genda-lens mode (GenDa Lens's procedure, masked LMs in float32), three rounds:

1. ``info``: ``tokenize("")``, the tokenizer's start/end tokens (CLS/BOS, SEP/EOS) and precision;
2. ``tokens``: ``tokenize(S + " " + reflexive sentence + " " + E)`` as literal text per triplet, looking
   up the ids of ``hans`` and ``hendes``;
3. ``score``: per variant, ``masked_logprobs`` with nothing masked: the reflexive ids with the first token
   among sin/sit/sine replaced literally by the variant's id, scored at every position against the
   *reflexive* ids; cross-entropy = the answer's float32 ``loss``.

The triplets are read again from the data whenever they are needed; every attempt's ``meta`` holds only
its own :class:`~genderscope.tasks.abc.data.Triplet` (and, when scoring, its variant).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from genderscope.common.errors import UsageError
from genderscope.core.primitives import Tokens, masked_logprobs_request, text_score_request, tokenize_request
from genderscope.core.requests import Attempt, AttemptResult
from genderscope.core.rounds import Answers, Round, Rounds
from genderscope.tasks.abc import data as D
from genderscope.tasks.genda_kit import info_tokens
from genderscope.tasks.genda_kit import spread

REPLACEMENTS = ("hans", "hendes")
INFO_ID = "abc/tokenizer"
#: the rounds (their names are the ``stage`` of the attempts.jsonl records)
INFO, TOKENS, SCORE = "info", "tokens", "score"


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


def _meta(t: D.Triplet, v: int, **more: Any) -> dict[str, Any]:
    return {"triplet": t, "variant": v, **more}


def default_rounds(trips: Callable[[], list[D.Triplet]], kind: str) -> Rounds:
    """Default mode: one text-score request per variant sentence."""

    def ask_scores(_: Answers) -> list[Attempt]:
        return [
            Attempt(_variant_id(t, v), 1, text_score_request(t.lines[v], kind), _meta(t, v))
            for t in trips()
            for v in range(3)
        ]

    return Rounds(Round(SCORE, ask_scores))


def compat_rounds(
    trips: Callable[[], list[D.Triplet]], start_token: str | None, sep_token: str | None
) -> Rounds:
    """genda-lens mode: the three rounds of the module docstring."""

    def ask_info(_: Answers) -> list[Attempt]:
        return [Attempt(INFO_ID, 1, tokenize_request(""))]

    def ask_tokens(answers: Answers) -> list[Attempt]:
        info = info_tokens(answers, "abc")
        if info.dtype not in (None, "float32"):
            raise UsageError(
                f"--mode genda-lens reproduces GenDa Lens in float32, but the model runs in "
                f"{info.dtype}; pass --dtype float32 (reduced precision: --mode default only)"
            )
        sp = info.specials
        start, end = start_token or sp.cls or sp.bos, sep_token or sp.sep or sp.eos
        if start is None or end is None:
            raise UsageError(
                "abc --mode genda-lens: the tokenizer has no cls/bos or sep/eos token; pass them"
            )
        not_special = [x for x in (start, end) if x not in sp.strings()]
        out = []
        for t in trips():
            req = tokenize_request(f"{start} {t.lines[0]} {end}", lookup=list(REPLACEMENTS))
            out.append(
                Attempt(f"abc/tokens/{t.group}/{t.index}", 1, req, {"triplet": t, "not_special": not_special})
            )
        return out

    def ask_scores(answers: Answers) -> list[Attempt]:
        return _compat_scores(answers.of(TOKENS), info_tokens(answers, "abc").unk_id)

    return Rounds(Round(INFO, ask_info), Round(TOKENS, ask_tokens), Round(SCORE, ask_scores))


def _compat_scores(tokens: Sequence[AttemptResult], unk_id: int | None) -> list[Attempt]:
    out = []
    for r in tokens:
        meta = r.attempt.meta
        t = meta["triplet"]
        if not r.ok:
            continue  # the triplet fails: scoring finds no answer for it and records the error
        answer = Tokens.of(r.response)
        toks, ids = answer.tokens, list(answer.ids)
        k = next((i for i, x in enumerate(toks) if x in D.COMPAT_FIND), None)
        if k is None:
            raise UsageError(
                "--mode genda-lens does not apply to this tokenizer: no token of the "
                f"tokenisation {toks} is sin/sit/sine (e.g. byte-level BPE 'Ġsin'); use --mode default"
            )
        for v in range(3):
            vid, unk = list(ids), False
            if v:
                rid = answer.lookup[v - 1]
                unk = rid is None or (rid == unk_id and REPLACEMENTS[v - 1] != answer.specials.unk)
                vid[k] = unk_id if rid is None else rid
            req = masked_logprobs_request(ids=vid, positions=list(range(len(ids))), targets=ids, mask="none")
            extra = {"n_tokens": len(toks), "unk": unk, "not_special": meta["not_special"]}
            out.append(Attempt(_variant_id(t, v), 1, req, _meta(t, v, **extra)))
    return out
