"""Mapping ``/v1/completions`` echo answers and ``/tokenize`` answers to the primitive responses
(:mod:`genderscope.core.primitives`); pure functions, no HTTP.

``token_logprobs`` {text}: the backend sends ``prompt = S + text`` with ``add_special_tokens: false``,
``echo: true``, ``logprobs: 1``, where S is the start token string (BOS, else EOS, as ``hf-causal``
uses; empty with ``--start-token none``).  The echo lists the prompt's tokens first (then, with
``max_tokens`` 1, one generated token, dropped): with S, token 0 is S and tokens 1.. are the text's,
each with ln p(token | S, earlier tokens); without S the text's first token has no log-prob (None).
The prompt's token count is ``usage.prompt_tokens``, else the tokens whose ``text_offset`` lies inside
the prompt.

Character offsets [start, end) into ``text`` come from the server: a token's visible characters
(its string without surrounding whitespace) are found in the text from where the previous token ended;
``end`` is where they end, ``start`` is the server's ``text_offset`` minus ``len(S)`` when that lies
between the previous end and the visible characters, else the visible start less the token's leading
whitespace.  A whitespace-only token (GPT-2's ``"Ġ"`` before a word it splits) that the text has where the
previous token ended spans those characters.  Tokens whose string is not in the text (partial UTF-8
bytes of one character, which vLLM 0.32 echoes as ``""`` and older servers as ``"�"``) take the spans a
fast tokenizer gives them once the token that completes the character arrives: the first piece from
where the previous token ended to the character's end, later pieces the character, and the completing
token starts at the character (``hf-causal``'s offsets); pieces never completed keep an empty span.
Token strings are the server's (vLLM: decoded pieces
such as ``" nurse"``, where ``hf-causal`` gives vocabulary strings such as ``"Ġnurse"``); log-probs and
offsets agree with ``hf-causal``.
"""

from __future__ import annotations

import json
from typing import Any

from genderscope.core.primitives import TokenLogprobsJson

ECHO_LOGPROBS = 1  # top log-probs asked for with each echo (vLLM returns the prompt token's own too)


def echo_body(model: str, prompt: str, max_tokens: int) -> bytes:
    """The JSON body that echoes ``prompt``'s log-probs (greedy, ``max_tokens`` 0 or 1)."""
    body = {
        "model": model,
        "prompt": prompt,
        "echo": True,
        "logprobs": ECHO_LOGPROBS,
        "max_tokens": max_tokens,
        "temperature": 0,
        "add_special_tokens": False,
    }
    return json.dumps(body, ensure_ascii=False).encode()


def _echo_lists(obj: Any) -> tuple[list[Any], list[Any], list[Any], int | None]:
    try:
        choice = obj["choices"][0]
    except (KeyError, IndexError, TypeError):
        raise ValueError("response is not a text completion (no choices[0])") from None
    lp = choice.get("logprobs") if isinstance(choice, dict) else None
    if not isinstance(lp, dict):
        raise ValueError("response has no echoed prompt log-probs (choices[0].logprobs is missing)")
    toks, lps, offs = lp.get("tokens"), lp.get("token_logprobs"), lp.get("text_offset")
    if not (isinstance(toks, list) and isinstance(lps, list) and isinstance(offs, list)):
        raise ValueError("response has no logprobs.tokens/token_logprobs/text_offset lists")
    if not len(toks) == len(lps) == len(offs):
        raise ValueError("logprobs.tokens/token_logprobs/text_offset differ in length")
    usage = obj.get("usage") if isinstance(obj, dict) else None
    n = usage.get("prompt_tokens") if isinstance(usage, dict) else None
    return toks, lps, offs, n if isinstance(n, int) and not isinstance(n, bool) else None


def text_spans(text: str, tokens: list[str], server_starts: list[int]) -> list[list[int]]:
    """[start, end) of each token in ``text`` (see the module docstring)."""
    spans: list[list[int]] = []
    cur = 0
    partial: list[int] = []  # tokens that hold only part of a character's UTF-8 bytes so far
    for tok, s_srv in zip(tokens, server_starts):
        core = tok.strip()
        if not core and tok and text.startswith(tok, cur):  # a whitespace-only token (GPT-2's "Ġ")
            spans.append([cur, cur + len(tok)])
            cur += len(tok)
            continue
        idx = text.find(core, cur) if core else -1
        if idx < 0:
            partial.append(len(spans))
            spans.append([cur, cur])
            continue
        lead = len(tok) - len(tok.lstrip())
        start = s_srv if cur <= s_srv <= idx else max(cur, idx - lead)
        if partial:
            start = _close_split_character(spans, partial, idx)
        cur = idx + len(core)
        spans.append([start, cur])
    return spans


def _close_split_character(spans: list[list[int]], partial: list[int], idx: int) -> int:
    """Give the byte pieces of the character at ``idx`` the spans a fast tokenizer's offsets give them
    (``hf-causal``): the first piece spans from where the previous token ended (its leading space
    included) to the character's end, later pieces span the character; the token that completes it
    starts at the character.  vLLM echoes such pieces as ``""``; returns the completing token's start."""
    for n, i in enumerate(partial):
        spans[i] = [spans[i][0] if n == 0 else idx, idx + 1]
    partial.clear()
    return idx


def token_logprobs_from_echo(raw: bytes, text: str, start: str) -> TokenLogprobsJson:
    """The ``token_logprobs`` answer for ``text`` from an echo of ``start + text``; ValueError (a malformed
    body, retried) when the body lacks the echoed log-probs."""
    try:
        obj = json.loads(raw)
    except ValueError:
        snippet = raw[:120].decode("utf-8", "replace").replace("\n", " ")
        raise ValueError(f"response is not JSON: {snippet!r}") from None
    toks, lps, offs, n = _echo_lists(obj)
    prompt_len = len(start) + len(text)
    if n is None:
        n = sum(1 for o in offs if isinstance(o, int) and o < prompt_len)
    if not 0 < n <= len(toks) or (start and n < 1):
        raise ValueError(f"the echo has {len(toks)} tokens but the prompt {n}")
    first = 1 if start else 0
    body_toks = [str(t) for t in toks[first:n]]
    scored = lps[first:n] if start else lps[1:n]
    if any(not isinstance(x, (int, float)) or isinstance(x, bool) for x in scored):
        raise ValueError("the echo lacks a prompt token's log-prob (null where a number belongs)")
    logprobs: list[float | None] = [float(x) for x in scored]
    if not start and body_toks:
        logprobs.insert(0, None)
    starts = [int(o) - len(start) if isinstance(o, int) else -1 for o in offs[first:n]]
    return {"tokens": body_toks, "offsets": text_spans(text, body_toks, starts), "logprobs": logprobs}


def start_token_of(info: dict[str, Any]) -> str | None:
    """hf-causal's start token from a tokenizer configuration (vLLM's ``/tokenizer_info``): ``bos_token``,
    else ``eos_token`` (a string, or an added-token object with ``content``); None when it has neither."""
    for name in ("bos_token", "eos_token"):
        value = info.get(name)
        if isinstance(value, dict):
            value = value.get("content")
        if isinstance(value, str) and value:
            return value
    return None


def tokenize_ids(raw: bytes) -> tuple[list[int], list[str] | None]:
    """``(ids, token strings or None)`` of a ``/tokenize`` answer; ValueError if it is not one."""
    try:
        obj = json.loads(raw)
        ids = obj["tokens"]
    except (ValueError, KeyError, TypeError):
        snippet = raw[:120].decode("utf-8", "replace").replace("\n", " ")
        raise ValueError(f"response is not a /tokenize answer: {snippet!r}") from None
    if not isinstance(ids, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
        raise ValueError("/tokenize 'tokens' is not a list of ids")
    strs = obj.get("token_strs")
    ok = isinstance(strs, list) and len(strs) == len(ids) and all(isinstance(s, str) for s in strs)
    return ids, (strs if ok else None)


def tokenize_response(
    ids: list[int], strs: list[str], start: str, start_id: int | None, lookup: list[int | None]
) -> dict[str, Any]:
    """The ``tokenize`` answer from the server's ids and token strings.  Of the special tokens only the
    start token is known (reported as ``bos``); ``unk_id``, ``continuation_prefix`` and ``dtype`` are
    unknown (None)."""
    return {
        "ids": ids,
        "tokens": strs,
        "special": [i == start_id for i in ids],
        "lookup": lookup,
        "specials": {
            "mask": None,
            "cls": None,
            "sep": None,
            "bos": start or None,
            "eos": None,
            "unk": None,
            "pad": None,
        },
        "unk_id": None,
        "continuation_prefix": None,
        "dtype": None,
    }


def generate_response(raw: bytes, max_tokens: int) -> dict[str, Any]:
    """The ``generate`` answer from a plain completion: ``text``, ``n_tokens`` (``usage.completion_tokens``,
    else ``max_tokens`` when stopped by length, else 0), ``finish_reason`` (``stop`` or ``length``)."""
    try:
        obj = json.loads(raw)
        choice = obj["choices"][0]
        text = choice["text"]
    except (ValueError, KeyError, IndexError, TypeError):
        snippet = raw[:120].decode("utf-8", "replace").replace("\n", " ")
        raise ValueError(f"response is not a text completion: {snippet!r}") from None
    if not isinstance(text, str):
        raise ValueError("choices[0].text is not a string")
    finish = "stop" if choice.get("finish_reason") == "stop" else "length"
    usage = obj.get("usage") if isinstance(obj.get("usage"), dict) else {}
    n = usage.get("completion_tokens")
    if not isinstance(n, int) or isinstance(n, bool):
        n = max_tokens if finish == "length" else 0
    return {"text": text, "n_tokens": n, "finish_reason": finish}
