"""``openai_echo.group_sums`` (the reading of a ``--multi-prompt`` answer) on vLLM-shaped bodies: its
reading of vLLM's compact body gives exactly the numbers and errors of the general reading
(``echo_choices`` + ``continuation_sums``), which equals one echo per prompt; other bodies go to the
general reading."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from genderscope.backends.openai import echo as echo
from genderscope.backends.continuations import continuation_sum

Prompt = tuple[list[Any], list[Any]]  # echoed tokens (start token first), their log-probs


def vllm_body(
    prompts: list[Prompt], generated: int = 1, spaced: bool = False, usage: int | None = None
) -> bytes:
    """An echo of several prompts as vLLM's server writes it (compact JSON, ``top_logprobs`` null at
    position 0, ``generated`` tokens after each prompt)."""
    choices = []
    for i, (toks, lps) in enumerate(prompts):
        toks, lps = list(toks) + ["!"] * generated, list(lps) + [-0.25] * generated
        offs = [sum(len(str(t)) for t in toks[:j]) for j in range(len(toks))]
        tops = [None] + [{str(t): lp} for t, lp in zip(toks[1:], lps[1:])]
        lp = {"text_offset": offs, "token_logprobs": lps, "tokens": toks, "top_logprobs": tops}
        text = "".join(map(str, toks))
        choices.append({"index": i, "text": text, "logprobs": lp, "finish_reason": "length",
                        "stop_reason": None, "prompt_logprobs": None})  # fmt: skip
    n = sum(len(t) for t, _l in prompts) if usage is None else usage
    use = {"prompt_tokens": n, "total_tokens": n + generated, "completion_tokens": generated}
    obj = {"id": "cmpl-1", "object": "text_completion", "created": 0, "model": "m", "choices": choices,
           "usage": use}  # fmt: skip
    return json.dumps(obj, ensure_ascii=False, separators=(", ", ": ") if spaced else (",", ":")).encode()


def general(raw: bytes, groups: list[echo.Group], generated: int) -> Any:
    """The general reading's answer, or its error message."""
    try:
        choices = echo.echo_choices(raw, sum(len(c) for _x, c, _s in groups), generated)
        out, at = [], 0
        for ctx, conts, start in groups:
            out.append(echo.continuation_sums(choices[at : at + len(conts)], ctx, conts, start))
            at += len(conts)
        return out
    except ValueError as exc:
        return f"ValueError: {exc}"


def read(raw: bytes, groups: list[echo.Group], generated: int) -> Any:
    try:
        return echo.group_sums(raw, groups, generated)
    except ValueError as exc:
        return f"ValueError: {exc}"


def one_each(prompts: list[Prompt], groups: list[echo.Group]) -> list[list[tuple[float | None, int]]]:
    """One echo per prompt (``token_logprobs_from_echo`` + ``continuation_sum``)."""
    out, at = [], 0
    for ctx, conts, start in groups:
        row = []
        for cont in conts:
            toks, lps = prompts[at]
            got = echo.token_logprobs_from_echo(vllm_body([(toks, lps)]), ctx + cont, start)
            row.append(continuation_sum(got, len(ctx)))
            at += 1
        out.append(row)
    return out


def scored(start: str, *token_lists: list[str]) -> list[Prompt]:
    """Prompts echoing ``start`` then each token list, log-probs -(j+1)/7 (null first)."""
    out = []
    for toks in token_lists:
        toks = ([start] if start else []) + toks
        out.append((toks, [None] + [-(j + 1) / 7 for j in range(len(toks) - 1)]))
    return out


CASES = [  # (groups, token lists of their prompts after the start token)
    ([("The nurse said", [" she", " he was"], "<s>")],
     [["The", " nurse", " said", " she"], ["The", " nurse", " said", " he", " was"]]),
    ([("a b", ["c", " d"], "<s>")], [["a", " bc"], ["a", " b", " ", "d"]]),  # boundary inside " bc"
    ([("", ["a b", "a c"], "<s>")], [["a", " b"], ["a", " c"]]),  # empty context: all after the start token
    ([("The nurse said ", ["she", "héllo"], "<s>")],  # a context ending in a space; byte pieces ("")
     [["The", " nurse", " said", " she"], ["The", " nurse", " said", " h", "", "éllo"]]),
    ([("Q: who?\n\nA:", [" the nurse", " unknown"], "<s>")],  # whitespace-only tokens
     [["Q", ":", " who", "?", "\n\n", "A", ":", " the", " nurse"],
      ["Q", ":", " who", "?", "\n\n", "A", ":", " unknown"]]),
    ([("It ended.\nThen", [" she", " he"], "<s>")],  # a token ending in whitespace after other characters
     [["It", " ended", ".\n", "Then", " she"], ["It", " ended", ".\n", "Then", " he"]]),
    ([("x", [" y"], "<s>"), ("The nurse", [" said", " told"], "<s>"), ("", ["z"], "<s>")],  # several jobs
     [["x", " y"], ["The", " nurse", " said"], ["The", " nurse", " told"], ["z"]]),
    ([("The nurse", [" said", " told"], "")],  # no start token: the first token has no log-prob
     [["The", " nurse", " said"], ["The", " nurse", " told"]]),
    ([("", ["The nurse", "A"], "")], [["The", " nurse"], ["A"]]),  # ... and none for a whole prompt
]  # fmt: skip


@pytest.mark.parametrize("generated", [0, 1])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_compact_bodies_are_read_as_the_general_reading_and_one_echo_each(case: int, generated: int) -> None:
    groups, token_lists = CASES[case]
    prompts = [p for g in [scored(groups[0][2], t) for t in token_lists] for p in g]
    raw = vllm_body(prompts, generated)
    assert echo._compact_sums(raw, groups, generated) is not None  # the compact reading answered
    got = read(raw, groups, generated)
    assert got == general(raw, groups, generated)
    if groups[0][2] or groups[0][0]:
        assert got == one_each(prompts, groups)
    else:  # the continuation's first token is the prompt's first: unscored (the job's error)
        assert got == [[(None, 2), (None, 1)]]


@pytest.mark.parametrize(
    "change",
    ["spaced", "null", "word", "usage", "number", "too few"],
)
def test_other_bodies_go_to_the_general_reading(change: str) -> None:
    groups: list[echo.Group] = [("The nurse said", [" she", " he was"], "<s>")]
    prompts = scored("<s>", ["The", " nurse", " said", " she"], ["The", " nurse", " said", " he", " was"])
    if change == "null":  # a context token without a log-prob: the general reading's error
        prompts[1][1][2] = None
    if change == "word":  # -Infinity (a log-prob of 0): read by the general reading
        prompts[0][1][-1] = -math.inf
    if change == "number":  # a token that is not a string
        prompts[1][0][-1] = 7
    usage = 3 if change == "usage" else None
    raw = vllm_body(prompts, 1, spaced=change == "spaced", usage=usage)
    groups = groups * 2 if change == "too few" else groups
    assert echo._compact_sums(raw, groups, 1) is None
    assert read(raw, groups, 1) == general(raw, groups, 1)
    if change in ("spaced", "word"):
        assert read(raw, groups, 1) == one_each(prompts, groups)
    else:
        assert read(raw, groups, 1).startswith("ValueError")


PIECES = ["The", " nurse", " said", " ", "  ", "\n", "\n\n", ".\n", " she ", "é", "", "a", " b", "?", "\t"]


@settings(max_examples=150, deadline=None)
@given(
    ctx=st.lists(st.sampled_from(PIECES), max_size=8),
    conts=st.lists(st.lists(st.sampled_from(PIECES), min_size=1, max_size=4), min_size=1, max_size=4),
    cut=st.integers(-2, 2),
    start=st.sampled_from(["<s>", ""]),
    generated=st.sampled_from([0, 1]),
)
def test_any_token_split_reads_as_the_general_reading(
    ctx: list[str], conts: list[list[str]], cut: int, start: str, generated: int
) -> None:
    """Contexts and continuations of any pieces (whitespace-only, trailing whitespace, byte pieces ""), the
    context cut anywhere near the token boundary: the same numbers (or the same error) both ways."""
    text = "".join(ctx)
    context = text[: max(0, len(text) + cut)] if cut < 0 else text
    continuations = [text[len(context) :] + "".join(c) for c in conts]
    prompts = scored(start, *[ctx + c for c in conts])
    groups: list[echo.Group] = [(context, continuations, start), ("The", [" nurse"], start)]
    prompts += scored(start, ["The", " nurse"])
    raw = vllm_body(prompts, generated)
    assert read(raw, groups, generated) == general(raw, groups, generated)


@settings(max_examples=200, deadline=None)
@given(
    tokens=st.lists(st.sampled_from(PIECES), max_size=10),
    before=st.sampled_from(["", "x", "x ", " "]),
    after=st.sampled_from(["", "y", " y"]),
    stop=st.integers(-1, 40),
)
def test_plain_ends_agree_with_the_walk(tokens: list[str], before: str, after: str, stop: int) -> None:
    text = before + "".join(tokens) + after
    plain = echo._plain_ends(text, tokens, len(before), stop)
    spans, k, at = echo._walk(text, tokens, None, len(before), stop)
    if plain is not None:
        assert plain == (k, at)
        assert [j for j, (_s, e) in enumerate(spans) if e > stop] == list(range(k, len(tokens)))
    if tokens and "" not in tokens and all(t.strip() or t for t in tokens) and not any(
        t.rstrip() and t.rstrip() != t for t in tokens
    ):
        assert plain is not None  # plain tokens are never walked one by one


JSON_PIECES = ['"', "\\", "]", '],"top_logprobs":', '"],"top_logprobs":[', ",", " x", "ü", "\u2028", "[", "{"]
ANY_PIECE = st.sampled_from(PIECES + JSON_PIECES)


@settings(max_examples=200, deadline=None)
@given(
    tokens=st.lists(st.one_of(st.sampled_from(JSON_PIECES), st.text(max_size=4)), min_size=1, max_size=8),
    split=st.integers(0, 8),
    after=st.sampled_from([',"top_logprobs":[null]}', "}", ',"text":"],\\"top_logprobs\\":"}']),
    other=st.sampled_from([None, None, 7]),
)
def test_rest_strings_decode_the_list_as_the_string_scan(
    tokens: list[Any], split: int, after: str, other: Any
) -> None:
    """The remaining tokens of a compact ``tokens`` list decoded in one call (vLLM's ``top_logprobs``
    after it) are the strings :func:`_strings` scans one by one; a list with a non-string, or without
    ``top_logprobs`` after it, reads as the scan does."""
    if other is not None:
        tokens = tokens + [other]
    split = min(split, len(tokens) - 1)
    listed = json.dumps(tokens, ensure_ascii=False, separators=(",", ":"))
    head = json.dumps(tokens[:split], ensure_ascii=False, separators=(",", ":"))[:-1] + ("," if split else "")
    assert listed.startswith(head)
    text = '{"tokens":' + listed + after
    pos = len('{"tokens":') + len(head)
    got = echo._rest_strings(text, pos)
    assert got == echo._strings(text, pos)
    if other is None:
        assert got == tokens[split:]


@settings(max_examples=100, deadline=None)
@given(
    ctx=st.lists(ANY_PIECE, max_size=8),
    conts=st.lists(st.lists(ANY_PIECE, min_size=1, max_size=4), min_size=1, max_size=3),
    start=st.sampled_from(["<s>", ""]),
)
def test_json_special_tokens_read_as_the_general_reading(
    ctx: list[str], conts: list[list[str]], start: str
) -> None:
    """Tokens holding quotes, backslashes, brackets or ``],"top_logprobs":`` itself: the same numbers (or
    error) as the general reading."""
    context = "".join(ctx)
    prompts = scored(start, *[ctx + c for c in conts])
    groups: list[echo.Group] = [(context, [context[len(context) :] + "".join(c) for c in conts], start)]
    raw = vllm_body(prompts, 1)
    assert read(raw, groups, 1) == general(raw, groups, 1)
