"""The fake server's ``/v1/completions`` echo log-probs are real: they equal ``hf-causal`` in-process on
the same tiny model (within 1e-4 nats), and over ``openai-completions:`` the four likelihood tasks
give the same per-sentence log-likelihoods and the same tables as ``hf-causal``.

Two tiny models: one whose tokenizer adds no BOS (the client must send it: ``<s>`` in the text or as
an id) and one whose tokenizer adds ``<s>`` itself (as Llama's), echoed as the first token.
"""

from __future__ import annotations

import json
import math
import urllib.request
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from genderscope import catalogue as registry  # noqa: E402
from genderscope.core.requests import Job
from genderscope.core.request_value import Request
from genderscope_dev.fake_openai import FakeConfig, FakeOpenAIServer  # noqa: E402

TOL = 1e-4  # nats
TEXTS = [
    "hun tog hans bil.",
    "Sekretæren glemte sit kort, fordi hun havde travlt.",
    "The nurse said that she was tired.",
    'He said: "I\'m fine" - and left',
    "a",
    "  two  spaces, then an unknownword!",
]


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, Path]:
    from genderscope.data.registry import DataRegistry
    from genderscope.demo_models import build_tiny_causal, likelihood_task_texts, words_of

    words = words_of(likelihood_task_texts(DataRegistry()) + TEXTS[:5])
    root = tmp_path_factory.mktemp("completions")
    return {
        "plain": build_tiny_causal(root / "plain", words, seed=11),
        "bos": build_tiny_causal(root / "bos", words, seed=11, add_bos=True),
    }


def post(url: str, path: str, body: dict[str, Any]) -> Any:
    root = url.rsplit("/v1", 1)[0]
    req = urllib.request.Request(root + path, data=json.dumps(body).encode(), method="POST")
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.loads(resp.read())


def hf_answers(model_dir: Path, texts: list[str]) -> list[dict[str, Any]]:
    from genderscope.backends.hf.causal import CausalOptions, HFCausalLMBackend

    b = HFCausalLMBackend(str(model_dir), CausalOptions())
    out: dict[int, Any] = {}
    jobs = [Job(i, Request("token_logprobs", {"text": t}), 1, f"x{i}") for i, t in enumerate(texts)]
    b.answer(jobs, lambda j, o: out.__setitem__(j.index, o.response))
    return [out[i] for i in range(len(texts))]


def echo(url: str, prompt: str | list[int], **extra: Any) -> dict[str, Any]:
    body = {"model": "tiny", "prompt": prompt, "echo": True, "logprobs": 1, "max_tokens": 1, "temperature": 0}
    return post(url, "/v1/completions", {**body, **extra})["choices"][0]


@pytest.mark.parametrize("which", ["plain", "bos"])
def test_echoed_logprobs_equal_hf_causal(models: dict[str, Path], which: str) -> None:
    """Log-probs within 1e-4 nats; token ends (text_offset + len(token) - len("<s>")) = hf offsets."""
    model_dir = models[which]
    hf = hf_answers(model_dir, TEXTS)
    with FakeOpenAIServer(FakeConfig(model_dir=str(model_dir))) as srv:
        for text, ref in zip(TEXTS, hf):
            prompt = text if which == "bos" else "<s>" + text  # the server parses "<s>" as the BOS token
            ch = echo(srv.url, prompt)
            lp = ch["logprobs"]
            n = len(ref["logprobs"])
            assert lp["tokens"][0] == "<s>" and lp["token_logprobs"][0] is None
            assert len(lp["tokens"]) == n + 2  # BOS, the text's tokens, one generated token
            got = lp["token_logprobs"][1 : n + 1]
            assert max(abs(a - b) for a, b in zip(got, ref["logprobs"])) < TOL, text
            ends = [o + len(t) - 3 for o, t in zip(lp["text_offset"][1 : n + 1], lp["tokens"][1 : n + 1])]
            assert ends == [e for _s, e in ref["offsets"]], text
            assert ch["text"].startswith(prompt) and "".join(lp["tokens"][1 : n + 1]).strip() == text.strip()
            # the same prompt as token ids (from /tokenize) gives the same numbers
            ids = post(srv.url, "/tokenize", {"prompt": prompt, "add_special_tokens": which == "bos"})[
                "tokens"
            ]
            by_ids = echo(srv.url, ids)["logprobs"]["token_logprobs"]
            assert by_ids[: n + 1] == lp["token_logprobs"][: n + 1]
        st = srv.stats()
        assert st["forwards"] >= 1 and st["by_endpoint"]["completions"] == 2 * len(TEXTS)


def test_top_logprobs_and_generated_token_are_the_model_s(models: dict[str, Path]) -> None:
    """top_logprobs hold the k best plus the token itself; the generated token is the argmax; a plain
    completion of a prefix gives the same distribution as the echo at that position."""
    with FakeOpenAIServer(FakeConfig(model_dir=str(models["bos"]))) as srv:
        ch = echo(srv.url, "The nurse said that she", logprobs=5)
        lp = ch["logprobs"]
        for t in range(1, len(lp["tokens"])):
            top = lp["top_logprobs"][t]
            assert lp["tokens"][t] in top and 5 <= len(top) <= 6
            assert max(top.values()) >= lp["token_logprobs"][t]
            assert math.log(sum(math.exp(v) for v in top.values())) < 1e-6  # a sub-distribution
        last = lp["top_logprobs"][-1]
        assert lp["token_logprobs"][-1] == max(last.values())  # greedy token
        plain = post(
            srv.url,
            "/v1/completions",
            {"prompt": "The nurse said that", "max_tokens": 1, "logprobs": 5, "temperature": 0},
        )["choices"][0]
        she = lp["top_logprobs"][-2]  # the echo's distribution where " she" is predicted
        got = plain["logprobs"]["top_logprobs"][0]  # top 5 (the greedy token is among them)
        assert len(got) == 5 and set(she) - set(got) <= {" she"}
        assert all(abs(she[tok] - v) < TOL for tok, v in got.items())
        assert plain["text"] == max(got, key=got.get) and plain["finish_reason"] in ("length", "stop")


def _run(task: str, model: str, out: Path, **options: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    from genderscope.core.engine import run_tasks

    opts = {"n_boot": 50, "bootstrap_cycles": 50}
    from genderscope.core.lookup import task_class

    fields = set(task_class(task).Options.__dataclass_fields__)
    opts = {k: v for k, v in opts.items() if k in fields}
    res = run_tasks([task], model, limit=LIMITS[task], out=out, progress=False, options={**opts, **options})
    results = json.loads((res.out_dir / "results.json").read_text())["tasks"][task]
    recs = [json.loads(x) for x in (res.out_dir / "attempts.jsonl").read_text().splitlines()]
    return results, recs


LIMITS = {"abc": 4, "dawinobias": 6, "winobias-lm": 6, "gest-likelihood": 6}


def assert_same_numbers(a: Any, b: Any, where: str = "") -> None:
    """Equal structure; floats within 1e-4 (nats or derived values), everything else identical."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and set(a) == set(b), where
        for k in a:
            assert_same_numbers(a[k], b[k], f"{where}.{k}")
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same_numbers(x, y, f"{where}[{i}]")
    elif isinstance(a, float) and isinstance(b, (int, float)):
        assert math.isclose(a, b, rel_tol=1e-6, abs_tol=TOL), f"{where}: {a} != {b}"
    else:
        assert a == b, f"{where}: {a!r} != {b!r}"


def _responses(recs: list[dict[str, Any]]) -> dict[tuple[str, int], Any]:
    return {(r["item_id"], r["trial"]): r.get("response") for r in recs}


needs_backend = pytest.mark.skipif(
    "openai-completions" not in registry.BACKENDS, reason="openai-completions backend not registered yet"
)


def _agree(task: str, model_dir: Path, tmp_path: Path, bos_added: bool) -> None:
    """The tokenizer of ``plain`` adds no BOS: the client is told the start token (hf-causal's BOS)."""
    ref, ref_recs = _run(task, f"hf-causal:{model_dir}", tmp_path / "hf")
    start = {} if bos_added else {"start_token": "<s>"}
    with FakeOpenAIServer(FakeConfig(model_dir=str(model_dir))) as srv:
        got, got_recs = _run(task, "openai-completions:tiny", tmp_path / "api", base_url=srv.url, **start)
        assert srv.stats()["by_endpoint"].get("completions", 0) > 0
    assert [r.get("error") for r in got_recs if r.get("error")] == []
    a, b = _responses(ref_recs), _responses(got_recs)
    assert set(a) == set(b)
    for key, resp in a.items():
        if isinstance(resp, dict) and "logprobs" in resp:  # token_logprobs answers: per-token nats
            assert resp["tokens"] == b[key]["tokens"] or len(resp["logprobs"]) == len(b[key]["logprobs"])
            assert [e for _s, e in resp["offsets"]] == [e for _s, e in b[key]["offsets"]], key
            for x, y in zip(resp["logprobs"], b[key]["logprobs"]):
                assert (x is None and y is None) or abs(x - y) < TOL, key
    assert_same_numbers(ref["metrics"], got["metrics"], task)
    tables = {k: v for k, v in ref.items() if k != "metrics"}
    assert_same_numbers(tables, {k: v for k, v in got.items() if k != "metrics"}, task)


@needs_backend
def test_winobias_lm_over_completions_equals_hf_causal(models: dict[str, Path], tmp_path: Path) -> None:
    _agree("winobias-lm", models["plain"], tmp_path, bos_added=False)


@needs_backend
@pytest.mark.slow
@pytest.mark.parametrize("task", ["abc", "dawinobias", "winobias-lm", "gest-likelihood"])
@pytest.mark.parametrize("which", ["plain", "bos"])
def test_likelihood_tasks_over_completions_equal_hf_causal(
    models: dict[str, Path], tmp_path: Path, task: str, which: str
) -> None:
    _agree(task, models[which], tmp_path, bos_added=which == "bos")


def test_a_shifted_server_is_caught(models: dict[str, Path]) -> None:
    """Negative control: a server whose log-probs are 1e-3 nats off fails the comparison above."""
    ref = hf_answers(models["bos"], TEXTS[:1])[0]["logprobs"]
    with FakeOpenAIServer(FakeConfig(model_dir=str(models["bos"]), logprob_shift=1e-3)) as srv:
        got = echo(srv.url, TEXTS[0])["logprobs"]["token_logprobs"][1 : len(ref) + 1]
    assert min(abs(a - b) for a, b in zip(got, ref)) > TOL
