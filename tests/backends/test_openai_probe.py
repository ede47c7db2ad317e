"""The start-up echo probe (backends/openai/probe.py) against stub ``post`` callables: a stub word-level
"language model" answers /completions the way vLLM does, or without echo, or shifted by one token the way
llama-cpp-python's server does when the model adds no BOS."""

from __future__ import annotations

import hashlib
import math
import re
from typing import Any

import pytest

from genderscope.backends.openai.probe import PROBE_TEXT, TRUST_ECHO_OPTION, probe_echo_logprobs
from genderscope.common.errors import BackendError

VOCAB = ["The", " nurse", " said", " that", " she", " he", " was", " it", " the", "."]
BOS = "<|im_start|>"


def dist(context: tuple[str, ...]) -> dict[str, float]:
    """A fixed pseudo-random next-token distribution (natural-log softmax) for each context."""
    logits = {t: int.from_bytes(hashlib.sha256(repr((context, t)).encode()).digest()[:4], "big") / 2**32 * 8
              for t in VOCAB}
    if context and context[-1] == " that":
        logits[" she"] += 6.0  # like a real model: " she" is likely after "said that"
    z = math.log(sum(math.exp(v) for v in logits.values()))
    return {t: v - z for t, v in logits.items()}


def top5(d: dict[str, float]) -> dict[str, float]:
    return dict(sorted(d.items(), key=lambda kv: -kv[1])[:5])


class StubServer:
    """``post(path, body)`` for a stub model; flags make it misbehave."""

    def __init__(self, bos: bool = True, shift: bool = False, echo: bool = True, noise: float = 0.0,
                 echo_top: bool = True, plain_logprobs: bool = True):
        self.bos, self.shift, self.echo, self.noise = bos, shift, echo, noise
        self.echo_top, self.plain_logprobs = echo_top, plain_logprobs
        self.bodies: list[dict[str, Any]] = []

    def __call__(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        assert path == "/completions"
        self.bodies.append(body)
        seq = ([BOS] if self.bos else []) + re.findall(r" ?[^ ]+", body["prompt"])
        ctx = tuple(seq)
        gen = max(dist(ctx).items(), key=lambda kv: kv[1])[0]
        if body.get("echo") and self.echo:
            toks = seq + [gen]
            if self.shift:  # position i's distribution (which predicts token i+1) scores token i
                dists = [dist(tuple(toks[: i + 1])) for i in range(len(toks))]
            else:
                dists = [None] + [dist(tuple(toks[:i])) for i in range(1, len(toks))]
            lps = [None if d is None else d.get(t, -20.0) + self.noise for t, d in zip(toks, dists)]
            tops = [None if d is None else {k: v + self.noise for k, v in top5(d).items()} for d in dists]
            text = body["prompt"] + gen
        else:
            toks, d = [gen], dist(ctx)
            lps, tops, text = [d[gen]], [top5(d)], gen
        logprobs: dict[str, Any] | None = {"tokens": toks, "token_logprobs": lps}
        if self.echo_top or not body.get("echo"):
            logprobs["top_logprobs"] = tops
        if not body.get("echo") and not self.plain_logprobs:
            logprobs = None
        return {"object": "text_completion", "choices": [{"index": 0, "text": text, "logprobs": logprobs}]}


def test_good_server_passes_with_two_requests() -> None:
    srv = StubServer()
    probe = probe_echo_logprobs(srv, "m")
    assert probe.consistent and probe.difference < 1e-12 and probe.lead == BOS
    assert probe.token == " she" and probe.prefix == "The nurse said that"
    assert [b.get("echo", False) for b in srv.bodies] == [True, False]
    assert srv.bodies[0] == {"model": "m", "prompt": PROBE_TEXT, "echo": True, "logprobs": 5,
                             "max_tokens": 1, "temperature": 0}
    assert srv.bodies[1]["prompt"] == "The nurse said that"
    assert probe.as_dict()["consistent"] is True


def test_good_server_without_bos_passes() -> None:
    probe = probe_echo_logprobs(StubServer(bos=False), "m")
    assert probe.consistent and probe.lead == ""


def test_start_text_and_extra_fields_are_sent() -> None:
    """The probe asks as the backend does: its start text in front, its extra body fields."""
    srv = StubServer(bos=False)
    probe = probe_echo_logprobs(srv, "m", start="<s>", extra={"add_special_tokens": False})
    assert [b["prompt"] for b in srv.bodies] == ["<s>" + PROBE_TEXT, "<s>The nurse said that"]
    assert all(b["add_special_tokens"] is False for b in srv.bodies)
    assert probe.consistent and probe.lead == "<s>"


def test_shifted_server_is_refused_unless_trusted() -> None:
    with pytest.raises(BackendError, match="disagree") as err:
        probe_echo_logprobs(StubServer(bos=False, shift=True), "m")
    msg = str(err.value)
    assert TRUST_ECHO_OPTION in msg and "vLLM" in msg and "hf-causal" in msg and "\n" not in msg
    probe = probe_echo_logprobs(StubServer(bos=False, shift=True), "m", trust_echo=True)
    assert not probe.consistent and probe.difference > 0.05
    assert probe.as_dict()["token_difference"] == pytest.approx(abs(probe.echo_logprob - dist(
        ("The", " nurse", " said", " that"))[" she"]))


def test_shift_caught_from_the_token_logprob_alone() -> None:
    with pytest.raises(BackendError, match="disagree"):
        probe_echo_logprobs(StubServer(bos=True, shift=True, echo_top=False), "m")


@pytest.mark.parametrize("noise,ok", [(0.01, True), (-0.04, True), (0.2, False), (-1.0, False)])
def test_tolerance(noise: float, ok: bool) -> None:
    srv = StubServer(noise=noise)
    if ok:
        assert probe_echo_logprobs(srv, "m").difference == pytest.approx(abs(noise))
    else:
        with pytest.raises(BackendError, match="disagree"):
            probe_echo_logprobs(srv, "m")
    assert probe_echo_logprobs(StubServer(noise=0.2), "m", tolerance=0.3).consistent


def test_no_echo_server_fails_fast() -> None:
    srv = StubServer(echo=False)
    with pytest.raises(BackendError, match="does not echo prompt log-probs") as err:
        probe_echo_logprobs(srv, "m", trust_echo=True)
    assert "llama.cpp" in str(err.value) and "vLLM" in str(err.value) and len(srv.bodies) == 1


@pytest.mark.parametrize("answer", [
    {"choices": [{"text": "x", "logprobs": None}]},
    {"choices": [{"text": "x", "logprobs": {"content": [{"token": "x", "logprob": -1.0}]}}]},
    {"choices": [{"text": PROBE_TEXT, "logprobs": {"tokens": ["The nurse said that", " she"],
                                                   "token_logprobs": [None, None]}}]},
])
def test_answers_without_prompt_logprobs(answer: dict[str, Any]) -> None:
    with pytest.raises(BackendError, match="does not echo"):
        probe_echo_logprobs(lambda path, body: answer, "m")


def test_not_a_completion() -> None:
    with pytest.raises(BackendError, match="not a text completion"):
        probe_echo_logprobs(lambda path, body: {"error": "nope"}, "m")


def test_transport_error_gains_a_hint() -> None:
    def post(path: str, body: dict[str, Any]) -> Any:
        raise BackendError("HTTP 400: echo is not supported for this model")

    with pytest.raises(BackendError, match="HTTP 400.*echo probe.*vLLM"):
        probe_echo_logprobs(post, "m")


def test_plain_completion_without_logprobs() -> None:
    with pytest.raises(BackendError, match="cannot be checked"):
        probe_echo_logprobs(StubServer(plain_logprobs=False), "m")
    probe = probe_echo_logprobs(StubServer(plain_logprobs=False), "m", trust_echo=True)
    assert not probe.consistent and "no log-probs" in probe.summary()


@pytest.mark.slow
def test_against_the_fake_server(tmp_path) -> None:  # noqa: ANN001
    """The fake server's echo (a real tiny transformers model) passes; with its echoed log-probs moved
    by 0.5 nats (``logprob_shift``) it is refused."""
    pytest.importorskip("transformers")
    import json
    import urllib.request

    from genderscope_dev.fake_openai import FakeConfig, FakeOpenAIServer
    from genderscope.demo_models import build_tiny_causal

    model = build_tiny_causal(tmp_path / "m", PROBE_TEXT.split() + ["he", "was"], seed=3)
    for shift in (0.0, 0.5):
        with FakeOpenAIServer(FakeConfig(model_dir=str(model), logprob_shift=shift)) as srv:
            def post(path: str, body: dict[str, Any]) -> Any:
                req = urllib.request.Request(srv.url + path, data=json.dumps(body).encode(),
                                             headers={"Content-Type": "application/json"})
                with urllib.request.urlopen(req, timeout=60) as resp:
                    return json.loads(resp.read())

            if shift:
                with pytest.raises(BackendError, match="disagree"):
                    probe_echo_logprobs(post, "m")
            else:
                probe = probe_echo_logprobs(post, "m")
                assert probe.consistent and probe.difference < 1e-5 and probe.completion_logprob is not None
