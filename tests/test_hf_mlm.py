"""hf-mlm backend on a tiny random BERT: batched PLL = naive loop, batch-size invariance, fill-mask,
compat cross-entropy, caching, thread/option handling."""

from __future__ import annotations


import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from genderscope.core.requests import Job, Request  # noqa: E402
from genderscope.testing.tiny_models import build_tiny_mlm, words_of  # noqa: E402

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
    from genderscope.backends.hf_mlm import HFMaskedLMBackend, MLMOptions

    return HFMaskedLMBackend(str(path), MLMOptions(**kw))


def ask(b, reqs):
    out = {}
    b.answer([Job(i, r, 1, f"x{i}") for i, r in enumerate(reqs)], lambda j, o: out.__setitem__(j.index, o))
    return [out[i] for i in range(len(reqs))]


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
    res = ask(backend(mlm_dir), [Request("pll", {"text": s}) for s in SENTS])
    for s, r in zip(SENTS, res):
        assert r.ok, r.error
        assert r.response["loglik"] == pytest.approx(naive_pll(mlm_dir, s), rel=1e-5)
        assert r.response["n_scored"] == r.response["n_tokens"] - 2


@pytest.mark.parametrize("kind", ["pll", "fill_mask", "cross_entropy"])
def test_batch_size_invariance(mlm_dir, kind):
    if kind == "pll":
        reqs = [Request("pll", {"text": s, "per_token": True}) for s in SENTS]
    elif kind == "fill_mask":
        reqs = [
            Request(
                "fill_mask",
                {"left": s.split(" ")[0] + " ", "right": " " + " ".join(s.split(" ")[1:]), "top_k": 3},
            )
            for s in SENTS
            if " " in s
        ]
    else:
        reqs = [
            Request("cross_entropy", {"text": s, "find": ["sin", "sit"], "replacements": ["hans", "hendes"]})
            for s in SENTS
            if " sin " in s or " sit " in s
        ]
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
    r = ask(backend(mlm_dir), [Request("fill_mask", {"left": "hun tog ", "right": " bil .", "top_k": 2})])[0]
    assert r.response["input"] == "hun tog [MASK] bil ."
    enc = tok(r.response["input"], return_tensors="pt")
    pos = enc["input_ids"][0].tolist().index(tok.mask_token_id)
    with torch.inference_mode():
        logits = model(**enc).logits[0, pos]
    assert r.response["top"][0]["id"] == int(logits.argmax())
    assert r.response["top"][0]["str"] == tok.decode([int(logits.argmax())])


def test_fill_mask_needs_exactly_one_mask(mlm_dir):
    r = ask(backend(mlm_dir), [Request("fill_mask", {"left": "hun [MASK] ", "right": " bil", "top_k": 1})])[0]
    assert not r.ok and "2 mask tokens" in r.error


def test_cross_entropy_matches_spec_procedure(mlm_dir):
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(mlm_dir)
    model = AutoModelForMaskedLM.from_pretrained(mlm_dir).eval()
    s = "bibliotekaren mistede sin tegnebog ved huset."
    r = ask(
        backend(mlm_dir),
        [
            Request(
                "cross_entropy",
                {"text": s, "find": ["sin", "sit", "sine"], "replacements": ["hans", "hendes"]},
            )
        ],
    )[0].response
    toks = tok.tokenize("[CLS] " + s + " [SEP]")
    assert r["tokens"] == toks and r["index"] == 3 and r["n_tokens"] == 9
    target = torch.tensor(tok.convert_tokens_to_ids(toks))
    for v, word in enumerate([None, "hans", "hendes"]):
        tv = list(toks)
        if word:
            tv[3] = word
        with torch.inference_mode():
            logits = model(torch.tensor([tok.convert_tokens_to_ids(tv)])).logits[0]
        ce = float(torch.nn.CrossEntropyLoss()(logits, target))
        assert r["ce"][v] == pytest.approx(ce, rel=1e-6)


def test_cross_entropy_without_reflexive_is_an_error(mlm_dir):
    r = ask(
        backend(mlm_dir),
        [Request("cross_entropy", {"text": "hun tog hans bil.", "find": ["sin"], "replacements": ["hans"]})],
    )[0]
    assert not r.ok and "no token among" in r.error


def test_tokenize_reports_continuation_prefix(mlm_dir):
    r = ask(backend(mlm_dir), [Request("tokenize", {"text": " hendes"})])[0].response
    assert r == {"tokens": ["hendes"], "continuation_prefix": "##"}


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
    ask(b, [Request("pll", {"text": "hun tog hans bil."})])
    assert b.stats()["num_threads"] == 1 and torch.get_num_threads() == 1  # env replaces the default
    b = backend(mlm_dir, threads=2)
    ask(b, [Request("pll", {"text": "hun tog hans bil."})])
    assert b.stats()["num_threads"] == 2  # an explicit --threads wins
    torch.set_num_threads(before)


def test_oom_halves_the_batch(mlm_dir, monkeypatch):
    from genderscope.backends import hf_mlm

    b = backend(mlm_dir, batch_tokens=100000)
    b.load()
    real = hf_mlm.HFMaskedLMBackend._logits_at

    def flaky(self, rows, positions):
        if len(rows) > 2:
            raise torch.OutOfMemoryError("CUDA out of memory (simulated)")
        return real(self, rows, positions)

    monkeypatch.setattr(hf_mlm.HFMaskedLMBackend, "_logits_at", flaky)
    got = ask(b, [Request("pll", {"text": s}) for s in SENTS[:3]])
    assert b.counters["oom_halvings"] > 0
    ref = ask(backend(mlm_dir), [Request("pll", {"text": s}) for s in SENTS[:3]])
    assert [g.response["loglik"] for g in got] == pytest.approx([r.response["loglik"] for r in ref], rel=1e-5)


def test_missing_model_is_a_clear_error(tmp_path):
    from genderscope.core.errors import BackendError

    with pytest.raises(BackendError, match="neither a local directory"):
        backend(tmp_path / "nope")


def test_checkpoint_without_mlm_head_is_refused(mlm_dir, tmp_path):
    """§4.1 / pitfall 10: a checkpoint whose MLM head would be newly initialised is refused."""
    from transformers import AutoTokenizer, BertModel

    from genderscope.core.errors import BackendError

    headless = tmp_path / "headless"
    BertModel.from_pretrained(mlm_dir).save_pretrained(headless)
    AutoTokenizer.from_pretrained(mlm_dir).save_pretrained(headless)
    b = backend(headless)
    with pytest.raises(BackendError, match="lacks weights of the masked-LM head"):
        ask(b, [Request("pll", {"text": "hun tog hans bil."})])
    ask(backend(mlm_dir), [Request("pll", {"text": "hun tog hans bil."})])  # the full checkpoint loads


def test_device_map_auto_is_accepted_and_recorded_on_cpu(mlm_dir, tmp_path):
    """`--device-map auto` goes through the CLI to accelerate (everything lands on the CPU here)."""
    import json

    from typer.testing import CliRunner

    from genderscope.cli import app

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
    with_map = ask(backend(mlm_dir, device_map="auto"), [Request("pll", {"text": SENTS[0]})])[0]
    plain = ask(backend(mlm_dir), [Request("pll", {"text": SENTS[0]})])[0]
    assert with_map.response["loglik"] == pytest.approx(plain.response["loglik"], rel=1e-6)
    with pytest.raises(ValueError, match="only 'auto'"):
        backend(mlm_dir, device_map="balanced")


def test_compat_requests_refuse_reduced_precision(mlm_dir):
    """Spec §7: GenDa Lens parity is float32 only; reduced precision is for the default mode."""
    from genderscope.core.errors import BackendError

    ce = {"text": SENTS[0], "find": ["sin"], "replacements": ["hans", "hendes"]}
    b = backend(mlm_dir, dtype="bfloat16")
    with pytest.raises(BackendError, match="--dtype float32"):
        ask(b, [Request("cross_entropy", dict(ce, float32=True))])
    with pytest.raises(BackendError, match="--dtype float32"):
        ask(b, [Request("fill_mask", {"left": "hun ", "right": " bil", "top_k": 1, "float32": True})])
    assert ask(b, [Request("cross_entropy", ce)])[0].ok  # default-mode style requests run in bfloat16
    assert ask(backend(mlm_dir), [Request("cross_entropy", dict(ce, float32=True))])[0].ok


def test_overrides_that_are_not_special_tokens_are_flagged(mlm_dir):
    b = backend(mlm_dir)
    r = ask(
        b,
        [
            Request(
                "cross_entropy", {"text": SENTS[0], "start": "<s>", "find": ["sin"], "replacements": ["hans"]}
            )
        ],
    )
    assert r[0].response["start_end_not_special"] == ["<s>"]
    r = ask(b, [Request("cross_entropy", {"text": SENTS[0], "find": ["sin"], "replacements": ["hans"]})])
    assert "start_end_not_special" not in r[0].response
    r = ask(
        b, [Request("fill_mask", {"left": "hun ", "right": " bil", "top_k": 1, "mask_override": "[MASK]"})]
    )
    assert "mask_not_tokenizer_mask" not in r[0].response
    r = ask(
        b, [Request("fill_mask", {"left": "hun", "right": " bil", "top_k": 1, "mask_override": " [MASK]"})]
    )
    assert r[0].ok and r[0].response["mask_not_tokenizer_mask"] is True


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
    assert DaWinoBiasTask.robust_group({"token": "Ġhun", "text": text}, {})[:2] == ("female", "hun")


def test_full_logits_budget_caps_only_large_batches(mlm_dir):
    from genderscope.backends import hf_common as C

    big = backend(mlm_dir, batch_tokens=10**7)
    big.load()
    vocab = big.model.config.vocab_size
    assert big.full_logits_budget() == max(64, C.CPU_LOGITS_FLOATS // vocab) < 10**7
    small = backend(mlm_dir, batch_tokens=8)
    small.load()
    assert small.full_logits_budget() == 8  # never above --batch-tokens
