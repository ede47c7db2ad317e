"""The model protocol: every request kind a backend may answer, declared once, with typed payloads.

Kinds are model-level primitives, not task steps (the anchor is lm-evaluation-harness's three-method
LM interface).  Log-probabilities are natural logs (nats).  A backend family answers a few of them:

=================== ========================================================= ====================
kind                payload -> response                                       answered by
=================== ========================================================= ====================
``chat``            :class:`ChatPayload` -> answer text (or null)             openai, hf-causal
``tokenize``        :class:`TokenizePayload` -> :class:`TokenizeResponse`     hf-mlm, hf-causal
``token_logprobs``  :class:`TokenLogprobsPayload` -> :class:`TokenLogprobs`   hf-causal
``fill_mask``       :class:`FillMaskPayload` -> :class:`FillMaskResponse`     hf-mlm
``masked_logprobs`` :class:`MaskedLogprobsPayload` -> :class:`MaskedLogprobs` hf-mlm
``generate``        :class:`GeneratePayload` -> :class:`GenerateResponse`     hf-causal, word-lm
=================== ========================================================= ====================

``random`` (null model; ``generate`` = a unigram sample) and ``replay`` (recorded answers) answer
every kind.  Everything a task
derives (sentence log-likelihood, pseudo-log-likelihood, candidate and continuation scores, GenDa
Lens's token substitutions) is computed from these answers in the tasks or in
:mod:`genderscope.tasks.scoring`.

:func:`check_payload` runs where a request enters a backend (the runner, before ``answer``) and
:func:`check_response` where an answer leaves the store, a replay file or a backend, so a malformed
answer becomes a one-line error on that attempt instead of a crash in a task.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Literal, TypedDict

CHAT = "chat"
TOKENIZE = "tokenize"
TOKEN_LOGPROBS = "token_logprobs"
FILL_MASK = "fill_mask"
MASKED_LOGPROBS = "masked_logprobs"
GENERATE = "generate"


class Message(TypedDict):
    role: str
    content: str


class ChatPayload(TypedDict, total=False):
    """``messages`` (required); sampling settings; the answer is the assistant's text."""

    messages: list[Message]
    temperature: float
    max_tokens: int
    top_p: float


class TokenizePayload(TypedDict, total=False):
    """``text`` (required).  ``add_special_tokens``: encode as the model's input (CLS/BOS... added) instead
    of splitting the literal text (special-token strings in it are kept whole).  ``lookup``: token strings
    whose vocabulary ids are wanted."""

    text: str
    add_special_tokens: bool
    lookup: list[str]


class Specials(TypedDict):
    """The tokenizer's special-token strings (None where it has none)."""

    mask: str | None
    cls: str | None
    sep: str | None
    bos: str | None
    eos: str | None
    unk: str | None
    pad: str | None


class TokenizeResponse(TypedDict):
    """``ids``/``tokens`` of the text; ``special``: per token, whether it is a special token; ``lookup``: the
    vocabulary id of each looked-up string (None if not in the vocabulary); ``unk_id``;
    ``continuation_prefix``: the word-piece continuation marker (e.g. ``##``) or None; ``dtype``: the
    precision the model computes in (e.g. ``float32``)."""

    ids: list[int]
    tokens: list[str]
    special: list[bool]
    lookup: list[int | None]
    specials: Specials
    unk_id: int | None
    continuation_prefix: str | None
    dtype: str | None


class TokenLogprobsPayload(TypedDict):
    """``text``: scored as it is, preceded by the model's start token (BOS, else EOS) and nothing else."""

    text: str


class TokenLogprobs(TypedDict):
    """Per token of ``text`` (no special tokens): ``tokens``, character ``offsets`` [start, end) into the
    text, and ``logprobs`` = ln p(token | start token, earlier tokens).  A model with neither BOS nor EOS
    cannot score the first token: its log-prob is None."""

    tokens: list[str]
    offsets: list[list[int]]
    logprobs: list[float | None]


class FillMaskPayload(TypedDict, total=False):
    """Either ``text`` containing exactly one mask token (encoded with special tokens), or ``ids`` with the
    mask ``position``; ``top_k`` predictions over the whole vocabulary (default 5)."""

    text: str
    ids: list[int]
    position: int
    top_k: int


class Prediction(TypedDict):
    """One fill-mask prediction: vocabulary ``id``, raw ``token``, ``str`` = decoded, ``text`` = decoded
    without clean-up, ``continuation`` = a word-piece continuation, ``logprob`` in nats."""

    id: int
    token: str
    str: str
    text: str
    continuation: bool
    logprob: float


class FillMaskResponse(TypedDict):
    ids: list[int]
    position: int
    top: list[Prediction]


MaskMode = Literal["each", "all", "none"]


class MaskedLogprobsPayload(TypedDict, total=False):
    """Log-probabilities of given ids at given positions of a masked LM's input.

    Input: ``ids``, or ``text`` (encoded with special tokens).  ``positions``: default every non-special
    position.  ``targets``: the ids scored there (default the input's).  ``mask``: ``each`` = one copy per
    position with that position masked (pseudo-log-likelihood), ``all`` = one copy with every position
    masked, ``none`` = the input as it is, nothing masked (default ``each``).
    """

    text: str
    ids: list[int]
    positions: list[int]
    targets: list[int]
    mask: MaskMode


class MaskedLogprobs(TypedDict):
    """``ids`` of the input, ``positions`` scored, ``logprobs`` (nats, log-softmax in float32) per position,
    ``loss`` = the framework's float32 mean cross-entropy over the positions (= −mean logprob up to
    float32 rounding; what reference implementations that call the loss function report)."""

    ids: list[int]
    positions: list[int]
    logprobs: list[float]
    loss: float


class GeneratePayload(TypedDict, total=False):
    """Plain continuation of ``prompt`` (required; no chat template).  ``max_tokens`` (required): model
    tokens to generate (words for word-level LMs).  ``temperature`` (default 1.0; 0 = greedy), ``top_p``
    (nucleus mass, default 1.0), ``seed`` (required): the sample's own seed."""

    prompt: str
    max_tokens: int
    temperature: float
    top_p: float
    seed: int


FinishReason = Literal["length", "stop"]


class GenerateResponse(TypedDict):
    """``text``: the continuation only (without the prompt); ``n_tokens``: tokens (words) generated;
    ``finish_reason``: ``length`` (``max_tokens`` reached) or ``stop`` (end-of-text token)."""

    text: str
    n_tokens: int
    finish_reason: FinishReason


# ---------------------------------------------------------------- validation


class ProtocolError(ValueError):
    """A payload or response that does not match its kind's declaration."""


def _is_int_list(x: Any) -> bool:
    return isinstance(x, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in x)


def _is_num(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _need(cond: bool, what: str) -> None:
    if not cond:
        raise ProtocolError(what)


def _p_chat(p: dict[str, Any]) -> None:
    msgs = p.get("messages")
    _need(isinstance(msgs, list) and bool(msgs), "chat payload needs a non-empty 'messages' list")
    for m in msgs:
        _need(isinstance(m, dict) and isinstance(m.get("content"), str), "each chat message needs 'content'")


def _p_tokenize(p: dict[str, Any]) -> None:
    _need(isinstance(p.get("text"), str), "tokenize payload needs 'text'")
    _need(isinstance(p.get("lookup", []), list), "tokenize 'lookup' must be a list of strings")


def _p_token_logprobs(p: dict[str, Any]) -> None:
    _need(isinstance(p.get("text"), str), "token_logprobs payload needs 'text'")


def _input(p: dict[str, Any], kind: str) -> None:
    has_text, has_ids = isinstance(p.get("text"), str), "ids" in p
    _need(has_text != has_ids, f"{kind} payload needs exactly one of 'text' and 'ids'")
    if has_ids:
        _need(_is_int_list(p["ids"]) and bool(p["ids"]), f"{kind} 'ids' must be a non-empty list of ints")


def _p_fill_mask(p: dict[str, Any]) -> None:
    _input(p, FILL_MASK)
    if "ids" in p:
        pos = p.get("position")
        _need(isinstance(pos, int) and 0 <= pos < len(p["ids"]), "fill_mask 'position' must index 'ids'")
    _need(isinstance(p.get("top_k", 5), int) and p.get("top_k", 5) >= 1, "fill_mask 'top_k' must be >= 1")


def _p_masked_logprobs(p: dict[str, Any]) -> None:
    _input(p, MASKED_LOGPROBS)
    _need(p.get("mask", "each") in ("each", "all", "none"), "masked_logprobs 'mask' is each, all or none")
    for key in ("positions", "targets"):
        _need(key not in p or _is_int_list(p[key]), f"masked_logprobs {key!r} must be a list of ints")
    if "targets" in p:
        _need("positions" in p and len(p["positions"]) == len(p["targets"]), "targets need positions")
    if "ids" in p and "positions" in p:
        _need(all(0 <= i < len(p["ids"]) for i in p["positions"]), "masked_logprobs positions out of range")


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _p_generate(p: dict[str, Any]) -> None:
    _need(isinstance(p.get("prompt"), str), "generate payload needs 'prompt' (a string)")
    _need(_is_int(p.get("max_tokens")) and p["max_tokens"] >= 0, "generate 'max_tokens' must be an int >= 0")
    _need(_is_int(p.get("seed")), "generate payload needs an int 'seed'")
    t, top_p = p.get("temperature", 1.0), p.get("top_p", 1.0)
    _need(_is_num(t) and t >= 0, "generate 'temperature' must be a number >= 0")
    _need(_is_num(top_p) and 0 < top_p <= 1, "generate 'top_p' must be in (0, 1]")


def _r_chat(r: Any) -> None:
    _need(r is None or isinstance(r, str), "a chat answer is a string or null")


def _r_tokenize(r: Any) -> None:
    _need(isinstance(r, dict), "a tokenize answer is an object")
    _need(
        isinstance(r.get("tokens"), list) and _is_int_list(r.get("ids")), "tokenize answer needs ids, tokens"
    )
    _need(len(r["tokens"]) == len(r["ids"]), "tokenize answer: ids and tokens differ in length")
    _need(isinstance(r.get("specials"), dict), "tokenize answer needs 'specials'")


def _r_token_logprobs(r: Any) -> None:
    _need(isinstance(r, dict), "a token_logprobs answer is an object")
    lps, toks, offs = r.get("logprobs"), r.get("tokens"), r.get("offsets")
    _need(
        isinstance(lps, list) and isinstance(toks, list) and isinstance(offs, list),
        "needs tokens/offsets/logprobs",
    )
    _need(len(lps) == len(toks) == len(offs), "token_logprobs answer: lists differ in length")
    _need(all(x is None or _is_num(x) for x in lps), "token_logprobs: logprobs must be numbers or null")


def _r_fill_mask(r: Any) -> None:
    _need(isinstance(r, dict) and isinstance(r.get("top"), list) and r["top"], "fill_mask answer needs 'top'")
    for t in r["top"]:
        _need(isinstance(t, dict) and _is_num(t.get("logprob")), "fill_mask predictions need a logprob")


def _r_masked_logprobs(r: Any) -> None:
    _need(isinstance(r, dict), "a masked_logprobs answer is an object")
    lps = r.get("logprobs")
    _need(isinstance(lps, list) and all(_is_num(x) for x in lps), "masked_logprobs answer needs logprobs")
    _need(_is_int_list(r.get("positions")) and len(r["positions"]) == len(lps), "positions/logprobs mismatch")


def _r_generate(r: Any) -> None:
    _need(isinstance(r, dict) and isinstance(r.get("text"), str), "a generate answer needs 'text'")
    _need(_is_int(r.get("n_tokens")) and r["n_tokens"] >= 0, "generate answer needs an int 'n_tokens' >= 0")
    _need(r.get("finish_reason") in ("length", "stop"), "generate 'finish_reason' is length or stop")


@dataclass(frozen=True)
class KindSpec:
    """One request kind: its payload and response types, their checks, and a one-line summary."""

    name: str
    payload: type
    response: Any
    summary: str
    check_payload: Callable[[dict[str, Any]], None]
    check_response: Callable[[Any], None]


KINDS: dict[str, KindSpec] = {
    k.name: k
    for k in (
        KindSpec(CHAT, ChatPayload, str, "a chat model's answer to messages", _p_chat, _r_chat),
        KindSpec(
            TOKENIZE, TokenizePayload, TokenizeResponse, "tokens and ids of a text", _p_tokenize, _r_tokenize
        ),
        KindSpec(
            TOKEN_LOGPROBS,
            TokenLogprobsPayload,
            TokenLogprobs,
            "ln p of every token of a text (causal LM)",
            _p_token_logprobs,
            _r_token_logprobs,
        ),
        KindSpec(
            FILL_MASK,
            FillMaskPayload,
            FillMaskResponse,
            "top-k at a masked position",
            _p_fill_mask,
            _r_fill_mask,
        ),
        KindSpec(
            MASKED_LOGPROBS,
            MaskedLogprobsPayload,
            MaskedLogprobs,
            "ln p of given ids at given positions (masked LM; PLL = mask each)",
            _p_masked_logprobs,
            _r_masked_logprobs,
        ),
        KindSpec(
            GENERATE,
            GeneratePayload,
            GenerateResponse,
            "plain continuation of a prompt (sampled with its own seed)",
            _p_generate,
            _r_generate,
        ),
    )
}

ALL_KINDS: frozenset[str] = frozenset(KINDS)


def check_payload(kind: str, payload: dict[str, Any]) -> None:
    """Raise :class:`ProtocolError` unless ``payload`` is a valid payload of ``kind``."""
    spec = KINDS.get(kind)
    if spec is None:
        raise ProtocolError(f"unknown request kind {kind!r}; known: {', '.join(sorted(KINDS))}")
    spec.check_payload(payload)


def response_problem(kind: str, response: Any) -> str | None:
    """None when ``response`` is a valid answer of ``kind``, else what is wrong with it (one line)."""
    spec = KINDS.get(kind)
    if spec is None:
        return f"unknown request kind {kind!r}"
    try:
        spec.check_response(response)
    except (ProtocolError, AttributeError, TypeError) as exc:
        return f"malformed {kind} answer: {exc}"
    return None
