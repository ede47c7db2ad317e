"""Fine-tuning a transformer LM for debiasing: LoRA adapters (``peft``) or the input embeddings alone, the
language-modelling loss plus, optionally, a regulariser on the input embeddings; resumable.

Data: the training texts are tokenised, joined with the EOS token and cut into blocks of ``seq_len``
tokens; each step draws ``batch_size`` blocks (a seeded permutation per pass).  Causal LMs learn the
next token; masked LMs learn 15 % masked positions (80 % mask token, 10 % random, 10 % kept, BERT's rule,
seeded per step, as is dropout, so a resumed run draws what an uninterrupted one would).  Every
``checkpoint_every`` steps the trainable weights, the optimiser and the step are written
to ``checkpoint.pt``; a rerun with the same settings continues from there.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

import torch

ADAPTERS = ("lora", "embeddings")


@dataclass
class FinetuneConfig:
    """Hyper-parameters (recorded in debias.json; a checkpoint resumes only under the same ones)."""

    adapter: str = "lora"
    steps: int = 100
    batch_size: int = 8
    seq_len: int = 64
    lr: float = 5e-4
    lora_r: int = 8
    seed: int = 0
    checkpoint_every: int = 25
    masked: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


def blocks_of(tok: Any, texts: list[str], seq_len: int) -> torch.Tensor:
    """The texts' tokens, EOS-joined, as a (blocks × seq_len) tensor (a shorter tail is dropped)."""
    sep = tok.eos_token_id if tok.eos_token_id is not None else tok.sep_token_id
    ids: list[int] = []
    for t in texts:
        ids.extend(tok(t, add_special_tokens=False)["input_ids"])
        if sep is not None:
            ids.append(sep)
    n = len(ids) // seq_len
    if n == 0:
        raise ValueError(f"the training text has {len(ids)} tokens, fewer than one block of {seq_len}")
    return torch.tensor(ids[: n * seq_len], dtype=torch.long).view(n, seq_len)


def mask_batch(batch: torch.Tensor, tok: Any, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """BERT's masking: (inputs, labels with -100 where nothing is predicted)."""
    labels = batch.clone()
    chosen = torch.rand(batch.shape, generator=gen) < 0.15
    labels[~chosen] = -100
    inputs = batch.clone()
    r = torch.rand(batch.shape, generator=gen)
    inputs[chosen & (r < 0.8)] = tok.mask_token_id
    rand = chosen & (r >= 0.8) & (r < 0.9)
    inputs[rand] = torch.randint(len(tok), batch.shape, generator=gen)[rand]
    return inputs, labels


def prepare_model(model: Any, cfg: FinetuneConfig, train_embeddings: bool) -> Any:
    """Trainable parameters: LoRA adapters on the attention projections (peft's default modules for the
    architecture), or the input embeddings alone; ``train_embeddings`` also frees the embeddings under
    LoRA (the regulariser acts on them)."""
    if cfg.adapter == "lora":
        import warnings

        from peft import LoraConfig, TaskType, get_peft_model

        task = None if cfg.masked else TaskType.CAUSAL_LM
        conf = LoraConfig(r=cfg.lora_r, lora_alpha=2 * cfg.lora_r, lora_dropout=0.0, task_type=task)
        with warnings.catch_warnings():  # peft's notes on GPT-2's Conv1D and transformers' renamed property
            warnings.simplefilter("ignore", UserWarning)
            warnings.simplefilter("ignore", FutureWarning)
            model = get_peft_model(model, conf)
    else:
        for p in model.parameters():
            p.requires_grad_(False)
    if cfg.adapter == "embeddings" or train_embeddings:
        model.get_input_embeddings().weight.requires_grad_(True)
    return model


def _trainable(model: Any) -> dict[str, torch.Tensor]:
    return {n: p for n, p in model.named_parameters() if p.requires_grad}


def _load_checkpoint(
    path: Path, model: Any, opt: Any, cfg: FinetuneConfig
) -> tuple[int, list[dict[str, float]]]:
    """(step to start from, log so far) from ``path`` when it exists and was made with ``cfg``."""
    if not path.is_file():
        return 0, []
    state = torch.load(path, weights_only=False)
    if state["config"] != asdict(cfg):
        raise ValueError(f"{path} was written with other settings; remove it or use another --out")
    params = _trainable(model)
    for name, value in state["weights"].items():
        params[name].data.copy_(value)
    opt.load_state_dict(state["optimizer"])
    return int(state["step"]), list(state["log"])


def _save_checkpoint(path: Path, model: Any, opt: Any, cfg: FinetuneConfig, step: int, log: list) -> None:
    tmp = path.with_suffix(".tmp")
    weights = {n: p.detach().clone() for n, p in _trainable(model).items()}
    torch.save({"config": asdict(cfg), "weights": weights, "optimizer": opt.state_dict(), "step": step,
                "log": log}, tmp)  # fmt: skip
    tmp.replace(path)


def _loss(model: Any, tok: Any, batch: torch.Tensor, cfg: FinetuneConfig, gen: torch.Generator) -> Any:
    if cfg.masked:
        inputs, labels = mask_batch(batch, tok, gen)
        return model(input_ids=inputs, labels=labels).loss
    return model(input_ids=batch, labels=batch).loss


def finetune(
    model: Any,
    tok: Any,
    texts: list[str],
    cfg: FinetuneConfig,
    work: Path,
    regularizer: Callable[[torch.Tensor], torch.Tensor] | None = None,
    progress: Callable[[str], None] = print,
) -> tuple[Any, dict[str, Any]]:
    """Train ``model`` (see the module docstring); returns (the model with adapters merged, statistics:
    steps, losses, regulariser values, tokens/s, seconds per step with and without the regulariser)."""
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()  # transformers notes a config without loss_type on every first step
    Path(work).mkdir(parents=True, exist_ok=True)
    torch.manual_seed(cfg.seed)
    data = blocks_of(tok, texts, cfg.seq_len)
    model = prepare_model(model, cfg, train_embeddings=regularizer is not None)
    model.train()
    opt = torch.optim.AdamW(list(_trainable(model).values()), lr=cfg.lr)
    ckpt = Path(work) / "checkpoint.pt"
    start, log = _load_checkpoint(ckpt, model, opt, cfg)
    gen = torch.Generator().manual_seed(cfg.seed)
    order = torch.cat([torch.randperm(data.shape[0], generator=gen) for _ in range(
        (cfg.steps * cfg.batch_size) // data.shape[0] + 1)])  # fmt: skip
    mgen = torch.Generator().manual_seed(cfg.seed + 1)
    t_reg = 0.0
    t0 = time.perf_counter()
    for step in range(start, cfg.steps):
        batch = data[order[step * cfg.batch_size : (step + 1) * cfg.batch_size]]
        mgen.manual_seed(cfg.seed + 1 + step)
        torch.manual_seed(cfg.seed * 1_000_003 + step)  # dropout draws depend on the step only (resumable)
        lm = _loss(model, tok, batch, cfg, mgen)
        loss, reg_value = lm, 0.0
        if regularizer is not None:
            r0 = time.perf_counter()
            reg = regularizer(model.get_input_embeddings().weight)
            t_reg += time.perf_counter() - r0
            loss, reg_value = lm + reg, float(reg.detach())
        opt.zero_grad()
        loss.backward()
        opt.step()
        log.append({"step": step + 1, "lm_loss": float(lm.detach()), "reg": reg_value})
        if (step + 1) % cfg.checkpoint_every == 0 or step + 1 == cfg.steps:
            _save_checkpoint(ckpt, model, opt, cfg, step + 1, log)
            progress(
                f"step {step + 1}/{cfg.steps}: lm loss {log[-1]['lm_loss']:.3f}, regulariser {reg_value:.4g}"
            )
    seconds = time.perf_counter() - t0
    done = max(1, cfg.steps - start)
    model.eval()
    if cfg.adapter == "lora":
        model = model.merge_and_unload()
    stats = {
        "steps": cfg.steps,
        "resumed_from_step": start,
        "seconds": round(seconds, 3),
        "tokens_per_second": round(done * cfg.batch_size * cfg.seq_len / seconds, 1) if seconds else None,
        "regularizer_seconds_per_step": round(t_reg / done, 5),
        "seconds_per_step": round(seconds / done, 5),
        "first_lm_loss": log[0]["lm_loss"] if log else None,
        "last_lm_loss": log[-1]["lm_loss"] if log else None,
        "last_regularizer": log[-1]["reg"] if log else None,
    }
    (Path(work) / "train_log.json").write_text(json.dumps(log))
    return model, stats
