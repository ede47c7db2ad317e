"""Training configuration of the AWD-LSTM (spec §7.4, §7.6): hyperparameter presets, :class:`TrainConfig`
(and its hash, which names a run), and the torch thread count."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Optional

import torch

from genderscope.common.errors import UsageError

#: hyperparameter presets (spec §7.4, §7.6); ``batch_size`` of paper/reproduction is 40 for PTB, 80 otherwise
_PAPER: dict[str, Any] = dict(
    emsize=400,
    nhid=1150,
    nlayers=3,
    lr=30.0,
    batch_size=80,
    epochs=750,
    bptt=70,
    dropout=0.4,
    dropouth=0.3,
    dropouti=0.65,
    dropoute=0.1,
    wdrop=0.5,
    alpha=2.0,
    beta=1.0,
    wdecay=1.2e-6,
    clip=0.25,
    eval_batch_size=10,
    test_batch_size=1,
    seed=1111,
)

PRESETS: dict[str, dict[str, Any]] = {
    "paper": _PAPER,
    # same as the paper but fewer epochs and another seed
    "reproduction": {**_PAPER, "epochs": 200, "seed": 147},
    # the paper's regularisation at toy size
    "tiny": {
        **_PAPER,
        "emsize": 16,
        "nhid": 32,
        "batch_size": 4,
        "epochs": 2,
        "bptt": 12,
        "eval_batch_size": 2,
        "test_batch_size": 2,
        "threads": 1,
    },
}


@dataclass
class TrainConfig:
    """Everything that determines a trained model (plus ``device``, which does not enter the hash)."""

    train: str = ""
    valid: str = ""
    test: Optional[str] = None
    pairs: str = "penn"
    fix_wife_husband: bool = False
    preset: str = "tiny"
    emsize: int = 16
    nhid: int = 32
    nlayers: int = 3
    lr: float = 30.0
    batch_size: int = 4
    epochs: int = field(default=2, metadata={"hash": False})  # a budget: more epochs resume the run
    bptt: int = 12
    dropout: float = 0.4
    dropouth: float = 0.3
    dropouti: float = 0.65
    dropoute: float = 0.1
    wdrop: float = 0.5
    alpha: float = 2.0
    beta: float = 1.0
    wdecay: float = 1.2e-6
    clip: float = 0.25
    eval_batch_size: int = 2
    test_batch_size: int = 2
    seed: int = 1111
    nonmono: int = 5
    patience: Optional[int] = field(default=None, metadata={"hash": False})
    lam: float = 0.0
    kappa: str = "variance"
    var_ratio: float = 0.5
    normalize: bool = True
    detach_subspace: bool = False
    tie_weights: bool = True
    debias: str = "encoder"
    eval_bptt: int = 70
    device: str = field(default="cpu", metadata={"hash": False})
    threads: Optional[int] = field(default=None, metadata={"hash": False})

    def config_hash(self) -> str:
        d = {f.name: getattr(self, f.name) for f in fields(self) if f.metadata.get("hash", True)}
        d["train"], d["valid"] = _file_id(self.train), _file_id(self.valid)
        d["test"] = _file_id(self.test) if self.test else None
        return hashlib.sha256(json.dumps(d, sort_keys=True).encode()).hexdigest()[:16]


def _file_id(path: str) -> str:
    """A file's identity for hashes: its sha256 (so moving a file does not invalidate a run)."""
    from genderscope.data.pins import sha256_file

    return sha256_file(Path(path)) if Path(path).is_file() else str(path)


def preset_config(preset: str, dataset: str | None = None, **overrides: Any) -> TrainConfig:
    """A TrainConfig from a preset, with ``overrides`` (None values ignored)."""
    if preset not in PRESETS:
        raise UsageError(f"unknown preset {preset!r}; choose one of {', '.join(PRESETS)}")
    values = dict(PRESETS[preset])
    if preset != "tiny" and dataset == "ptb":
        values["batch_size"] = 40
    if preset == "reproduction" and dataset == "cnn_dailymail":
        values["epochs"] = 150
    values["preset"] = preset
    names = {f.name for f in fields(TrainConfig)}
    for k, v in overrides.items():
        if v is None:
            continue
        if k not in names:
            raise UsageError(f"unknown training option {k!r}")
        values[k] = v
    return TrainConfig(**values)


def set_threads(threads: int | None = None) -> None:
    """Thread count: env GENDERSCOPE_TORCH_THREADS > ``threads`` > torch's default (0/None)."""
    env = os.environ.get("GENDERSCOPE_TORCH_THREADS")
    n = int(env) if env else threads
    if n:
        torch.set_num_threads(n)
