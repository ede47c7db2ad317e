"""Evaluation of a language model: mean cross-entropy per token, perplexity = exp(mean CE), and the
valid/test perplexity of a finished run."""

from __future__ import annotations

import math
from pathlib import Path

import torch
import torch.nn.functional as F

from genderscope.bordia.lm.checkpoint import load_checkpoint
from genderscope.bordia.lm.config import set_threads
from genderscope.bordia.lm.data import batchify, load_corpus
from genderscope.bordia.lm.model import AWDLSTM
from genderscope.common.errors import UsageError


@torch.no_grad()
def evaluate(model: AWDLSTM, data: torch.Tensor, bptt: int) -> float:
    """Mean cross-entropy per predicted token over bptt chunks, hidden state carried (eval mode)."""
    model.eval()
    hidden = model.init_hidden(data.size(1))
    total, count = 0.0, 0
    for i in range(0, data.size(0) - 1, bptt):
        seq_len = min(bptt, data.size(0) - 1 - i)
        x, y = data[i : i + seq_len], data[i + 1 : i + 1 + seq_len]
        out = model(x, hidden)
        hidden = out.hidden
        total += float(F.cross_entropy(out.logits.reshape(-1, model.ntoken), y.reshape(-1), reduction="sum"))
        count += y.numel()
    return total / max(count, 1)


def perplexity(loss: float) -> float:
    return math.exp(loss) if loss < 700 else math.inf


def evaluate_run(
    run_dir: Path, device: str = "cpu", valid: Path | None = None, test: Path | None = None
) -> dict[str, float]:
    """Valid/test perplexity of a run's best checkpoint (optionally on other files, same vocabulary)."""
    set_threads()
    ck = load_checkpoint(run_dir, device)
    cfg = ck.config
    valid_path = Path(valid or cfg.valid)
    test_path = Path(test or cfg.test or valid_path)
    try:
        corpus = load_corpus(Path(cfg.train), valid_path, test_path, vocab=ck.vocab)
    except KeyError as exc:
        raise UsageError(
            f"the evaluation files contain {exc.args[0]!r}, which is not in the model's vocabulary"
        ) from None
    v = evaluate(ck.model, batchify(corpus.valid, cfg.eval_batch_size).to(device), cfg.eval_bptt)
    t = evaluate(ck.model, batchify(corpus.test, cfg.test_batch_size).to(device), cfg.eval_bptt)
    return {"valid_loss": v, "valid_ppl": perplexity(v), "test_loss": t, "test_ppl": perplexity(t)}
