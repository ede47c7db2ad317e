"""Model construction and checkpoint I/O of a training run: ``best.pt`` / ``last.pt`` (atomic writes),
ASGD-averaged weights, and :func:`load_checkpoint`."""

from __future__ import annotations

import os
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import torch

from genderscope.bordia.lm.config import TrainConfig
from genderscope.bordia.lm.model import AWDLSTM


def build_model(cfg: TrainConfig, ntoken: int) -> AWDLSTM:
    return AWDLSTM(
        ntoken,
        cfg.emsize,
        cfg.nhid,
        cfg.nlayers,
        cfg.dropout,
        cfg.dropouth,
        cfg.dropouti,
        cfg.dropoute,
        cfg.wdrop,
        cfg.tie_weights,
    )


def _atomic_save(obj: Any, path: Path) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    torch.save(obj, tmp)
    os.replace(tmp, path)


def _averaged_state(model: AWDLSTM, optimizer: torch.optim.Optimizer) -> dict[str, torch.Tensor]:
    """The model's state dict with ASGD averages in place of the raw parameters."""
    averages = {
        id(p): optimizer.state[p]["ax"] for p in model.parameters() if "ax" in optimizer.state.get(p, {})
    }
    state = {}
    for name, tensor in model.state_dict(keep_vars=True).items():
        state[name] = averages.get(id(tensor), tensor).detach().clone()
    return state


@dataclass
class Checkpoint:
    model: AWDLSTM
    vocab: list[str]
    config: TrainConfig
    sha256: str


def load_checkpoint(run_dir: Path, device: str | torch.device = "cpu") -> Checkpoint:
    """The best model of a run directory, in eval mode."""
    from genderscope.common.errors import DataError
    from genderscope.data.pins import sha256_file

    path = Path(run_dir) / "best.pt"
    if not path.exists():
        raise DataError(f"{run_dir}: no best.pt (train first: genderscope bordia train ... --out {run_dir})")
    ck = torch.load(path, map_location=device, weights_only=False)
    cfg = TrainConfig(**{k: v for k, v in ck["config"].items() if k in {f.name for f in fields(TrainConfig)}})
    model = build_model(cfg, len(ck["vocab"])).to(device)
    model.load_state_dict(ck["model"])
    model.eval()
    return Checkpoint(model, list(ck["vocab"]), cfg, sha256_file(path))
