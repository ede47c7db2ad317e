"""``loglikelihood`` over ``openai-completions:``: several contexts' continuations in one request (a list of
prompts, vLLM) give the numbers of one echo per continuation and of ``hf-causal``; the reading of such a
body without decoding ``top_logprobs`` equals the full decoding; a server that takes one prompt (llama-cpp-
python) gets one echo per continuation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from genderscope.backends.openai import echo as echo
from genderscope.backends.continuations import continuation_sum
from genderscope.backends.hf.causal import CausalOptions, HFCausalLMBackend
from genderscope.backends.openai.completions import CompletionsOptions, OpenAICompletionsBackend
from genderscope.core.options import build_options
from genderscope.core.primitives import LOGLIKELIHOOD
from genderscope.core.requests import Job, Outcome
from genderscope.core.request_value import Request
from genderscope.demo_models import build_tiny_causal
from genderscope_dev.fake_openai import FakeConfig, FakeOpenAIServer

WORDS = "The nurse said that she he had a doctor told the baker , . ' is was her his yes no".split()
PAYLOADS = [
    {"context": "The nurse said that", "continuations": [" she", " he", " she had a"]},
    {"context": "The doctor told the baker ", "continuations": ["she", "he was ."]},
    {"context": "", "continuations": ["The nurse", "the baker"]},
    {"context": "The nurse said", "continuations": [" yes"]},
    {"context": "zebra nurse", "continuations": [" is", " was", " his", " her", " no"]},
]
FAST = {"backoff_base": 0.01, "backoff_max": 0.05, "start_token": "<s>"}


@pytest.fixture(scope="module")
def model_dir(hf: None, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_causal(tmp_path_factory.mktemp("tiny") / "plain", WORDS)


def ask(b: Any, payloads: list[dict[str, Any]]) -> list[Outcome]:
    jobs = [
        Job(index=i, request=Request(LOGLIKELIHOOD, p), trial=1, item_id=f"i{i}")
        for i, p in enumerate(payloads)
    ]
    got: dict[int, Outcome] = {}
    b.answer(jobs, lambda job, out: got.__setitem__(job.index, out))
    return [got[i] for i in range(len(jobs))]


def test_prompt_lists_equal_one_echo_per_continuation_and_hf_causal(model_dir: Path) -> None:
    with FakeOpenAIServer(FakeConfig(model_dir=str(model_dir))) as srv:
        multi = OpenAICompletionsBackend(
            "tiny", CompletionsOptions(base_url=srv.url, prompts_per_request=5, **FAST)
        )
        packed = ask(multi, PAYLOADS)
        assert multi.multi and multi.stats()["answers"] == len(PAYLOADS)
        single = OpenAICompletionsBackend(
            "tiny", CompletionsOptions(base_url=srv.url, multi_prompt="off", **FAST)
        )
        one_each = ask(single, PAYLOADS)
        assert not single.multi
    local = HFCausalLMBackend(str(model_dir), build_options(CausalOptions, {}, "hf-causal"))
    ref = ask(local, PAYLOADS)
    for a, b, r in zip(packed, one_each, ref):
        assert a.ok and b.ok and r.ok, (a.error, b.error, r.error)
        assert a.response["n_tokens"] == b.response["n_tokens"] == r.response["n_tokens"]
        for x, y, z in zip(a.response["logprobs"], b.response["logprobs"], r.response["logprobs"]):
            assert abs(x - y) < 1e-5 and abs(x - z) < 1e-4


def test_a_server_that_takes_one_prompt_gets_one_echo_per_continuation(model_dir: Path) -> None:
    with FakeOpenAIServer(FakeConfig(model_dir=str(model_dir), single_prompt=True)) as srv:
        b = OpenAICompletionsBackend("tiny", CompletionsOptions(base_url=srv.url, **FAST))
        out = ask(b, PAYLOADS[:2])
        assert not b.multi and b.stats()["multi_prompt"] is False
        assert all(o.ok for o in out), [o.error for o in out]


def _body(prompts: list[tuple[list[str], list[float | None]]], order: tuple[str, ...], spaced: bool) -> bytes:
    """An echo body of several prompts (one generated token each), lists in ``order``."""
    choices = []
    for i, (toks, lps) in enumerate(prompts):
        toks, lps = toks + ["!"], lps + [-0.5]
        offs = [sum(len(t) for t in toks[:j]) for j in range(len(toks))]
        lists = {
            "text_offset": offs,
            "token_logprobs": lps,
            "tokens": toks,
            "top_logprobs": [None] + [{t: -1.0, '"logprobs": {': -2.0} for t in toks[1:]],
        }
        lp = {k: lists[k] for k in order}
        choices.append({"index": i, "text": "".join(toks), "logprobs": lp, "finish_reason": "length"})
    n = sum(len(t) for t, _l in prompts)
    obj = {"id": "x", "choices": choices, "usage": {"prompt_tokens": n, "completion_tokens": len(prompts)}}
    return json.dumps(obj, ensure_ascii=False, separators=(", ", ": ") if spaced else (",", ":")).encode()


CASES = [  # (context, continuations, each prompt's echoed tokens after the start token)
    (
        "The nurse said",
        [" she", " he was"],
        [["The", " nurse", " said", " she"], ["The", " nurse", " said", " he", " was"]],
    ),
    (
        "The nurse said ",
        ["she", "héllo"],
        [["The", " nurse", " said", " she"], ["The", " nurse", " said", " h", "", "éllo"]],
    ),
    ("a b", ["c", " d"], [["a", " bc"], ["a", " b", " ", "d"]]),  # a token across the boundary; a space token
    ("", ["a b", "a c"], [["a", " b"], ["a", " c"]]),  # no context: everything after the start token
]


@pytest.mark.parametrize(
    "order",
    [
        ("text_offset", "token_logprobs", "tokens", "top_logprobs"),
        ("top_logprobs", "tokens", "token_logprobs", "text_offset"),
    ],
)
@pytest.mark.parametrize("spaced", [False, True])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_reading_a_prompt_list_equals_one_echo_each(order: tuple[str, ...], spaced: bool, case: int) -> None:
    """vLLM's compact body (lists before ``top_logprobs``) is read without decoding it; other bodies whole."""
    ctx, conts, echoed = CASES[case]
    prompts = []
    for toks in echoed:
        toks = ["<s>", *toks]
        prompts.append((toks, [None] + [-(j + 1) / 7 for j in range(len(toks) - 1)]))
    got = echo.continuation_sums(
        echo.echo_choices(_body(prompts, order, spaced), len(conts), 1), ctx, conts, "<s>"
    )
    for k, cont in enumerate(conts):
        one = _body([prompts[k]], order, spaced)
        assert got[k] == continuation_sum(echo.token_logprobs_from_echo(one, ctx + cont, "<s>"), len(ctx))
