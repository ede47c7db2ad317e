"""hf-mlm backend on a tiny random BERT: its primitives (fill_mask, masked_logprobs, tokenize): batched PLL
= naive loop, batch-size invariance, fill-mask, GenDa Lens cross-entropy as masked_logprobs with nothing
masked, thread/option handling."""

from __future__ import annotations


import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from genderscope.core.primitives import Prediction  # noqa: E402
from genderscope.core.requests import Job  # noqa: E402
from genderscope.core.request_value import Request  # noqa: E402
from genderscope.demo_models import build_tiny_mlm, words_of  # noqa: E402

SENTS = [
    "bibliotekaren mistede sin tegnebog ved huset.",
    "hun tog hans bil.",
    "han så hende.",
    "sekretæren glemmer sit kreditkort på bordet.",
    "a",
    "hun tog hendes bil i går ved huset med sit kort.",
]


@pytest.fixture(scope="module")
def mlm_dir(tmp_path_factory):
    return build_tiny_mlm(
        tmp_path_factory.mktemp("mlm"), words_of(SENTS + ["hendes ham sine kort i går med"])
    )


def backend(path, **kw):
    from genderscope.backends.hf.mlm import HFMaskedLMBackend, MLMOptions

    return HFMaskedLMBackend(str(path), MLMOptions(**kw))


def ask(b, reqs):
    out = {}
    b.answer([Job(i, r, 1, f"x{i}") for i, r in enumerate(reqs)], lambda j, o: out.__setitem__(j.index, o))
    return [out[i] for i in range(len(reqs))]


def PLL(text):
    return Request("masked_logprobs", {"text": text, "mask": "each"})


def pll_of(outcome):
    return sum(outcome.response["logprobs"])


def naive_pll(path, text):
    """One masked copy per forward, full model, no batching (Salazar et al. 2020)."""
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForMaskedLM.from_pretrained(path).eval()
    enc = tok(text, return_special_tokens_mask=True)
    ids = enc["input_ids"]
    total = 0.0
    with torch.inference_mode():
        for t, special in enumerate(enc["special_tokens_mask"]):
            if special:
                continue
            x = list(ids)
            x[t] = tok.mask_token_id
            logits = model(input_ids=torch.tensor([x])).logits[0, t]
            total += float(torch.log_softmax(logits, -1)[ids[t]])
    return total


def test_batched_pll_equals_naive_loop(mlm_dir):
    res = ask(backend(mlm_dir), [PLL(s) for s in SENTS])
    for s, r in zip(SENTS, res):
        assert r.ok, r.error
        assert pll_of(r) == pytest.approx(naive_pll(mlm_dir, s), rel=1e-5)
        assert len(r.response["positions"]) == len(r.response["ids"]) - 2  # CLS and SEP are not scored


def _ce_requests(b):
    """GenDa Lens's ABC step as primitives: tokenize S text E, substitute, score with nothing masked."""
    out = []
    for s in SENTS:
        if " sin " not in s and " sit " not in s:
            continue
        t = ask(b, [Request("tokenize", {"text": f"[CLS] {s} [SEP]", "lookup": ["hans", "hendes"]})])[
            0
        ].response
        k = next(i for i, x in enumerate(t["tokens"]) if x in ("sin", "sit"))
        for rid in [None] + t["lookup"]:
            ids = list(t["ids"])
            if rid is not None:
                ids[k] = rid
            n = len(ids)
            out.append(
                Request(
                    "masked_logprobs",
                    {"ids": ids, "positions": list(range(n)), "targets": t["ids"], "mask": "none"},
                )
            )
    return out


@pytest.mark.parametrize("kind", ["pll", "fill_mask", "cross_entropy", "masked_all"])
def test_batch_size_invariance(mlm_dir, kind):
    if kind == "pll":
        reqs = [PLL(s) for s in SENTS]
    elif kind == "fill_mask":
        reqs = [
            Request(
                "fill_mask", {"text": s.split(" ")[0] + " [MASK] " + " ".join(s.split(" ")[1:]), "top_k": 3}
            )
            for s in SENTS
            if " " in s
        ]
    elif kind == "masked_all":
        reqs = [
            Request("masked_logprobs", {"text": s, "positions": [1, 2], "mask": "all"})
            for s in SENTS
            if " " in s
        ]
    else:
        reqs = _ce_requests(backend(mlm_dir))
    small = backend(mlm_dir, batch_tokens=8)
    big = backend(mlm_dir, batch_tokens=100000)
    a, b = ask(small, reqs), ask(big, reqs)
    assert small.counters["forward_passes"] > big.counters["forward_passes"]

    def nums(x):
        if isinstance(x, dict):
            return [v for k in sorted(x) for v in nums(x[k])]
        if isinstance(x, list):
            return [v for e in x for v in nums(e)]
        return [x] if isinstance(x, float) else []

    for ra, rb in zip(a, b):
        assert ra.ok and rb.ok
        assert nums(ra.response) == pytest.approx(nums(rb.response), rel=1e-5, abs=1e-6)
        if kind == "fill_mask":
            assert [t["id"] for t in ra.response["top"]] == [t["id"] for t in rb.response["top"]]


def test_fill_mask_is_argmax_of_unbatched_forward(mlm_dir):
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(mlm_dir)
    model = AutoModelForMaskedLM.from_pretrained(mlm_dir).eval()
    r = ask(backend(mlm_dir), [Request("fill_mask", {"text": "hun tog [MASK] bil .", "top_k": 2})])[0]
    enc = tok("hun tog [MASK] bil .", return_tensors="pt")
    assert r.response["ids"] == enc["input_ids"][0].tolist()
    pos = enc["input_ids"][0].tolist().index(tok.mask_token_id)
    with torch.inference_mode():
        logits = model(**enc).logits[0, pos]
    assert r.response["top"][0]["id"] == int(logits.argmax())
    assert r.response["top"][0]["str"] == tok.decode([int(logits.argmax())])


def test_fill_mask_needs_exactly_one_mask(mlm_dir):
    r = ask(backend(mlm_dir), [Request("fill_mask", {"text": "hun [MASK] [MASK] bil", "top_k": 1})])[0]
    assert not r.ok and "2 mask tokens" in r.error


def test_cross_entropy_matches_spec_procedure(mlm_dir):
    """GenDa Lens's CE (spec §4.1) = the loss of masked_logprobs with nothing masked, bit for bit."""
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(mlm_dir)
    model = AutoModelForMaskedLM.from_pretrained(mlm_dir).eval()
    s = "bibliotekaren mistede sin tegnebog ved huset."
    b = backend(mlm_dir)
    t = ask(b, [Request("tokenize", {"text": "[CLS] " + s + " [SEP]", "lookup": ["hans", "hendes"]})])[
        0
    ].response
    toks = tok.tokenize("[CLS] " + s + " [SEP]")
    assert t["tokens"] == toks and t["tokens"].index("sin") == 3 and len(toks) == 9
    assert t["specials"]["cls"] == "[CLS]" and t["lookup"] == tok.convert_tokens_to_ids(["hans", "hendes"])
    target = torch.tensor(tok.convert_tokens_to_ids(toks))
    for word in [None, "hans", "hendes"]:
        tv = list(toks)
        if word:
            tv[3] = word
        ids = tok.convert_tokens_to_ids(tv)
        payload = {"ids": ids, "positions": list(range(9)), "targets": t["ids"], "mask": "none"}
        r = ask(b, [Request("masked_logprobs", payload)])[0].response
        with torch.inference_mode():
            logits = model(torch.tensor([ids])).logits[0]
        assert r["loss"] == float(torch.nn.CrossEntropyLoss()(logits, target))
        assert -sum(r["logprobs"]) / 9 == pytest.approx(r["loss"], rel=1e-6)


def test_tokenize_reports_continuation_prefix(mlm_dir):
    r = ask(backend(mlm_dir), [Request("tokenize", {"text": " hendes"})])[0].response
    assert r["tokens"] == ["hendes"] and r["continuation_prefix"] == "##" and r["dtype"] == "float32"


def test_fingerprint_changes_with_weights_and_dtype(mlm_dir, tmp_path):
    a = backend(mlm_dir).fingerprint
    assert a == backend(mlm_dir).fingerprint
    assert backend(mlm_dir, dtype="bfloat16").fingerprint != a
    other = build_tiny_mlm(tmp_path / "other", words_of(SENTS + ["hendes ham sine kort i går med"]), seed=1)
    assert backend(other).fingerprint != a


def test_threads_explicit_option_then_env(mlm_dir, monkeypatch):
    monkeypatch.setenv("GENDERSCOPE_TORCH_THREADS", "1")
    before = torch.get_num_threads()
    b = backend(mlm_dir)
    ask(b, [PLL("hun tog hans bil.")])
    assert b.stats()["num_threads"] == 1 and torch.get_num_threads() == 1  # env replaces the default
    b = backend(mlm_dir, threads=2)
    ask(b, [PLL("hun tog hans bil.")])
    assert b.stats()["num_threads"] == 2  # an explicit --threads wins
    torch.set_num_threads(before)


def test_oom_halves_the_batch(mlm_dir, monkeypatch):
    from genderscope.backends.hf import mlm as hf_mlm

    b = backend(mlm_dir, batch_tokens=100000)
    b.load()
    real = hf_mlm.HFMaskedLMBackend._logits_at

    def flaky(self, rows, positions):
        if len(rows) > 2:
            raise torch.OutOfMemoryError("CUDA out of memory (simulated)")
        return real(self, rows, positions)

    monkeypatch.setattr(hf_mlm.HFMaskedLMBackend, "_logits_at", flaky)
    got = ask(b, [PLL(s) for s in SENTS[:3]])
    assert b.counters["oom_halvings"] > 0
    ref = ask(backend(mlm_dir), [PLL(s) for s in SENTS[:3]])
    assert [pll_of(g) for g in got] == pytest.approx([pll_of(r) for r in ref], rel=1e-5)


def test_missing_model_is_a_clear_error(tmp_path):
    from genderscope.common.errors import BackendError

    with pytest.raises(BackendError, match="neither a local directory"):
        backend(tmp_path / "nope")


def test_checkpoint_without_mlm_head_is_refused(mlm_dir, tmp_path):
    """§4.1 / pitfall 10: a checkpoint whose MLM head would be newly initialised is refused."""
    from transformers import AutoTokenizer, BertModel

    from genderscope.common.errors import BackendError

    headless = tmp_path / "headless"
    BertModel.from_pretrained(mlm_dir).save_pretrained(headless)
    AutoTokenizer.from_pretrained(mlm_dir).save_pretrained(headless)
    b = backend(headless)
    with pytest.raises(BackendError, match="lacks weights of the masked-LM head"):
        ask(b, [PLL("hun tog hans bil.")])
    ask(backend(mlm_dir), [PLL("hun tog hans bil.")])  # the full checkpoint loads


def test_device_map_auto_is_accepted_and_recorded_on_cpu(mlm_dir, tmp_path):
    """`--device-map auto` goes through the CLI to accelerate (everything lands on the CPU here)."""
    import json

    from typer.testing import CliRunner

    from genderscope.cli.app import app

    pytest.importorskip("accelerate")
    res = CliRunner().invoke(
        app,
        [
            "run",
            "abc",
            "--model",
            f"hf-mlm:{mlm_dir}",
            "--limit",
            "1",
            "--n-boot",
            "0",
            "--device-map",
            "auto",
            "--out",
            str(tmp_path / "r"),
        ],
    )
    assert res.exit_code == 0, res.output
    run = json.loads((tmp_path / "r" / "run.json").read_text())
    assert run["model"]["options"]["device_map"] == "auto"
    assert run["backend_stats"]["device_map"] == "auto" and run["backend_stats"]["devices"] == ["cpu"]
    with_map = ask(backend(mlm_dir, device_map="auto"), [PLL(SENTS[0])])[0]
    plain = ask(backend(mlm_dir), [PLL(SENTS[0])])[0]
    assert pll_of(with_map) == pytest.approx(pll_of(plain), rel=1e-6)
    with pytest.raises(ValueError, match="only 'auto'"):
        backend(mlm_dir, device_map="balanced")


def test_compat_mode_refuses_reduced_precision(mlm_dir, tmp_path):
    """Spec §7: GenDa Lens parity is float32 only (the backend reports its precision in tokenize answers);
    reduced precision is for the default mode."""
    from genderscope.core.engine import run_tasks
    from genderscope.common.errors import UsageError

    r = ask(backend(mlm_dir, dtype="bfloat16"), [Request("tokenize", {"text": ""})])[0].response
    assert r["dtype"] == "bfloat16"
    with pytest.raises(UsageError, match="--dtype float32"):
        run_tasks(["abc"], f"hf-mlm:{mlm_dir}", limit=1, options={"mode": "genda-lens", "dtype": "bfloat16"},
                  out=tmp_path / "r", progress=False, use_cache=False)  # fmt: skip
    out = run_tasks(["abc"], f"hf-mlm:{mlm_dir}", limit=1, options={"dtype": "bfloat16", "n_boot": 0},
                    out=tmp_path / "d", progress=False, use_cache=False)  # fmt: skip
    assert out.runs[0].counts.errors == 0


def test_byte_level_piece_decodes_with_its_leading_space():
    """Pitfall 11: token_str = decode([id]) keeps the space of a byte-level ``Ġhun`` under the installed
    transformers (so compat counts it as UNK, and default mode strips it and finds the pronoun)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    from genderscope.tasks.dawinobias import data as D
    from genderscope.tasks.dawinobias.task import DaWinoBiasTask

    vocab = {"<unk>": 0, "Ġhun": 1, "hun": 2, "Ġ": 3}
    tk = Tokenizer(models.BPE(vocab=vocab, merges=[], unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tk.decoder = decoders.ByteLevel()
    tok = PreTrainedTokenizerFast(tokenizer_object=tk, unk_token="<unk>")
    s = tok.decode([1])
    assert s == " hun" and D.compat_group(s) == "other"
    text = tok.decode([1], skip_special_tokens=False, clean_up_tokenization_spaces=False)
    top = Prediction.of({"token": "Ġhun", "text": text})
    assert DaWinoBiasTask.robust_group(top, {})[:2] == ("female", "hun")


def test_full_logits_budget_caps_only_large_batches(mlm_dir):
    from genderscope.backends.hf import runtime as C

    big = backend(mlm_dir, batch_tokens=10**7)
    big.load()
    vocab = big.model.config.vocab_size
    assert big.full_logits_budget() == max(64, C.CPU_LOGITS_FLOATS // vocab) < 10**7
    small = backend(mlm_dir, batch_tokens=8)
    small.load()
    assert small.full_logits_budget() == 8  # never above --batch-tokens
