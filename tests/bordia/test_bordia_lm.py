"""Bordia & Bowman LM: regulariser (V7, κ, gradients), AWD-LSTM training, ASGD rule, generation."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="needs the [hf] extra (torch): pip install -e '.[hf]'")

from genderscope.bordia.lm.regularizer import BiasRegularizer, choose_kappa  # noqa: E402
from genderscope.bordia.lm.config import preset_config  # noqa: E402
from genderscope.bordia.lm.train import should_switch_to_asgd  # noqa: E402
from genderscope.bordia.pairs import parse_gender_pairs  # noqa: E402

V7_ROWS = {
    "he": (1.6, 1.2, 0, 0),
    "she": (-0.8, 0.6, 0, 0),
    "man": (0, 0.7, 0, math.sqrt(0.51)),
    "woman": (0, -0.7, 0, math.sqrt(0.51)),
    "king": (0, 0, 0.6, 0.8),
    "queen": (0, 0, -0.6, 0.8),
    "doctor": (3, 0, 0, 4),
    "nurse": (0, 0.6, 0.8, 0),
    "the": (0, 0, 0, 1),
}
V7_PAIRS = parse_gender_pairs("he she\nman woman\nking queen\n")


def v7_weight():
    return torch.tensor(list(V7_ROWS.values()), dtype=torch.float64, requires_grad=True)


@pytest.mark.parametrize(
    "kappa,ratio,expect_k,expect_loss",
    [("variance", 0.5, 2, 0.72), ("reference", 0.5, 1, 0.36), ("variance", 0.9, 3, 1.36)],
)
def test_v7_regulariser(kappa, ratio, expect_k, expect_loss):
    reg = BiasRegularizer(list(V7_ROWS), V7_PAIRS, 1.0, kappa, ratio)
    w = v7_weight()
    loss = reg(w)
    assert reg.last_kappa == expect_k
    assert loss.item() == pytest.approx(expect_loss, abs=1e-12)


def test_v7_singular_values_and_kappa_rule():
    reg = BiasRegularizer(list(V7_ROWS), V7_PAIRS, 1.0)
    _, s, _ = torch.linalg.svd(
        (reg.subspace(v7_weight())[0][reg.pair_u] - reg.subspace(v7_weight())[0][reg.pair_v]) / 2
    )
    assert s.tolist() == pytest.approx([0.8, 0.7, 0.6], abs=1e-12)
    shares = (s**2 / (s**2).sum()).tolist()
    assert shares == pytest.approx([0.4295, 0.3289, 0.2416], abs=1e-4)
    assert choose_kappa([0.8, 0.7, 0.6], "variance", 0.5) == 2
    assert choose_kappa([3.0, 1.0], "variance", 0.5) == 1
    assert choose_kappa([1.0, 1.0], "variance", 0.5) == 1  # exactly τ (with the 1e-12 tolerance)
    assert choose_kappa([0.8, 0.7, 0.6], "reference") == 1 and choose_kappa([0.8, 0.7, 0.6], 5) == 3


@pytest.mark.parametrize("detach", [False, True])
def test_v7_gradients(detach):
    reg = BiasRegularizer(list(V7_ROWS), V7_PAIRS, 1.0, detach_subspace=detach)
    w = v7_weight()
    reg(w).backward()
    pair_rows = w.grad[:6]
    assert (pair_rows.abs().sum() == 0) == detach
    assert w.grad[6:].abs().sum() > 0


def test_gradient_matches_direct_computation():
    """With a detached subspace and no row normalisation, ∂L/∂E[N] = 2λ E[N] B Bᵀ."""
    torch.manual_seed(0)
    vocab = ["he", "she", "him", "her", "a", "b", "c", "d"]
    w = torch.randn(8, 5, dtype=torch.float64, requires_grad=True)
    reg = BiasRegularizer(
        vocab, parse_gender_pairs("he she\nhim her\n"), 0.7, 1, normalize=False, detach_subspace=True
    )
    reg(w).backward()
    C = ((w[[0, 2]] - w[[1, 3]]) / 2).detach().numpy()
    B = np.linalg.svd(C)[2][:1].T
    En = w.detach().numpy()[4:]
    assert reg(w).item() == pytest.approx(0.7 * ((En @ B) ** 2).sum(), rel=1e-12)
    assert np.allclose(w.grad.numpy()[4:], 2 * 0.7 * En @ B @ B.T, atol=1e-12)


def test_asgd_switch_rule():
    assert not should_switch_to_asgd([5, 4, 3, 2, 1], 0.5, 5)  # len(H) not > nonmono
    assert not should_switch_to_asgd([5, 4, 3, 2, 1, 0.9], 4.5, 5)  # better than min(H[:-5]) = 5
    assert should_switch_to_asgd([5, 4, 3, 2, 1, 0.9], 5.5, 5)
    assert should_switch_to_asgd([1, 2, 3], 2.5, 2) and not should_switch_to_asgd([3, 2, 1], 2.5, 2)


# ---------------------------------------------------------------------------------------------- training


@pytest.fixture(scope="module")
def tiny_files(tmp_path_factory):
    import os

    from genderscope.data.registry import DataRegistry

    os.environ.setdefault("GENDERSCOPE_DATA_MIRROR", "")
    reg = DataRegistry()
    valid = reg.path("corpora/ptb/ptb.valid.txt").read_text().split("\n")
    test = reg.path("corpora/ptb/ptb.test.txt").read_text().split("\n")
    d = tmp_path_factory.mktemp("tiny")
    for name, lines in (("train.txt", valid[:300]), ("valid.txt", test[:100]), ("test.txt", test[100:200])):
        (d / name).write_text("\n".join(lines) + "\n")
    return d


@pytest.fixture(scope="module")
def tiny_runs(tiny_files):
    from genderscope.bordia.lm.train import train_lm

    runs = {}
    for lam in (0.0, 1.0):
        cfg = preset_config(
            "tiny",
            train=str(tiny_files / "train.txt"),
            valid=str(tiny_files / "valid.txt"),
            test=str(tiny_files / "test.txt"),
            lam=lam,
        )
        run_dir = tiny_files / f"run{lam:g}"
        runs[lam] = (cfg, run_dir, train_lm(cfg, run_dir))
    return runs


def test_tiny_training(tiny_runs):
    cfg, run_dir, metrics = tiny_runs[0.0]
    history = [json.loads(line) for line in (run_dir / "history.jsonl").read_text().splitlines()]
    assert len(history) == 2 and all(math.isfinite(h["train_loss"]) for h in history)
    assert metrics["valid_ppl"] < metrics["vocab_size"] / 2
    first = cfg.train and open(cfg.train).read().split()[0]
    assert (run_dir / "vocab.txt").read_text().split("\n")[0] == first
    for f in ("config.json", "best.pt", "last.pt", "metrics.json"):
        assert (run_dir / f).exists()


def test_loss_goes_down_and_debiasing_shrinks_projection(tiny_runs):
    from genderscope.bordia.lm.checkpoint import load_checkpoint
    from genderscope.bordia.pairs import load_gender_pairs

    projections = {}
    for lam, (_cfg, run_dir, metrics) in tiny_runs.items():
        ck = load_checkpoint(run_dir)
        reg = BiasRegularizer(ck.vocab, load_gender_pairs("penn"), 1.0)
        projections[lam] = float(reg.projection(ck.model.encoder.weight.detach()))
        history = [json.loads(line) for line in (run_dir / "history.jsonl").read_text().splitlines()]
        assert history[-1]["train_loss"] < math.log(metrics["vocab_size"])  # below the uniform model
    assert projections[1.0] < 0.5 * projections[0.0]
    assert tiny_runs[1.0][2]["kappa_counts"]


def test_checkpoint_round_trip(tiny_runs):
    from genderscope.bordia.lm.evaluation import evaluate_run

    cfg, run_dir, metrics = tiny_runs[0.0]
    again = evaluate_run(run_dir)
    assert again["valid_ppl"] == pytest.approx(metrics["valid_ppl"], rel=1e-9)
    assert again["test_ppl"] == pytest.approx(metrics["test_ppl"], rel=1e-9)


def test_generation_reproducible_and_batch_independent(tiny_runs, tmp_path):
    from genderscope.bordia.lm.generate import generate_samples, read_samples, sample_batch
    from genderscope.bordia.lm.checkpoint import load_checkpoint

    run_dir = tiny_runs[0.0][1]
    generate_samples(run_dir, tmp_path / "a", n_samples=4, words=20, batch=4)
    generate_samples(run_dir, tmp_path / "b", n_samples=4, words=20, batch=1)
    a, b = read_samples(tmp_path / "a"), read_samples(tmp_path / "b")
    assert a == b and len(a) == 4 and all(len(s.split()) == 20 for s in a)
    assert len(set(a)) == 4  # different seeds, different samples
    records = [json.loads(line) for line in (tmp_path / "a" / "samples.jsonl").read_text().splitlines()]
    assert [r["seed"] for r in records] == [500, 501, 502, 503]
    ck = load_checkpoint(run_dir)
    one = sample_batch(ck.model, [501], 20)[0]
    assert " ".join(ck.vocab[i] for i in one) == a[1].strip()


def test_resume_equals_uninterrupted(tiny_files, tmp_path):
    from genderscope.bordia.lm.train import Trainer, train_lm

    kw = dict(
        train=str(tiny_files / "train.txt"), valid=str(tiny_files / "valid.txt"), emsize=8, nhid=8, nlayers=2
    )
    full = train_lm(preset_config("tiny", **kw, epochs=2), tmp_path / "full")
    Trainer(preset_config("tiny", **kw, epochs=1), tmp_path / "part").run()
    resumed = train_lm(preset_config("tiny", **kw, epochs=2), tmp_path / "part")  # epochs is a budget
    assert resumed["valid_loss"] == full["valid_loss"]
    a = torch.load(tmp_path / "full" / "last.pt", weights_only=False)["model"]
    b = torch.load(tmp_path / "part" / "last.pt", weights_only=False)["model"]
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_lambda_runs_with_both_kappa_rules_are_finite(tiny_files, tmp_path):
    from genderscope.bordia.lm.train import train_lm

    for kappa in ("variance", "reference"):
        cfg = preset_config(
            "tiny",
            train=str(tiny_files / "train.txt"),
            valid=str(tiny_files / "valid.txt"),
            lam=0.5,
            kappa=kappa,
            epochs=1,
            emsize=8,
            nhid=8,
            nlayers=2,
        )
        m = train_lm(cfg, tmp_path / kappa)
        assert math.isfinite(m["valid_loss"]) and math.isfinite(m["final_projection"])
