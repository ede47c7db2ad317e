"""Debiasing (issue 29): CDA swaps, the token-level Bordia regulariser against a direct computation,
fine-tuning that resumes from its checkpoint, a debiased folder that reloads and scores identically, and
`genderscope debias` end to end on a tiny model (bad model kinds refused in one line)."""

from __future__ import annotations

import json

import pytest

from genderscope.debias.cda import augment, swap_gender, swap_table

PAIRS = [("he", "she"), ("his", "her"), ("him", "her"), ("king", "queen"), ("man", "woman")]


def test_cda_swaps_both_directions_keeping_case_and_suffixes():
    t = swap_table(PAIRS)
    assert swap_gender("He said his king's man met her.", t) == "She said her queen's woman met his."
    assert swap_gender("SHE and She and she", t) == "HE and He and he"
    assert swap_gender("the kingdom and the chess", t) == "the kingdom and the chess"
    assert swap_gender("he's", t) == "she's"


def test_cda_is_two_sided_and_skips_unchanged_texts():
    t = swap_table(PAIRS)
    assert augment(["he ran", "it rained"], t) == ["he ran", "she ran", "it rained"]


torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

WORDS = "he she his her him king queen man woman the a ran said met doctor nurse table chair quickly".split()


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from genderscope.demo_models import build_tiny_causal

    return build_tiny_causal(tmp_path_factory.mktemp("deb"), WORDS)


def test_token_regularizer_equals_a_direct_computation(tiny):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from genderscope.debias.embedding_reg import defining_ids, neutral_ids, token_regularizer

    tok = AutoTokenizer.from_pretrained(tiny)
    W = AutoModelForCausalLM.from_pretrained(tiny).get_input_embeddings().weight.detach().clone()
    W.requires_grad_(True)
    reg = token_regularizer(tok, PAIRS, lam=2.0, kappa=1)
    value = reg(W)
    value.backward()
    got_grad = W.grad.clone()
    # direct: normalise rows, C = (Ê[u] − Ê[v]) / 2, B = first right singular vector, λ Σ_n (Ê[n]·B)²
    W2 = W.detach().clone().requires_grad_(True)
    E = W2 / W2.norm(dim=1, keepdim=True)
    ids = defining_ids(tok, PAIRS)
    C = torch.stack([(E[u] - E[v]) / 2 for u, v in ids])
    B = torch.linalg.svd(C, full_matrices=False)[2][:1].T
    N = neutral_ids(tok, {w for p in PAIRS for w in p})
    assert set(tok.convert_ids_to_tokens(N)) >= {"doctor", "table"} and "he" not in tok.convert_ids_to_tokens(
        N
    )
    direct = 2.0 * sum(float((E[n] @ B).pow(2).sum().detach()) for n in N)
    assert float(value) == pytest.approx(direct, rel=1e-5)
    (2.0 * (E[N] @ B).pow(2).sum()).backward()
    assert torch.allclose(got_grad, W2.grad, atol=1e-6)


def _texts():
    return ["he said the doctor ran quickly", "she met a nurse", "the king met the queen"] * 20


def test_finetune_resumes_from_its_checkpoint(tiny, tmp_path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from genderscope.debias.finetune import FinetuneConfig, finetune

    tok = AutoTokenizer.from_pretrained(tiny)
    cfg = FinetuneConfig(adapter="embeddings", steps=4, batch_size=2, seq_len=8, lr=1e-2, checkpoint_every=2)
    whole, _ = finetune(AutoModelForCausalLM.from_pretrained(tiny), tok, _texts(), cfg, tmp_path / "a",
                        progress=lambda s: None)  # fmt: skip

    class Killed(Exception):
        pass

    def die(line):
        raise Killed(line)

    (tmp_path / "b").mkdir()
    (tmp_path / "a").mkdir(exist_ok=True)
    with pytest.raises(Killed):
        finetune(AutoModelForCausalLM.from_pretrained(tiny), tok, _texts(), cfg, tmp_path / "b", progress=die)
    resumed, stats = finetune(AutoModelForCausalLM.from_pretrained(tiny), tok, _texts(), cfg, tmp_path / "b",
                              progress=lambda s: None)  # fmt: skip
    assert stats["resumed_from_step"] == 2
    a, b = whole.get_input_embeddings().weight, resumed.get_input_embeddings().weight
    assert torch.allclose(a, b, atol=1e-6)


def test_debias_cli_writes_a_model_that_reloads_and_scores_identically(tiny, tmp_path):
    from typer.testing import CliRunner
    from transformers import AutoModelForCausalLM

    from genderscope.cli.app import app

    corpus = tmp_path / "train.txt"
    corpus.write_text("\n".join(_texts()))
    out = tmp_path / "out"
    res = CliRunner().invoke(app, [
        "debias", "bordia", "--model", f"hf-causal:{tiny}", "--out", str(out), "--corpus", str(corpus),
        "--eval-corpus", str(corpus), "--eval-tokens", "64", "--steps", "3", "--batch-size", "2",
        "--seq-len", "8", "--lambda", "5",
    ])  # fmt: skip
    assert res.exit_code == 0, res.output
    rec = json.loads((out / "debias.json").read_text())
    assert (
        rec["method"] == "bordia" and rec["training"]["steps"] == 3 and rec["perplexity"]["after"]["ppl"] > 0
    )
    log = json.loads((out / "train_log.json").read_text())
    assert log[-1]["reg"] < log[0]["reg"]
    ids = torch.tensor([[3, 4, 5, 6]])
    m1 = AutoModelForCausalLM.from_pretrained(out / "model").eval()
    m2 = AutoModelForCausalLM.from_pretrained(out / "model").eval()
    with torch.inference_mode():
        assert torch.equal(m1(ids).logits, m2(ids).logits)
    base = AutoModelForCausalLM.from_pretrained(tiny).eval()
    assert not torch.equal(base.get_input_embeddings().weight, m1.get_input_embeddings().weight)
    got = CliRunner().invoke(app, ["run", "crows-pairs", "--model", rec["model"], "--limit", "3",
                                   "--out", str(tmp_path / "audit")])  # fmt: skip
    assert got.exit_code == 0, got.output


def test_a_model_kind_that_cannot_be_fine_tuned_is_one_line(tmp_path):
    import subprocess
    import sys

    cmd = [sys.executable, "-c", "from genderscope.cli.app import main; main()", "debias", "cda", "--model",
           "openai:gpt-4o", "--out", str(tmp_path / "x")]  # fmt: skip
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert res.returncode == 2 and "fits hf-causal:PATH or hf-mlm:PATH" in res.stderr, res.stderr
    assert "Traceback" not in res.stderr and len(res.stderr.strip().splitlines()) == 1


def test_cda_on_a_masked_lm_through_the_cli(tmp_path):
    from typer.testing import CliRunner

    from genderscope.cli.app import app
    from genderscope.demo_models import build_tiny_mlm

    mlm = build_tiny_mlm(tmp_path / "mlm", WORDS)
    corpus = tmp_path / "train.txt"
    corpus.write_text("\n".join(_texts()))
    out = tmp_path / "out"
    res = CliRunner().invoke(app, [
        "debias", "cda", "--model", f"hf-mlm:{mlm}", "--out", str(out), "--corpus", str(corpus),
        "--eval-corpus", "", "--steps", "2", "--batch-size", "2", "--seq-len", "8",
    ])  # fmt: skip
    assert res.exit_code == 0, res.output
    rec = json.loads((out / "debias.json").read_text())
    assert rec["model"].startswith("hf-mlm:") and rec["hyperparameters"]["masked"] is True
    assert rec["data"]["texts"] == 120  # 60 lines, each with its swapped copy


def _self_debias(path, **kw):
    from genderscope.backends.self_debias import SelfDebiasBackend, SelfDebiasOptions

    return SelfDebiasBackend(f"hf-causal:{path}", SelfDebiasOptions(**kw))


def _ask(b, reqs):
    from genderscope.core.requests import Job

    out = {}
    b.answer([Job(i, r, 1, f"x{i}") for i, r in enumerate(reqs)], lambda j, o: out.__setitem__(j.index, o))
    return [out[i] for i in range(len(reqs))]


def test_self_debias_equals_a_direct_computation(tiny):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from genderscope.core.primitives import token_logprobs_request

    text, prefix = "the doctor said he ran", "she met a nurse "
    got = _ask(_self_debias(tiny, prefix=prefix, decay_constant=50.0, epsilon=0.01),
               [token_logprobs_request(text)])[0].response["logprobs"]  # fmt: skip
    tok = AutoTokenizer.from_pretrained(tiny)
    model = AutoModelForCausalLM.from_pretrained(tiny).eval()
    ids = tok(text, add_special_tokens=False)["input_ids"]
    pre = tok(prefix, add_special_tokens=False)["input_ids"]
    seq, biased = [tok.bos_token_id] + ids, [tok.bos_token_id] + pre + ids
    with torch.inference_mode():
        p = torch.softmax(model(torch.tensor([seq])).logits[0], -1)
        q = torch.softmax(model(torch.tensor([biased])).logits[0], -1)
    want = []
    for t in range(1, len(seq)):
        pr, pb = p[t - 1], q[len(pre) + t - 1]
        alpha = torch.clamp(torch.exp(-50.0 * torch.clamp(pb - pr, min=0)), min=0.01)
        pt = pr * alpha / (pr * alpha).sum()
        want.append(float(torch.log(pt[seq[t]])))
    assert got == pytest.approx(want, abs=1e-5)


def test_self_debias_without_decay_is_the_plain_model(tiny):
    from genderscope.backends.hf.causal import CausalOptions, HFCausalLMBackend
    from genderscope.core.primitives import loglikelihood_request

    req = loglikelihood_request("the doctor said", [" he ran", " she ran"])
    plain = _ask(HFCausalLMBackend(str(tiny), CausalOptions()), [req])[0].response["logprobs"]
    same = _ask(_self_debias(tiny, decay_constant=0.0), [req])[0].response["logprobs"]
    assert same == pytest.approx(plain, abs=1e-4)


def test_self_debias_wraps_only_causal_lms():
    from genderscope.common.errors import UsageError

    with pytest.raises(UsageError, match="self-debias:hf-causal:PATH"):
        _self_debias_target("hf-mlm:/x")


def _self_debias_target(target):
    from genderscope.backends.self_debias import SelfDebiasBackend, SelfDebiasOptions

    return SelfDebiasBackend(target, SelfDebiasOptions())


def _probe_accuracy(x, z):
    """Training accuracy of a ridge linear probe predicting z from centred x (ridge: plain least squares on
    erased states, which lose a dimension, only fits float noise through near-zero eigenvalues)."""
    X = (x - x.mean(0)).double()
    y = (z.double() - z.double().mean())[:, None]
    ridge = 1e-3 * float((X * X).sum()) / X.shape[1]
    w = torch.linalg.solve(X.T @ X + ridge * torch.eye(X.shape[1], dtype=X.dtype), X.T @ y)
    return float(((X @ w)[:, 0] > 0).long().eq(z).double().mean())


def test_leace_leaves_no_linear_gender_information_and_reloads(tiny, tmp_path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from genderscope.backends.hf.causal import CausalOptions, HFCausalLMBackend
    from genderscope.core.primitives import token_logprobs_request
    from genderscope.debias import leace

    tok = AutoTokenizer.from_pretrained(tiny)
    model = AutoModelForCausalLM.from_pretrained(tiny).eval()
    lines = leace.labelled_lines(["he said the doctor ran", "the king met a nurse", "his table"] * 4, PAIRS)
    x, z = leace.hidden_states(model, tok, lines, 0)
    assert _probe_accuracy(x, z) > 0.9
    state = leace.fit(model, tok, lines, 0)
    erased = leace.erase(x, state)
    # LEACE's guarantee: no linear information left, i.e. zero covariance between the erased states and
    # the label (a probe's training accuracy on a dozen lines is too noisy a measure of that)
    xc, zc = erased.double() - erased.double().mean(0), z.double() - z.double().mean()
    cross = (xc * zc[:, None]).mean(0).abs().max().item()
    scale = (x.double() - x.double().mean(0)).abs().mean().item()
    assert cross < 1e-6 * max(scale, 1.0)
    assert _probe_accuracy(erased, z) < 0.9
    folder = tmp_path / "erased"
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    torch.save(state, folder / leace.FILE)
    req = [token_logprobs_request("the doctor said he ran")]
    plain = _ask(HFCausalLMBackend(str(tiny), CausalOptions()), req)[0].response["logprobs"]
    b = HFCausalLMBackend(str(folder), CausalOptions())
    got = _ask(b, req)[0].response["logprobs"]
    assert b.settings["leace"]["layer"] == 0 and "|leace=" in b.fingerprint
    assert got != pytest.approx(plain, abs=1e-6)


def test_leace_batched_states_equal_one_line_at_a_time(tiny):
    """Batched, padded states stopped at block ``layer`` = each line alone through the whole model, in
    line order: ``output_hidden_states`` for an inner block (what the eraser used to be fitted on), the
    block's own output for the last one (its hidden state has the final norm applied, which the eraser,
    hooked on the block, never sees)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from genderscope.debias import leace

    tok = AutoTokenizer.from_pretrained(tiny)
    model = AutoModelForCausalLM.from_pretrained(tiny).eval()
    texts = ["he said the doctor ran quickly and the nurse met him", "his table", "the king met a nurse"]
    lines = leace.labelled_lines([*texts, "he"] * 3, PAIRS)
    seen: list = []
    last = leace.blocks(model)[-1]
    last.register_forward_hook(lambda m, i, o: seen.append(o[0] if isinstance(o, tuple) else o))
    for layer in (0, 1):
        ref_x, ref_z = [], []
        with torch.inference_mode():
            for text, label in lines:
                ids = tok(text, add_special_tokens=False)["input_ids"]
                seen.clear()
                out = model(input_ids=torch.tensor([ids]), output_hidden_states=True)
                ref_x.append((out.hidden_states[layer + 1] if layer == 0 else seen[0])[0].float())
                ref_z.append(torch.full((len(ids),), label))
        x, z = leace.hidden_states(model, tok, lines, layer, batch_size=5)
        assert torch.equal(z, torch.cat(ref_z))
        assert torch.allclose(x, torch.cat(ref_x), atol=1e-5, rtol=1e-5)


def test_leace_runs_only_the_blocks_up_to_its_layer(tiny):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from genderscope.debias import leace

    tok = AutoTokenizer.from_pretrained(tiny)
    model = AutoModelForCausalLM.from_pretrained(tiny).eval()
    ran = []
    blocks = leace.blocks(model)
    hooks = [b.register_forward_hook(lambda m, i, o, k=k: ran.append(k)) for k, b in enumerate(blocks)]
    leace.hidden_states(model, tok, [("he ran", 0), ("she ran", 1)], 0)
    for h in hooks:
        h.remove()
    assert ran == [0] and not model._forward_hooks


def test_debias_leace_cli_bounds_its_lines_in_pairs(tiny, tmp_path):
    from typer.testing import CliRunner

    from genderscope.cli.app import app

    corpus = tmp_path / "train.txt"
    corpus.write_text("\n".join(_texts()))  # 40 gendered lines: 80 labelled with their swaps
    pairs = tmp_path / "pairs.txt"
    pairs.write_text("\n".join(f"{m} {f}" for m, f in PAIRS))
    out = tmp_path / "out"
    res = CliRunner().invoke(app, [
        "debias", "leace", "--model", f"hf-causal:{tiny}", "--out", str(out), "--corpus", str(corpus),
        "--eval-corpus", "", "--pairs", str(pairs), "--leace-lines", "11", "--threads", "1",
    ])  # fmt: skip
    assert res.exit_code == 0, res.output
    rec = json.loads((out / "debias.json").read_text())
    assert rec["training"]["lines"] == 10 and rec["training"]["labelled_lines_found"] == 80
    assert rec["hyperparameters"]["max_lines"] == 11 and rec["num_threads"] == 1
    assert torch.load(out / "model" / "leace.pt", weights_only=False)["n_lines"] == 10
    bad = CliRunner().invoke(app, ["debias", "leace", "--model", f"hf-causal:{tiny}", "--out", str(out),
                                   "--leace-lines", "-1"])  # fmt: skip
    assert bad.exit_code != 0 and "--leace-lines" in str(bad.exception)


def test_perplexity_of_plain_scores_equals_perplexity(tiny):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from genderscope.debias.perplexity import perplexity, perplexity_of_scores

    tok, model = AutoTokenizer.from_pretrained(tiny), AutoModelForCausalLM.from_pretrained(tiny).eval()

    def plain(rows):
        with torch.inference_mode():
            lp = torch.log_softmax(model(torch.tensor(rows)).logits[:, :-1].float(), -1)
        return lp.gather(2, torch.tensor(rows)[:, 1:, None])[..., 0].tolist()

    want = perplexity(model, tok, _texts(), False, window=8, max_tokens=64)
    got = perplexity_of_scores(plain, tok, _texts(), window=8, max_tokens=64)
    assert got["tokens"] == want["tokens"] == 56 and got["ppl"] == pytest.approx(want["ppl"], rel=1e-5)


def test_debias_self_debias_records_the_wrappers_perplexity_and_audit(tiny, tmp_path):
    from typer.testing import CliRunner

    from genderscope.cli.app import app

    corpus = tmp_path / "held_out.txt"
    corpus.write_text("\n".join(_texts()))
    out = tmp_path / "sd"
    res = CliRunner().invoke(app, [
        "debias", "self-debias", "--model", f"hf-causal:{tiny}", "--out", str(out), "--eval-corpus",
        str(corpus), "--eval-tokens", "256", "--audit", "crows-pairs", "--audit-limit", "6", "--threads", "1",
    ])  # fmt: skip
    assert res.exit_code == 0, res.output
    rec = json.loads((out / "debias.json").read_text())
    assert rec["method"] == "self-debias" and rec["model"] == f"self-debias:hf-causal:{tiny}"
    before, after = rec["perplexity"]["before"], rec["perplexity"]["after"]
    assert before["tokens"] == after["tokens"] > 0 and before["ppl"] != after["ppl"]
    assert rec["hyperparameters"]["decay_constant"] == 50.0
    assert {c["task"] for c in rec["audit"]["changes"]} == {"crows-pairs"}
    assert (out / "audit" / "report.html").is_file()


def test_self_debias_refuses_a_masked_lm_in_one_line(tmp_path):
    import subprocess
    import sys

    cmd = [sys.executable, "-c", "from genderscope.cli.app import main; main()", "debias", "self-debias",
           "--model", "hf-mlm:x", "--out", str(tmp_path / "x")]  # fmt: skip
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert res.returncode == 2 and "wraps a causal LM's decoding and fits hf-causal:PATH" in res.stderr
    assert "Traceback" not in res.stderr and len(res.stderr.strip().splitlines()) == 1
