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
import re
from bisect import bisect_right
from itertools import accumulate, repeat
from json.decoder import scanstring
from typing import Any

from genderscope.core.primitives import TokenLogprobsJson

ECHO_LOGPROBS = 1  # top log-probs asked for with each echo (vLLM returns the prompt token's own too)


def echo_body(model: str, prompt: str | list[str], max_tokens: int, top: int = ECHO_LOGPROBS) -> bytes:
    """The JSON body that echoes ``prompt``'s log-probs (greedy, ``max_tokens`` 0 or 1, ``top`` top
    log-probs per token); a list of prompts gets one choice per prompt (vLLM)."""
    body = {
        "model": model,
        "prompt": prompt,
        "echo": True,
        "logprobs": top,
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
    return _walk(text, tokens, server_starts)[0]


def _walk(
    text: str, tokens: list[str], server_starts: list[int] | None, cur: int = 0, stop: int = -1
) -> tuple[list[list[int]], int, int]:
    """The spans of ``tokens`` walked from character ``cur`` (``server_starts`` None: the starts are not
    wanted, only the ends are right), and (k, where the walk stood after k tokens) for the longest run of
    leading tokens that end by ``stop`` with no byte piece among them: another text sharing
    ``text[:stop]`` whose tokens begin with those k gives them the same spans."""
    spans: list[list[int]] = []
    partial: list[int] = []  # tokens that hold only part of a character's UTF-8 bytes so far
    safe, safe_cur = 0, cur
    find, startswith, append = text.find, text.startswith, spans.append
    starts = repeat(-1) if server_starts is None else server_starts
    for i, (tok, s_srv) in enumerate(zip(tokens, starts)):
        core = tok.strip()
        if not core and tok and startswith(tok, cur):  # a whitespace-only token (GPT-2's "Ġ")
            append([cur, cur + len(tok)])
            cur += len(tok)
        else:
            idx = find(core, cur) if core else -1
            if idx < 0:
                partial.append(i)
                append([cur, cur])
                continue
            lead = len(tok) - len(tok.lstrip())
            start = s_srv if cur <= s_srv <= idx else max(cur, idx - lead)
            if partial:
                start = _close_split_character(spans, partial, idx)
            cur = idx + len(core)
            append([start, cur])
        if safe == i and cur <= stop:
            safe, safe_cur = i + 1, cur
    return spans, safe, safe_cur


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


_SPACE = re.compile(r"[ \t\n\r]*")
_PROMPT_TOKENS = re.compile(r'"prompt_tokens"\s*:\s*(\d+)')
_DECODER = json.JSONDecoder()
_loads = _DECODER.decode
_compact_json = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
_LISTS = ("tokens", "token_logprobs", "text_offset")
Lists = tuple[list[Any], list[Any], list[Any]]


def _logprobs_object(text: str, pos: int) -> int:
    """Where the next ``"logprobs": {`` object's keys begin at or after ``pos``; -1 if none."""
    while True:
        at = text.find('"logprobs"', pos)
        if at < 0:
            return -1
        pos = _SPACE.match(text, at + 10).end()  # type: ignore[union-attr]
        if text.startswith(":", pos):
            pos = _SPACE.match(text, pos + 1).end()  # type: ignore[union-attr]
            if text.startswith("{", pos):
                return pos + 1


def _scan(text: str, count: int) -> list[Lists] | None:
    """The lists of the first ``count`` choices, decoding only the keys of each ``logprobs`` object up to
    the last list needed (vLLM lists ``top_logprobs`` after them, so it is never decoded), leaving the
    log-probs as strings (only the continuation's are converted) and the offsets as Nones (only their
    count is used); None when the body does not read that way (then it is decoded whole).
    ``"logprobs": {`` cannot occur inside a JSON string or a ``top_logprobs`` map (its values are
    numbers), so each match opens a choice's object."""
    out: list[Lists] = []
    pos = 0
    try:
        for _ in range(count):
            pos, found = _logprobs_object(text, pos), {}
            if pos < 0:
                return None
            while len(found) < len(_LISTS):
                key, pos = _DECODER.raw_decode(text, _SPACE.match(text, pos).end())  # type: ignore[union-attr]
                pos = _SPACE.match(text, pos).end()  # type: ignore[union-attr]
                if text[pos] != ":":
                    return None
                pos = _SPACE.match(text, pos + 1).end()  # type: ignore[union-attr]
                if key == "token_logprobs" and text[pos] == "[":  # numbers and nulls: left as strings
                    end = text.index("]", pos)
                    found[key], pos = "".join(text[pos + 1 : end].split()).split(","), end + 1
                elif key == "text_offset" and text[pos] == "[":  # numbers: only their count is used
                    end = text.index("]", pos)
                    n = text.count(",", pos, end) + 1 if text[pos + 1 : end].strip() else 0
                    found[key] = [None] * n
                    pos = end + 1
                else:
                    value, pos = _DECODER.raw_decode(text, pos)
                    if key in _LISTS:
                        found[key] = value
                pos = _SPACE.match(text, pos).end()  # type: ignore[union-attr]
                if text[pos] != ",":
                    break
                pos += 1
            if len(found) < len(_LISTS):
                return None
            out.append((found["tokens"], found["token_logprobs"], found["text_offset"]))
    except (ValueError, IndexError):
        return None
    return out


def echo_choice_lists(raw: bytes, count: int) -> tuple[list[Lists], int | None]:
    """(tokens, token_logprobs, text_offset) of each of the ``count`` choices of an echo answer (in order)
    and its ``usage.prompt_tokens``; ValueError when the body lacks them."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("response is not UTF-8 JSON") from None
    got = _scan(text, count)
    if got is None:
        try:
            obj = json.loads(text)
            choices = sorted(obj["choices"], key=lambda c: c.get("index", 0) if isinstance(c, dict) else 0)
        except (ValueError, KeyError, TypeError):
            raise ValueError(f"response is not a text completion: {text[:120]!r}") from None
        if len(choices) < count:
            raise ValueError(f"the echo has {len(choices)} choices for {count} prompts")
        got = [_echo_lists({"choices": [c]})[:3] for c in choices[:count]]
    for toks, lps, offs in got:
        if not (isinstance(toks, list) and isinstance(lps, list) and isinstance(offs, list)):
            raise ValueError("response has no logprobs.tokens/token_logprobs/text_offset lists")
        if not len(toks) == len(lps) == len(offs):
            raise ValueError("logprobs.tokens/token_logprobs/text_offset differ in length")
    at = text.rfind('"usage"')
    m = _PROMPT_TOKENS.search(text, at) if at >= 0 else None
    return got, (int(m.group(1)) if m else None)


def _number(x: Any) -> float:
    """A log-prob of the echo (a JSON number, or its text as :func:`_scan` leaves it) as a float."""
    if isinstance(x, str):
        return float(x)  # ValueError for anything but a number
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise ValueError("the echo lacks a prompt token's log-prob (null where a number belongs)")
    return float(x)


def echo_choices(raw: bytes, count: int, generated: int) -> list[tuple[list[Any], list[Any], int]]:
    """(tokens, token_logprobs, prompt token count) of each of the ``count`` choices of one echo of
    ``count`` prompts, each followed by ``generated`` tokens; ValueError when the body lacks them or its
    ``usage.prompt_tokens`` disagrees."""
    choices, total = echo_choice_lists(raw, count)
    out = [(toks, lps, len(toks) - generated) for toks, lps, _offs in choices]
    listed = sum(n for _t, _l, n in out)
    if total is not None and total != listed:
        raise ValueError(f"the echo lists {listed} prompt tokens but its usage says {total}")
    return out


def continuation_sums(
    choices: list[tuple[list[Any], list[Any], int]], context: str, continuations: list[str], start: str
) -> list[tuple[float | None, int]]:
    """(Σ ln p, token count) of each continuation's tokens (those ending after ``context``; None for the sum
    when one of them has no log-prob) from the :func:`echo_choices` of the prompts ``start + context +
    continuation``.  Equals :func:`~genderscope.backends.continuations.continuation_sum` of
    :func:`token_logprobs_from_echo` per prompt, but walks the context's tokens once: later choices that
    begin with the same tokens resume the walk where those end.  ValueError for a malformed choice."""
    first, cut = (1 if start else 0), len(context)
    shared: tuple[list[Any], int, int] | None = None  # choice 0's safe leading tokens, where they end
    out: list[tuple[float | None, int]] = []
    for cont, (toks, lps, n) in zip(continuations, choices):
        if not 0 < n <= len(toks):
            raise ValueError(f"the echo has {len(toks)} tokens but the prompt {n}")
        body, given = toks[first:n], lps[1:n]
        if None in given or "null" in given:
            raise ValueError("the echo lacks a prompt token's log-prob (null where a number belongs)")
        i0, cur = 0, 0
        if shared is not None and shared[1] and body[: shared[1]] == shared[0]:
            i0, cur = shared[1], shared[2]
        try:
            spans, k, at = _walk(context + cont, body[i0:], None, cur, cut)  # ends only
        except (AttributeError, TypeError):
            raise ValueError("the echo's logprobs.tokens are not all strings") from None
        if shared is None:
            shared = (body[:k], k, at)
        sel = [j for j, (_s, e) in enumerate(spans, i0) if e > cut]
        if not start and 0 in sel:
            out.append((None, len(sel)))
            continue
        out.append((float(sum(_number(lps[j + first]) for j in sel)), len(sel)))
    return out


Group = tuple[str, list[str], str]  # (context, continuations, start token) of one loglikelihood job


def group_sums(raw: bytes, groups: list[Group], generated: int) -> list[list[tuple[float | None, int]]]:
    """:func:`continuation_sums` of each group of one echo of all their prompts (in order), each prompt
    followed by ``generated`` tokens.  vLLM's compact body is read by :func:`_compact_sums`; any other
    body, or anything unusual in it, by :func:`echo_choices` and :func:`continuation_sums` (same numbers,
    same errors)."""
    got = _compact_sums(raw, groups, generated)
    if got is not None:
        return got
    choices = echo_choices(raw, sum(len(conts) for _c, conts, _s in groups), generated)
    out, at = [], 0
    for ctx, conts, start in groups:
        out.append(continuation_sums(choices[at : at + len(conts)], ctx, conts, start))
        at += len(conts)
    return out


_TO_OFFSETS = ':{"text_offset":['
_TO_LOGPROBS = '],"token_logprobs":['
_TO_TOKENS = '],"tokens":['
Compact = tuple[int, int, int, int]  # where tokens begins ("["), token_logprobs' items begin, end; count


def _compact_choices(text: str, count: int) -> list[Compact] | None:
    """Where each choice's lists lie in vLLM's compact ``"logprobs":{"text_offset":[..],
    "token_logprobs":[..],"tokens":[..]``, found as :func:`_scan` finds them (nothing decoded, split
    or converted here); None for any other shape."""
    out: list[Compact] = []
    find, index, count_, startswith, pos = text.find, text.index, text.count, text.startswith, 0
    for _ in range(count):
        at = find('"logprobs"', pos) + 10
        if at < 10 or not startswith(_TO_OFFSETS, at):
            return None
        p = at + len(_TO_OFFSETS)
        e = index("]", p)
        if not startswith(_TO_LOGPROBS, e):
            return None
        offsets = count_(",", p, e) + 1 if e > p and (not text[p].isspace() or text[p:e].strip()) else 0
        p = e + len(_TO_LOGPROBS)
        e = index("]", p)
        if not startswith(_TO_TOKENS, e):
            return None
        n = count_(",", p, e) + 1  # as many as _scan's split gives, even for []
        if n != offsets:
            return None
        out.append((e + len(_TO_TOKENS) - 1, p, e, n))
        pos = e
    return out


def _compact_sums(raw: bytes, groups: list[Group], generated: int) -> list[list[Any]] | None:
    """:func:`group_sums` of vLLM's compact body, converting only the continuations' log-probs, decoding
    only the tokens after a context's (its later prompts' echoes begin with the same text) and walking a
    context's tokens one by one only where they do not simply spell it (:func:`_plain_ends`); None for
    any other body or when anything is unusual (a null or a word among the log-probs, ``usage``
    disagreeing, a token that is not a string ...): then the general reading decides, with its errors."""
    try:
        text = raw.decode("utf-8")
        choices = _compact_choices(text, sum(len(conts) for _c, conts, _s in groups))
        if choices is None:
            return None
        at = text.rfind('"usage"')
        m = _PROMPT_TOKENS.search(text, at) if at >= 0 else None
        if m and int(m.group(1)) != sum(c[3] - generated for c in choices):
            return None
        out, at = [], 0
        for ctx, conts, start in groups:
            got = _compact_group(text, choices[at : at + len(conts)], ctx, conts, start, generated)
            if got is None:
                return None
            out.append(got)
            at += len(conts)
        return out
    except (ValueError, IndexError, TypeError, AttributeError):
        return None


def _compact_group(
    text: str, choices: list[Compact], context: str, conts: list[str], start: str, generated: int
) -> list[tuple[float | None, int]] | None:
    """:func:`continuation_sums` of one context's choices in a compact body (None: unusual, see
    :func:`_compact_sums`); the same steps, with tokens and log-probs read from ``text`` where needed."""
    first, cut = (1 if start else 0), len(context)
    shared: tuple[list[Any], int, int] | None = None
    lead: tuple[str, list[Any]] | None = None  # the first choice's leading tokens: their JSON, themselves
    out: list[tuple[float | None, int]] = []
    for cont, (arr, lo, hi, count) in zip(conts, choices):
        comma = text.find(",", lo, hi)  # items 1..: no null (nor any word: "n") among them
        if comma >= 0 and text.find("n", comma, hi) >= 0:
            return None
        n = count - generated
        if not 0 < n <= count:
            return None
        toks: Any = None
        tail: list[Any] | None = None
        if lead is not None and text.startswith(lead[0], arr):  # the same leading tokens: the rest only
            rest, known = _rest_strings(text, arr + len(lead[0])), len(lead[1])
            if rest is not None and shared is not None and len(rest) == count - known and n >= known:
                # the first choice's k leading tokens, then these: resume where the first choice's k end
                i0, cur, tail = shared[1], shared[2], rest[: n - known]
            elif rest is not None:
                toks = lead[1] + rest
        if tail is None:
            if toks is None:
                toks = _DECODER.raw_decode(text, arr)[0]
            if type(toks) is not list or len(toks) != count:
                return None
            body = toks[first:n]
            i0, cur = 0, 0
            if shared is not None and shared[1] and body[: shared[1]] == shared[0]:
                i0, cur = shared[1], shared[2]
            tail = body[i0:]
        whole = context + cont
        plain = _plain_ends(whole, tail, cur, cut)
        if plain is None:
            spans, k, end = _walk(whole, tail, None, cur, cut)
            sel: Any = [j for j, (_s, e) in enumerate(spans, i0) if e > cut]
        else:
            k, end = plain
            sel = range(i0 + k, i0 + len(tail))
        if shared is None:
            shared = (body[:k], k, end)
            if first + k:
                lead = (_compact_json(toks[: first + k])[:-1] + ",", toks[: first + k])
        if not start and 0 in sel:
            out.append((None, len(sel)))
            continue
        if plain is None:
            out.append((float(sum(_items(text, lo, hi, count, [j + first for j in sel]))), len(sel)))
        else:  # consecutive items: the same floats, summed in the same order
            items = _run(text, lo, hi, count, sel.start + first, len(sel))
            out.append((float(sum(map(float, items))), len(sel)))
    return out


_TOKENS_END = '],"top_logprobs":'


def _rest_strings(text: str, pos: int) -> list[str] | None:
    """:func:`_strings` from ``pos``, decoded in one call where vLLM's ``top_logprobs`` follows the list
    (``],"top_logprobs":`` cannot occur inside a JSON string, whose quotes are escaped, so the first one
    after ``pos`` ends the list; what lies between is decoded only when it is all strings)."""
    end = text.find(_TOKENS_END, pos)
    if end >= 0:
        try:
            got = _loads("[" + text[pos : end + 1])
        except ValueError:
            got = None
        if type(got) is list and got and all([type(x) is str for x in got]):
            return got
    return _strings(text, pos)


def _strings(text: str, pos: int) -> list[str] | None:
    """The JSON strings from ``pos`` up to the ``]`` that ends their list, when that is all there is (no
    whitespace); None otherwise."""
    out: list[str] = []
    while text.startswith('"', pos):
        value, pos = scanstring(text, pos + 1)
        out.append(value)
        if text.startswith("]", pos):
            return out
        if not text.startswith(",", pos):
            return None
        pos += 1
    return None


def _items(text: str, lo: int, hi: int, count: int, wanted: list[int]) -> list[float]:
    """The ``wanted`` (ascending) of the ``count`` comma-separated log-probs in ``text[lo:hi]`` as floats
    (ValueError for whitespace inside one, which :func:`_scan` would remove: then it reads the body)."""
    if not wanted:
        return []
    last = text[lo:hi].rsplit(",", count - wanted[0])
    base = len(last) - count
    return [float(last[base + i]) for i in wanted]


def _run(text: str, lo: int, hi: int, count: int, at: int, size: int) -> list[str]:
    """Items ``at`` .. ``at + size - 1`` of the ``count`` comma-separated log-probs in ``text[lo:hi]``, as
    :func:`_items` finds them (unconverted)."""
    if not size:
        return []
    last = text[lo:hi].rsplit(",", count - at)
    base = len(last) - count
    return last[base + at : base + at + size]


def _plain_ends(text: str, tokens: list[str], cur: int, stop: int) -> tuple[int, int] | None:
    """``_walk(text, tokens, None, cur, stop)``'s (k, where the walk stood after k tokens) when the tokens
    spell ``text`` from ``cur`` and none is empty or ends in whitespace after other characters: then each
    token ends where its characters do, so k counts those ending by ``stop``; None otherwise (walk)."""
    if not text.startswith("".join(tokens), cur) or "" in tokens:
        return None
    stripped = list(map(str.rstrip, tokens))
    if stripped != tokens and any([s for s, t in zip(stripped, tokens) if s is not t]):
        return None  # a token with trailing whitespace after other characters (whitespace-only is fine)
    ends = list(accumulate(map(len, tokens), initial=cur))
    k = bisect_right(ends, stop, 1) - 1
    return k, ends[k]


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
