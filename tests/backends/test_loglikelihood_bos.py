"""hf-causal's ``loglikelihood`` with a tokenizer that adds BOS (Llama-style): a non-empty context is encoded
with the tokenizer's special tokens, as lm-eval 0.4.13's HFLM does (its ``tok_encode`` default), so BOS
precedes the context; an empty context is still the start token + the continuation without special tokens."""

from __future__ import annotations

import pytest

from genderscope.core.primitives import loglikelihood_request
from genderscope.core.requests import Job

CTX = "The nurse said that she \u2018 She \u2019 refers to the"
CONTS = [" nurse", " patient", " nurse said"]


@pytest.fixture(scope="module")
def bos_dir(tmp_path_factory):
    pytest.importorskip("torch")
    from genderscope.demo_models import build_tiny_causal, words_of

    return build_tiny_causal(tmp_path_factory.mktemp("bos"), words_of([CTX] + CONTS), seed=4, add_bos=True)


def _lm_eval_rule(path, context: str, conts: list[str]) -> list[float]:
    """lm-eval 0.4.13 HFLM, written out: context and context + continuation encoded with the tokenizer's
    defaults (BOS first here), continuation = whole[len(context):]; empty context: BOS + continuation."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path).eval()
    out = []
    for cont in conts:
        if context:
            c = tok.encode(context)
            x = tok.encode(context + cont)[len(c) :]
        else:
            c, x = [tok.bos_token_id], tok.encode(cont, add_special_tokens=False)
        ids = c + x
        with torch.inference_mode():
            lp = torch.log_softmax(model(torch.tensor([ids[:-1]])).logits[0].float(), -1)
        out.append(sum(float(lp[len(c) - 1 + i, t]) for i, t in enumerate(x)))
    return out


@pytest.mark.parametrize("context", [CTX, "", "The nurse"])
def test_bos_tokenizer_matches_lm_eval(bos_dir, context: str) -> None:
    from genderscope.backends.hf.causal import CausalOptions, HFCausalLMBackend

    b = HFCausalLMBackend(str(bos_dir), CausalOptions())
    out = {}
    b.answer(
        [Job(0, loglikelihood_request(context, CONTS), 1, "x")], lambda j, o: out.__setitem__(j.index, o)
    )
    assert out[0].response["logprobs"] == pytest.approx(_lm_eval_rule(bos_dir, context, CONTS), abs=1e-4)
