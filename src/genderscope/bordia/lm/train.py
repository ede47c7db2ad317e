"""AWD-LSTM training with the debiasing regulariser (spec §7.3–7.5).

Variable BPTT (base = bptt w.p. 0.95 else bptt/2; seq_len = max(5, int(N(base, 5))), lr scaled by
seq_len/bptt), loss = CE + α·mean(o²) + β·mean((h_{t+1} − h_t)²) + λ‖Ê[N]B‖²_F, gradient clipping
0.25, SGD → ASGD when the validation loss stops improving (non-monotone trigger, nonmono = 5).

A run directory holds ``config.json``, ``vocab.txt``, ``best.pt`` (best validation weights, averaged
in the ASGD phase; with the vocabulary), ``last.pt`` (everything to resume), ``history.jsonl`` and
``metrics.json``. Reported losses and perplexities are cross-entropy only; perplexity = exp(mean CE).
"""

from __future__ import annotations

import json
import math
import time
import warnings
from dataclasses import asdict
from pathlib import Path
from typing import Any, Callable

import numpy as np
import torch
import torch.nn.functional as F

from genderscope.bordia.cooccurrence import atomic_write_json, atomic_write_text
from genderscope.bordia.lm.checkpoint import (
    _atomic_save,
    _averaged_state,
    build_model,
    load_checkpoint,
)
from genderscope.bordia.lm.config import (
    TrainConfig,
    set_threads,
)
from genderscope.bordia.lm.data import LMCorpus, batchify, load_corpus
from genderscope.bordia.lm.evaluation import evaluate, perplexity
from genderscope.bordia.lm.model import AWDLSTM, detach_hidden
from genderscope.bordia.lm.regularizer import BiasRegularizer, check_finite
from genderscope.common.errors import UsageError


def should_switch_to_asgd(history: list[float], val_loss: float, nonmono: int = 5) -> bool:
    """The non-monotone trigger: len(H) > nonmono and v > min(H[:−nonmono]) (H = SGD-phase losses)."""
    return len(history) > nonmono and val_loss > min(history[:-nonmono])


def debias_matrices(model: AWDLSTM, debias: str) -> list[torch.Tensor]:
    """The matrices that receive the regulariser (one shared matrix when weights are tied)."""
    if debias not in ("encoder", "decoder", "both"):
        raise UsageError(f"debias must be encoder, decoder or both, got {debias!r}")
    if model.tie_weights:
        return [model.encoder.weight]
    return {
        "encoder": [model.encoder.weight],
        "decoder": [model.decoder.weight],
        "both": [model.encoder.weight, model.decoder.weight],
    }[debias]


def _make_optimizer(cfg: TrainConfig, model: AWDLSTM, phase: str) -> torch.optim.Optimizer:
    params = list(model.parameters())
    if phase == "asgd":
        return torch.optim.ASGD(params, lr=cfg.lr, t0=0, lambd=0.0, weight_decay=cfg.wdecay)
    return torch.optim.SGD(params, lr=cfg.lr, weight_decay=cfg.wdecay)


class Trainer:
    """One training run in ``run_dir`` (resumable from ``last.pt``)."""

    def __init__(
        self,
        cfg: TrainConfig,
        run_dir: Path,
        log: Callable[[str], None] | None = None,
        corpus: LMCorpus | None = None,
    ):
        set_threads(cfg.threads)
        self.cfg = cfg
        self.run_dir = Path(run_dir)
        self.log = log or (lambda s: None)
        self.device = torch.device(cfg.device)
        self.corpus = corpus or load_corpus(
            Path(cfg.train), Path(cfg.valid), Path(cfg.test) if cfg.test else None
        )
        self.hash = cfg.config_hash()
        torch.manual_seed(cfg.seed)
        self.rng = np.random.default_rng(cfg.seed)
        self.model = build_model(cfg, len(self.corpus.vocab)).to(self.device)
        self.reg: BiasRegularizer | None = None
        if cfg.lam > 0:
            from genderscope.bordia.pairs import load_gender_pairs

            if cfg.debias == "both" and cfg.tie_weights:
                warnings.warn(
                    "debias='both' with tied weights applies one term to the shared matrix", stacklevel=2
                )
            gp = load_gender_pairs(cfg.pairs, cfg.fix_wife_husband)
            kappa: str | int = int(cfg.kappa) if str(cfg.kappa).isdigit() else cfg.kappa
            self.reg = BiasRegularizer(
                self.corpus.vocab, gp, cfg.lam, kappa, cfg.var_ratio, cfg.normalize, cfg.detach_subspace
            ).to(self.device)
        self.phase = "sgd"
        self.optimizer = _make_optimizer(cfg, self.model, self.phase)
        self.H: list[float] = []
        self.best_val = math.inf
        self.best_epoch = 0
        self.epoch = 0
        self.step = 0
        self.train_data = batchify(self.corpus.train, cfg.batch_size).to(self.device)
        self.valid_data = batchify(self.corpus.valid, cfg.eval_batch_size).to(self.device)
        if self.train_data.size(0) < 3:
            raise UsageError(f"training text too short for batch size {cfg.batch_size}")

    # ---- checkpoints
    def _write_static(self) -> None:
        self.run_dir.mkdir(parents=True, exist_ok=True)
        atomic_write_json(self.run_dir / "config.json", {**asdict(self.cfg), "config_hash": self.hash})
        atomic_write_text(self.run_dir / "vocab.txt", "\n".join(self.corpus.vocab) + "\n")

    def _save_last(self) -> None:
        _atomic_save(
            {
                "model": self.model.state_dict(),
                "optimizer": self.optimizer.state_dict(),
                "phase": self.phase,
                "H": self.H,
                "best_val": self.best_val,
                "best_epoch": self.best_epoch,
                "epoch": self.epoch,
                "step": self.step,
                "numpy_rng": self.rng.bit_generator.state,
                "torch_rng": torch.get_rng_state(),
                "config_hash": self.hash,
            },
            self.run_dir / "last.pt",
        )

    def _save_best(self, state: dict[str, torch.Tensor]) -> None:
        _atomic_save(
            {
                "model": state,
                "vocab": self.corpus.vocab,
                "config": asdict(self.cfg),
                "config_hash": self.hash,
                "epoch": self.epoch,
                "phase": self.phase,
            },
            self.run_dir / "best.pt",
        )

    def resume(self) -> bool:
        """Load ``last.pt`` if present (config hash must match); True when resumed."""
        path = self.run_dir / "last.pt"
        if not path.exists():
            return False
        ck = torch.load(path, map_location=self.device, weights_only=False)
        if ck["config_hash"] != self.hash:
            raise UsageError(
                f"{self.run_dir} holds a run with a different configuration "
                f"({ck['config_hash']} ≠ {self.hash}); use another --out or --force"
            )
        self.model.load_state_dict(ck["model"])
        self.phase = ck["phase"]
        self.optimizer = _make_optimizer(self.cfg, self.model, self.phase)
        self.optimizer.load_state_dict(ck["optimizer"])
        self.H, self.best_val, self.best_epoch = list(ck["H"]), ck["best_val"], ck["best_epoch"]
        self.epoch, self.step = ck["epoch"], ck["step"]
        self.rng.bit_generator.state = ck["numpy_rng"]
        torch.set_rng_state(ck["torch_rng"])
        return True

    # ---- training
    def train_epoch(self) -> dict[str, Any]:
        cfg, model = self.cfg, self.model
        model.train()
        hidden = model.init_hidden(cfg.batch_size)
        T = self.train_data.size(0)
        i = 0
        ce_sum, tokens, lb_sum, lb_steps = 0.0, 0, 0.0, 0
        kappas: list[int] = []
        params = list(model.parameters())
        matrices = debias_matrices(model, cfg.debias) if self.reg is not None else []
        t0 = time.perf_counter()
        while i < T - 2:
            base = cfg.bptt if self.rng.random() < 0.95 else cfg.bptt / 2
            seq_len = max(5, int(self.rng.normal(base, 5)))
            seq_len = min(seq_len, T - 1 - i)
            x = self.train_data[i : i + seq_len]
            y = self.train_data[i + 1 : i + 1 + seq_len]
            hidden = detach_hidden(hidden)
            lr = self.optimizer.param_groups[0]["lr"]
            self.optimizer.param_groups[0]["lr"] = lr * seq_len / cfg.bptt
            out = model(x, hidden)
            hidden = out.hidden
            ce = F.cross_entropy(out.logits.reshape(-1, model.ntoken), y.reshape(-1))
            loss = ce + cfg.alpha * out.dropped_last.pow(2).mean()
            loss = loss + cfg.beta * (out.raw_last[1:] - out.raw_last[:-1]).pow(2).mean()
            if self.reg is not None:
                for m in matrices:
                    lb = self.reg(m)
                    check_finite(lb, self.step)
                    loss = loss + lb
                    lb_sum += lb.item() / self.reg.lam
                    lb_steps += 1
                    kappas.append(self.reg.last_kappa)
            self.optimizer.zero_grad()
            loss.backward()
            total_norm = torch.nn.utils.clip_grad_norm_(params, cfg.clip)
            if not torch.isfinite(total_norm):
                raise FloatingPointError(
                    f"non-finite gradient at step {self.step}"
                    + ("; retry with --detach-subspace" if self.reg is not None else "")
                )
            self.optimizer.step()
            self.optimizer.param_groups[0]["lr"] = lr
            ce_sum += ce.item() * y.numel()
            tokens += y.numel()
            i += seq_len
            self.step += 1
        seconds = time.perf_counter() - t0
        stats: dict[str, Any] = {
            "train_loss": ce_sum / max(tokens, 1),
            "train_tokens": tokens,
            "train_seconds": seconds,
            "tokens_per_s": tokens / seconds if seconds else None,
        }
        if kappas:
            values, counts = np.unique(kappas, return_counts=True)
            stats["projection_mean"] = lb_sum / lb_steps
            stats["kappa_counts"] = {str(int(v)): int(c) for v, c in zip(values, counts)}
        return stats

    def run(self) -> dict[str, Any]:
        """Train the remaining epochs, evaluate the best checkpoint on valid and test, write metrics.json."""
        cfg = self.cfg
        self._write_static()
        resumed = self.resume()
        if resumed:
            self.log(f"resuming {self.run_dir} after epoch {self.epoch}")
        since_best = self.epoch - self.best_epoch
        while self.epoch < cfg.epochs:
            if cfg.patience is not None and since_best > cfg.patience:
                self.log(f"early stop: no improvement for {since_best} epochs")
                break
            self.epoch += 1
            stats = self.train_epoch()
            if self.phase == "asgd":
                averaged = _averaged_state(self.model, self.optimizer)
                raw = {k: v.detach().clone() for k, v in self.model.state_dict().items()}
                self.model.load_state_dict(averaged)
                val = evaluate(self.model, self.valid_data, cfg.eval_bptt)
                self.model.load_state_dict(raw)
                if val < self.best_val:
                    self.best_val, self.best_epoch = val, self.epoch
                    self._save_best(averaged)
            else:
                val = evaluate(self.model, self.valid_data, cfg.eval_bptt)
                if val < self.best_val:
                    self.best_val, self.best_epoch = val, self.epoch
                    self._save_best({k: v.detach().clone() for k, v in self.model.state_dict().items()})
                if should_switch_to_asgd(self.H, val, cfg.nonmono):
                    self.log(f"epoch {self.epoch}: switching to ASGD")
                    self.phase = "asgd"
                    self.optimizer = _make_optimizer(cfg, self.model, "asgd")
                else:
                    self.H.append(val)
            since_best = self.epoch - self.best_epoch
            record = {
                "epoch": self.epoch,
                **stats,
                "valid_loss": val,
                "valid_ppl": perplexity(val),
                "lr": cfg.lr,
                "phase": self.phase,
            }
            with open(self.run_dir / "history.jsonl", "a", encoding="utf-8") as fh:
                from genderscope.core.jsonutil import clean_json

                fh.write(json.dumps(clean_json(record)) + "\n")
            self.log(
                f"epoch {self.epoch}: train CE {stats['train_loss']:.3f}, valid ppl {perplexity(val):.2f}"
                f"{', κ ' + str(stats['kappa_counts']) if 'kappa_counts' in stats else ''}"
            )
            self._save_last()
        return self.finish()

    def finish(self) -> dict[str, Any]:
        best = load_checkpoint(self.run_dir, self.device)
        model = best.model
        cfg = self.cfg
        valid = evaluate(
            model, batchify(self.corpus.valid, cfg.eval_batch_size).to(self.device), cfg.eval_bptt
        )
        test = evaluate(model, batchify(self.corpus.test, cfg.test_batch_size).to(self.device), cfg.eval_bptt)
        history = [
            json.loads(line) for line in (self.run_dir / "history.jsonl").read_text().splitlines() if line
        ]
        metrics = {
            "config_hash": self.hash,
            "epochs": self.epoch,
            "best_epoch": self.best_epoch,
            "valid_loss": valid,
            "valid_ppl": perplexity(valid),
            "test_loss": test,
            "test_ppl": perplexity(test),
            "vocab_size": len(self.corpus.vocab),
            "lambda": self.cfg.lam,
            "train_tokens_per_s": float(
                np.mean([h["tokens_per_s"] for h in history if h.get("tokens_per_s")])
            )
            if history
            else None,
        }
        if self.reg is not None:
            counts: dict[str, int] = {}
            for h in history:
                for k, v in h.get("kappa_counts", {}).items():
                    counts[k] = counts.get(k, 0) + v
            metrics["kappa_counts"] = counts
            metrics["final_projection"] = self.reg.projection(
                debias_matrices(model, self.cfg.debias)[0]
            ).item()
        atomic_write_json(self.run_dir / "metrics.json", metrics)
        return metrics


def train_lm(cfg: TrainConfig, run_dir: Path, log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Train (or resume, or just re-evaluate a finished run) and return metrics.json's content."""
    run_dir = Path(run_dir)
    metrics_path = run_dir / "metrics.json"
    if metrics_path.exists():
        done = json.loads(metrics_path.read_text())
        if done.get("config_hash") == cfg.config_hash() and done.get("epochs", 0) >= cfg.epochs:
            return done
    return Trainer(cfg, run_dir, log).run()
