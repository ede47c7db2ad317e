"""``openai-completions:`` against the fake server's ``/v1/completions`` (echo log-probs computed by a tiny
transformers causal model): answers equal ``hf-causal``'s, the start token, the probe, the other kinds."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from genderscope.backends.hf.causal import CausalOptions, HFCausalLMBackend
from genderscope.backends.openai.completions import CompletionsOptions, OpenAICompletionsBackend
from genderscope.backends.openai.echo import text_spans, token_logprobs_from_echo
from genderscope.common.errors import BackendError, UsageError
from genderscope.core.options import build_options
from genderscope.core.primitives import CHAT, GENERATE, TOKEN_LOGPROBS, TOKENIZE, response_problem
from genderscope.core.requests import Job, Outcome
from genderscope.core.request_value import Request
from genderscope_dev.fake_openai import FakeConfig, FakeOpenAIServer
from genderscope.demo_models import build_tiny_causal

WORDS = "The nurse said that she he had a doctor told the baker , . ' is was her his".split()
TEXTS = ["The nurse said that she had", "the doctor told the baker , he was .", "nurse", "zebra nurse", ""]
FAST = {"backoff_base": 0.01, "backoff_max": 0.05}


@pytest.fixture(scope="module")
def models(hf: None, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("tiny")
    return {
        "plain": build_tiny_causal(root / "plain", WORDS),
        "bos": build_tiny_causal(root / "bos", WORDS, add_bos=True),
    }


@pytest.fixture(scope="module")
def server(models: dict[str, Path]):
    with FakeOpenAIServer(FakeConfig(model_dir=str(models["plain"]))) as srv:
        yield srv


def backend(srv: Any, **opts: Any) -> OpenAICompletionsBackend:
    return OpenAICompletionsBackend("tiny", CompletionsOptions(base_url=srv.url, **{**FAST, **opts}))


def ask(b: Any, kind: str, payloads: list[dict[str, Any]]) -> list[Outcome]:
    jobs = [Job(index=i, request=Request(kind, p), trial=1, item_id=f"i{i}") for i, p in enumerate(payloads)]
    got: dict[int, Outcome] = {}
    b.answer(jobs, lambda job, out: got.__setitem__(job.index, out))
    return [got[i] for i in range(len(jobs))]


def test_token_logprobs_equal_hf_causal(server: FakeOpenAIServer, models: dict[str, Path]) -> None:
    remote = ask(backend(server, start_token="<s>"), TOKEN_LOGPROBS, [{"text": t} for t in TEXTS])
    local = HFCausalLMBackend(str(models["plain"]), build_options(CausalOptions, {}, "hf-causal"))
    local.load()
    for text, out, ref in zip(TEXTS, remote, local.token_logprobs_many(TEXTS)):
        assert out.ok, out.error
        assert response_problem(TOKEN_LOGPROBS, out.response) is None
        got = out.response
        assert len(got["logprobs"]) == len(ref["logprobs"]), text
        assert all(abs(a - b) < 1e-4 for a, b in zip(got["logprobs"], ref["logprobs"])), text
        # ends (what continuation scores use) agree; starts may include a leading space
        assert [e for _s, e in got["offsets"]] == [e for _s, e in ref["offsets"]], text


def test_auto_start_token_from_a_tokenizer_that_adds_bos(models: dict[str, Path]) -> None:
    with FakeOpenAIServer(FakeConfig(model_dir=str(models["bos"]))) as srv:
        b = backend(srv)
        out = ask(b, TOKEN_LOGPROBS, [{"text": TEXTS[0]}])[0]
        assert b.start == "<s>" and b.stats()["start_token"] == "<s>"
        local = HFCausalLMBackend(str(models["bos"]), build_options(CausalOptions, {}, "hf-causal"))
        local.load()
        ref = local.token_logprobs_many([TEXTS[0]])[0]
        assert None not in out.response["logprobs"]
        assert max(abs(a - b) for a, b in zip(out.response["logprobs"], ref["logprobs"])) < 1e-4


def test_auto_start_token_without_bos_asks_for_the_option(server: FakeOpenAIServer) -> None:
    with pytest.raises(UsageError, match=r"adds no BOS.*--start-token"):
        ask(backend(server), TOKEN_LOGPROBS, [{"text": "nurse"}])


@pytest.mark.parametrize("start", ["auto", "<s>"])
def test_an_unreachable_server_is_named_not_the_start_token(start: str) -> None:
    import socket

    with socket.socket() as sock:  # a port nothing listens on once it is closed
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    opts = CompletionsOptions(base_url=url, start_token=start, max_retries=1, **FAST)
    with pytest.raises(BackendError, match=r"gave no answer .*is the server up") as err:
        ask(OpenAICompletionsBackend("tiny", opts), TOKEN_LOGPROBS, [{"text": "nurse"}])
    assert "--start-token" not in str(err.value)


def test_start_token_none_leaves_the_first_token_unscored(server: FakeOpenAIServer) -> None:
    out = ask(backend(server, start_token="none"), TOKEN_LOGPROBS, [{"text": "The nurse said"}])[0]
    assert out.response["logprobs"][0] is None and len(out.response["logprobs"]) == 3
    assert out.response["offsets"] == [[0, 3], [3, 9], [9, 14]]


def test_a_start_token_of_several_tokens_is_refused(server: FakeOpenAIServer) -> None:
    with pytest.raises(UsageError, match="2 tokens"):
        ask(backend(server, start_token="nurse said"), TOKEN_LOGPROBS, [{"text": "nurse"}])


def test_server_without_echo_log_probs_fails_fast_naming_vllm(models: dict[str, Path]) -> None:
    with FakeOpenAIServer(FakeConfig(model_dir=str(models["plain"]), echo_logprobs=False)) as srv:
        with pytest.raises(BackendError, match=r"does not echo prompt log-probs.*vLLM") as exc:
            ask(backend(srv, start_token="<s>"), TOKEN_LOGPROBS, [{"text": "nurse"}])
        assert "\n" not in str(exc.value)
        assert srv.stats()["requests"] <= 3, "refused at start, before any job is sent"


def test_the_probe_runs_once_and_trust_echo_reaches_it(
    server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from genderscope.backends.openai import probe as openai_probe

    calls: list[bool] = []
    real = openai_probe.probe_echo_logprobs

    def probe(post: Any, model: str, *, trust_echo: bool = False, **kw: Any) -> Any:
        calls.append(trust_echo)
        if not trust_echo:
            raise BackendError("refusing this server: inconsistent (test)")
        return real(post, model, trust_echo=trust_echo, **kw)

    monkeypatch.setattr(openai_probe, "probe_echo_logprobs", probe)
    with pytest.raises(BackendError, match="refusing"):
        ask(backend(server, start_token="<s>"), TOKEN_LOGPROBS, [{"text": "nurse"}])
    b = backend(server, start_token="<s>", trust_echo=True)
    ask(b, TOKEN_LOGPROBS, [{"text": "nurse"}])
    ask(b, TOKEN_LOGPROBS, [{"text": "the nurse"}])
    assert calls == [False, True], "probed once per backend, with --trust-echo passed on"


def test_missing_log_probs_in_an_answer_are_retried(server: FakeOpenAIServer) -> None:
    b = backend(server, start_token="<s>")
    ask(b, TOKEN_LOGPROBS, [{"text": "nurse"}])  # start-up done
    server.configure(schedule=["no_logprobs", "null"])
    try:
        out = ask(b, TOKEN_LOGPROBS, [{"text": "the baker said"}])[0]
    finally:
        server.configure(schedule=[])
    assert out.ok and b.stats()["retry_reasons"]["malformed"] == 2


def test_tokenize_generate_and_chat(server: FakeOpenAIServer) -> None:
    b = backend(server, start_token="<s>")
    tok = ask(b, TOKENIZE, [{"text": "The nurse said", "lookup": ["nurse", "nurse said"]}])[0].response
    assert response_problem(TOKENIZE, tok) is None
    assert tok["tokens"] == ["The", "nurse", "said"] and tok["lookup"][1] is None
    assert tok["lookup"][0] == tok["ids"][1]
    gen = ask(b, GENERATE, [{"prompt": "The nurse", "max_tokens": 3, "temperature": 0, "seed": 1}])[0]
    assert response_problem(GENERATE, gen.response) is None
    assert gen.response["n_tokens"] <= 3 and gen.response["finish_reason"] in ("length", "stop")
    chat = ask(b, CHAT, [{"messages": [{"role": "user", "content": "hi"}], "max_tokens": 5}])[0]
    assert chat.ok and isinstance(chat.response, str)


def test_fingerprint_names_the_model_and_start_token_not_the_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    a = OpenAICompletionsBackend("m", CompletionsOptions(base_url="http://a.example:8000/v1"))
    b = OpenAICompletionsBackend("m", CompletionsOptions(base_url="http://b.example:9000/v1,http://c:1/v1"))
    assert a.fingerprint == b.fingerprint == "openai-completions:m|start=auto"
    c = OpenAICompletionsBackend("m", CompletionsOptions(base_url="http://a.example/v1", model_id="rev2"))
    assert c.fingerprint == "openai-completions:m|start=auto#rev2"
    assert "sk-x" not in json.dumps(b.describe())


def test_missing_api_key_and_bad_options(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(BackendError, match="no API key: set OPENAI_API_KEY"):
        OpenAICompletionsBackend(
            "m", CompletionsOptions(base_url="http://127.0.0.1:1/v1,https://x.example/v1")
        )
    with pytest.raises(UsageError, match="--echo-max-tokens"):
        build_options(CompletionsOptions, {"echo_max_tokens": "2"}, "model kind 'openai-completions'")


def test_echo_mapping_units() -> None:
    body = {
        "choices": [
            {
                "logprobs": {
                    "tokens": ["<s>", "The", " nurse", " said", "!"],
                    "token_logprobs": [None, -1.0, -2.0, -3.0, -0.5],
                    "text_offset": [0, 3, 6, 12, 17],
                }
            }
        ],
        "usage": {"prompt_tokens": 4},
    }
    got = token_logprobs_from_echo(json.dumps(body).encode(), "The nurse said", "<s>")
    assert got == {
        "tokens": ["The", " nurse", " said"],
        "offsets": [[0, 3], [3, 9], [9, 14]],
        "logprobs": [-1.0, -2.0, -3.0],
    }
    del body["choices"][0]["logprobs"]
    with pytest.raises(ValueError, match="no echoed prompt log-probs"):
        token_logprobs_from_echo(json.dumps(body).encode(), "The nurse said", "<s>")
    # WordLevel-style pieces whose decoded strings add spaces: ends come from the text itself
    assert text_spans("a, b.", [" a", " ,", " b", " ."], [0, 2, 4, 6]) == [[0, 1], [1, 2], [2, 4], [4, 5]]
    # a whitespace-only token (byte-level BPE's "Ġ" before " ikke" split as "Ġ", "ik", "ke") spans its
    # space, as hf-causal's offsets do, so a continuation starting with it keeps its log-prob
    assert text_spans("hun ikke", ["hun", " ", "ik", "ke"], [0, 3, 4, 6]) == [[0, 3], [3, 4], [4, 6], [6, 8]]


def test_cli_runs_a_likelihood_task_and_records_the_probe(
    server: FakeOpenAIServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import sys

    import genderscope.cli.app as cli_mod

    args = [
        "genderscope",
        "run",
        "winobias-lm",
        "--model",
        "openai-completions:tiny",
        "--base-url",
        server.url,
    ]
    args += ["--start-token", "<s>", "--limit", "4", "--out", str(tmp_path / "r"), "--no-progress"]
    monkeypatch.setattr(sys, "argv", args)
    with pytest.raises(SystemExit) as exc:
        cli_mod.main()
        raise SystemExit(0)
    assert int(exc.value.code or 0) == 0, capsys.readouterr().err
    run = json.loads((tmp_path / "r" / "run.json").read_text())
    stats = run["backend_stats"]
    assert stats["start_token"] == "<s>" and stats["echo_probe"]["consistent"] is True
    assert stats["servers"][0]["ok"] == stats["servers"][0]["http_requests"]
    assert run["model"]["fingerprint"] == "openai-completions:tiny|start=<s>"
    assert os.environ.get("OPENAI_API_KEY", "") not in json.dumps(run) or not os.environ.get("OPENAI_API_KEY")


def test_a_server_that_doubles_or_drops_the_start_token_is_refused(
    models: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server that ignores ``add_special_tokens: false`` (BOS twice) is refused at start, before any
    number is scored with a shifted context (llama-cpp-python, which drops BOS from the echo, likewise)."""
    from genderscope.backends.openai import echo as openai_echo

    real = openai_echo.echo_body

    def ignoring_special_tokens_flag(model: str, prompt: Any, max_tokens: int, **kw: Any) -> bytes:
        body = json.loads(real(model, prompt, max_tokens, **kw))
        del body["add_special_tokens"]  # the fake server's default (true) then adds a second <s>
        return json.dumps(body).encode()

    monkeypatch.setattr(openai_echo, "echo_body", ignoring_special_tokens_flag)
    with FakeOpenAIServer(FakeConfig(model_dir=str(models["bos"]))) as srv:
        with pytest.raises(BackendError, match=r"begins \['<s>', '<s>'\], not the start token '<s>' once"):
            ask(backend(srv), TOKEN_LOGPROBS, [{"text": "nurse"}])
        assert srv.stats()["by_endpoint"].get("completions", 0) <= 3, "refused before any job is sent"


def test_start_up_calls_share_one_event_loop_and_session(
    server: FakeOpenAIServer, models: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    import asyncio

    from genderscope.backends.openai import http as openai_http

    own: list[Any] = []
    real_run = openai_http.run_coroutine
    monkeypatch.setattr(openai_http, "run_coroutine", lambda coro: own.append(1) or real_run(coro))
    server.reset()
    b = backend(server, start_token="<s>")
    b.ready()
    assert own == [], "no start-up call ran its own event loop"
    assert b.http._startup is None and b.probe is not None and b.multi
    shared = server.stats()
    # inside a running loop (a notebook) each call keeps its own loop, as before: the same requests
    server.reset()
    nb = backend(server, start_token="<s>")

    async def notebook() -> None:
        nb.ready()

    asyncio.run(notebook())
    assert len(own) == 5 and nb.probe == b.probe and nb.multi
    alone = server.stats()
    assert (shared["requests"], shared["by_prompt"]) == (alone["requests"], alone["by_prompt"])
    # a refused server: the loop and session are closed all the same
    with FakeOpenAIServer(FakeConfig(model_dir=str(models["plain"]), echo_logprobs=False)) as srv:
        bad = backend(srv, start_token="<s>")
        with pytest.raises(BackendError, match="does not echo"):
            bad.ready()
        assert bad.http._startup is None


def test_start_up_loop_cancels_what_an_interrupted_call_left_pending(server: FakeOpenAIServer) -> None:
    import asyncio

    b = backend(server, start_token="<s>")
    with b.http.startup():
        loop = b.http._startup
        assert loop is not None
        left = loop.create_task(asyncio.sleep(30))  # as a call that Ctrl-C broke off leaves its task
        assert b.http.call("/tokenize", {"model": "tiny", "prompt": "nurse"})["tokens"]
    assert left.cancelled() and loop.is_closed() and b.http._startup is None
