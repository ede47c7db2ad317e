"""The ``loglikelihood`` primitive (lm-eval's): hf-causal's shared-context and whole-sequence routes equal a
naive computation with lm-eval's encoding; the null model and payload checks."""

from __future__ import annotations

import pytest

from genderscope.backends.continuations import encode_pairs, split_context
from genderscope.core.primitives import ProtocolError, check_payload, loglikelihood_request, response_problem
from genderscope.core.requests import Job

CTX = "han så hende i går ved huset med sit kort og hun tog hans bil ."
CONTS = [" hun", " han tog hans bil", " sekretæren glemmer sit kort", " a"]


def test_split_moves_trailing_whitespace():
    assert split_context("A: ", ["x", "y"]) == ("A:", [" x", " y"])
    assert split_context("A:", [" x"]) == ("A:", [" x"])


def test_encode_pairs_empty_context_uses_start_token():
    ctx, conts = encode_pairs(lambda t, sp: [len(w) for w in t.split()], "", ["ab c"], 7)
    assert ctx == [7] and conts == [[2, 1]]
    with pytest.raises(ValueError):
        encode_pairs(lambda t, sp: [1], "", ["x"], None)


def test_encode_pairs_uses_default_special_tokens_for_contexts():
    def enc(t, sp):
        return ([0] if sp else []) + [len(w) for w in t.split()]

    ctx, conts = encode_pairs(enc, "a bb ", ["ccc", "d"], 9)
    assert ctx == [0, 1, 2] and conts == [[3], [1]]


def test_payload_and_answer_checks():
    check_payload("loglikelihood", loglikelihood_request("c", ["a", "b"]).payload)
    with pytest.raises(ProtocolError):
        check_payload("loglikelihood", {"context": "c", "continuations": []})
    assert response_problem("loglikelihood", {"logprobs": [-1.0], "n_tokens": [1], "greedy": [True]}) is None
    assert response_problem("loglikelihood", {"logprobs": [-1.0], "n_tokens": []}) is not None


def test_random_answers_every_continuation():
    from genderscope.backends.random_model import RandomBackend, RandomOptions

    b = RandomBackend("", RandomOptions())
    out = {}
    b.answer([Job(0, loglikelihood_request("c", CONTS), 1, "x")], lambda j, o: out.__setitem__(j.index, o))
    r = out[0].response
    assert len(r["logprobs"]) == len(CONTS) and all(
        -5 * n <= lp <= -n for lp, n in zip(r["logprobs"], r["n_tokens"])
    )


@pytest.fixture(scope="module", params=[False, True], ids=["no-bos", "adds-bos"])
def causal_dir(tmp_path_factory, request):
    pytest.importorskip("torch")
    from genderscope.demo_models import build_tiny_causal, words_of

    return build_tiny_causal(tmp_path_factory.mktemp("ll"), words_of([CTX] + CONTS), add_bos=request.param)


def _naive(path, context, conts):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path).eval()
    ctx, enc = encode_pairs(
        lambda t, sp: tok(t, add_special_tokens=sp)["input_ids"], context, conts, tok.bos_token_id
    )
    out = []
    for c in enc:
        ids = ctx + c
        with torch.inference_mode():
            lp = torch.log_softmax(model(torch.tensor([ids[:-1]])).logits[0].float(), -1)
        out.append(sum(float(lp[len(ctx) - 1 + i, t]) for i, t in enumerate(c)))
    return out


@pytest.mark.parametrize("route", ["shared", "tree", "whole"])
@pytest.mark.parametrize("context", [CTX, "", "hun tog "])
def test_hf_causal_equals_naive(causal_dir, context, route, monkeypatch):
    from genderscope.backends.hf import loglikelihood as hf_loglikelihood
    from genderscope.backends.hf.causal import CausalOptions, HFCausalLMBackend

    monkeypatch.setattr(hf_loglikelihood, "SHARE_MIN_SAVED", 1 if route == "shared" else 10**9)
    for name in ("TREE_MAX_SHARE", "TREE_MAX_SHARE_SPLIT"):
        monkeypatch.setattr(hf_loglikelihood, name, 1.0 if route == "tree" else -1.0)
    b = HFCausalLMBackend(str(causal_dir), CausalOptions())
    reqs = [loglikelihood_request(context, CONTS), loglikelihood_request(context, CONTS[:1])]
    out = {}
    b.answer([Job(i, r, 1, f"x{i}") for i, r in enumerate(reqs)], lambda j, o: out.__setitem__(j.index, o))
    want = _naive(causal_dir, context, CONTS)
    assert out[0].response["logprobs"] == pytest.approx(want, abs=1e-4)
    assert out[1].response["logprobs"] == pytest.approx(want[:1], abs=1e-4)
    shared = b.counters.get("context_tokens_shared", 0)
    assert (shared > 0) == (route != "whole")


@pytest.mark.parametrize("context", [CTX, "hun tog ", ""])
def test_single_token_continuations_share_one_prediction(causal_dir, context):
    """Every continuation one token (DiscrimEval's yes/Yes/no/No): contexts batched, left-padded, one
    prediction each; equal to the naive computation, contexts of several lengths in one batch."""
    from genderscope.backends.hf.causal import CausalOptions, HFCausalLMBackend

    single = [" hun", " a", " han"]
    b = HFCausalLMBackend(str(causal_dir), CausalOptions())
    reqs = [loglikelihood_request(context, single), loglikelihood_request(CTX + " og", single)]
    out = {}
    b.answer([Job(i, r, 1, f"x{i}") for i, r in enumerate(reqs)], lambda j, o: out.__setitem__(j.index, o))
    assert out[0].response["n_tokens"] == [1, 1, 1]
    assert out[0].response["logprobs"] == pytest.approx(_naive(causal_dir, context, single), abs=1e-4)
    assert out[1].response["logprobs"] == pytest.approx(_naive(causal_dir, CTX + " og", single), abs=1e-4)


def test_token_tree_merges_prefixes_and_points_at_parents():
    """Continuations sharing words: each distinct prefix is one node; every target is read from its
    parent's node; depth = position in the separate sequence."""
    from genderscope.backends.hf.tree import build_tree, flat_tokens

    ctx, conts = [1, 5], [[7, 8, 9], [7, 8, 4], [6]]
    tree = build_tree(ctx, conts)
    assert tree.tokens == [1, 5, 7, 8] and tree.parent == [-1, 0, 1, 2] and tree.depth == [0, 1, 2, 3]
    assert tree.targets == [[(1, 7), (2, 8), (3, 9)], [(1, 7), (2, 8), (3, 4)], [(1, 6)]]
    assert flat_tokens(ctx, conts) == 4 + 4 + 2
    assert build_tree([3], [[1, 2], [2, 1]]).tokens == [3, 1, 2]


def test_tree_route_batches_requests_of_several_sizes(causal_dir, monkeypatch):
    """Several trees of different sizes in one padded batch give each request's naive numbers."""
    from genderscope.backends.hf import loglikelihood as hf_loglikelihood
    from genderscope.backends.hf.causal import CausalOptions, HFCausalLMBackend

    monkeypatch.setattr(hf_loglikelihood, "SHARE_MIN_SAVED", 10**9)
    monkeypatch.setattr(hf_loglikelihood, "TREE_MAX_SHARE", 1.0)
    monkeypatch.setattr(hf_loglikelihood, "TREE_MAX_SHARE_SPLIT", 1.0)
    b = HFCausalLMBackend(str(causal_dir), CausalOptions())
    cases = [(CTX, CONTS), ("", CONTS[:2]), ("hun tog ", CONTS[1:])]
    reqs = [loglikelihood_request(c, k) for c, k in cases]
    out = {}
    b.answer([Job(i, r, 1, f"x{i}") for i, r in enumerate(reqs)], lambda j, o: out.__setitem__(j.index, o))
    assert b.counters["forward_passes"] == 1
    for i, (c, k) in enumerate(cases):
        assert out[i].response["logprobs"] == pytest.approx(_naive(causal_dir, c, k), abs=1e-4)


def test_context_forest_merges_shared_prefixes_across_requests():
    """Single-token requests: contexts sharing ≥ 2 leading tokens share one tree (up to the cap); each
    continuation is read at its context's last node."""
    from genderscope.backends.hf.tree import context_forest

    items = [([1, 5, 7, 8], [3, 4]), ([2, 9], [3]), ([1, 5, 7, 6], [4]), ([1, 5], [3])]
    forest = context_forest(items, cap=6)
    (tree, members), (other, rest) = forest
    assert members == [3, 2, 0] and tree.tokens == [1, 5, 7, 6, 8] and tree.depth == [0, 1, 2, 3, 3]
    assert tree.targets == [[(1, 3)], [(3, 4)], [(4, 3)], [(4, 4)]]
    assert rest == [1] and other.tokens == [2, 9]
    assert [m for _t, m in context_forest(items, cap=4)] == [[3, 2], [0], [1]]


def test_split_head_refuses_post_processed_logits(causal_dir):
    """The head is split off only when head(body(x)) gives the model's own logits."""
    import torch
    from transformers import AutoModelForCausalLM

    from genderscope.backends.hf.tensors import split_head

    model = AutoModelForCausalLM.from_pretrained(causal_dir).eval()
    assert split_head(model) is not None

    class Scaled(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner, self.base_model = inner, inner.base_model

        def get_output_embeddings(self):
            return self.inner.get_output_embeddings()

        def get_input_embeddings(self):
            return self.inner.get_input_embeddings()

        def forward(self, **kw):
            out = self.inner(**kw)
            out.logits = out.logits * 2.0
            return out

    assert split_head(Scaled(model)) is None
