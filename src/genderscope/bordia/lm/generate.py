"""Sampling text from a trained word-level LM (spec §8).

Sample j uses seed ``seed_offset + j``: a CPU ``torch.Generator`` with that seed draws words + 1 float64
uniforms u_0 … u_words up front. The first input is token ⌊u_0·|V|⌋ (not written); for t = 1 … words,
p = softmax(logits / T) in float64 and the next token is the smallest index whose cumulative
probability exceeds u_t · (total mass) (clipped to |V| − 1): exact inverse-CDF multinomial sampling.
Samples are computed in batches (one batched step per word) and written one file per sample
(``<out>/{j:05d}.txt``, atomic; a rerun skips complete samples; ``<out>`` defaults to ``RUN_DIR/samples``),
plus ``<out>/samples.jsonl`` (one record per sample) and ``<out>/manifest.json``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import torch

from genderscope.bordia.cooccurrence import atomic_write_json, atomic_write_text
from genderscope.bordia.lm.model import AWDLSTM
from genderscope.bordia.lm.samples import changed_settings, check_sample_settings
from genderscope.bordia.lm.checkpoint import load_checkpoint
from genderscope.bordia.lm.config import set_threads
from genderscope.common.errors import UsageError


def sample_uniforms(seed: int, words: int) -> torch.Tensor:
    """The words + 1 float64 uniforms of one sample."""
    g = torch.Generator(device="cpu")
    g.manual_seed(seed)
    return torch.rand(words + 1, generator=g, dtype=torch.float64)


@torch.no_grad()
def sample_batch(model: AWDLSTM, seeds: list[int], words: int, temperature: float = 1.0) -> list[list[int]]:
    """Token ids (``words`` per sample) for each seed, computed in one batch."""
    if temperature < 1e-3:
        raise UsageError(f"temperature must be ≥ 1e-3, got {temperature}")
    model.eval()
    device = model.encoder.weight.device
    V = model.ntoken
    u = torch.stack([sample_uniforms(s, words) for s in seeds], dim=1)  # (words+1) × B
    token = torch.clamp((u[0] * V).floor().long(), max=V - 1).to(device)
    hidden = model.init_hidden(len(seeds))
    out = torch.empty(words, len(seeds), dtype=torch.long)
    for t in range(1, words + 1):
        step = model(token.view(1, -1), hidden)
        hidden = step.hidden
        probs = torch.softmax(step.logits[0].double().cpu() / temperature, dim=-1)
        cdf = torch.cumsum(probs, dim=-1)
        target = (u[t] * cdf[:, -1]).unsqueeze(1)
        nxt = torch.searchsorted(cdf, target, right=True).squeeze(1).clamp_(max=V - 1)
        out[t - 1] = nxt
        token = nxt.to(device)
    return out.t().tolist()


def generate_samples(
    run_dir: Path,
    out_dir: Path | None = None,
    n_samples: int = 2000,
    words: int = 500,
    temperature: float = 1.0,
    seed_offset: int = 500,
    batch: int = 100,
    device: str = "cpu",
    log: Callable[[str], None] | None = None,
    force: bool = False,
) -> dict[str, Any]:
    """Write ``n_samples`` samples of ``words`` tokens from the run's best checkpoint; returns the manifest.

    Existing samples are reused when the folder's manifest has the same checkpoint and settings. A new
    checkpoint (the run trained further) regenerates them; other ``words``/``temperature``/``seed_offset``
    than the manifest's is an error unless ``force`` (spec §9.1: a stage whose configuration changed).
    """
    set_threads()
    if n_samples < 1 or words < 1:
        raise UsageError("--samples and --words must be ≥ 1")
    ck = load_checkpoint(run_dir, device)
    out_dir = Path(out_dir) if out_dir else Path(run_dir) / "samples"
    sample_dir = out_dir  # spec §8/§9.1: samples/{j:05d}.txt next to manifest.json
    sample_dir.mkdir(parents=True, exist_ok=True)
    manifest = {
        "checkpoint_sha256": ck.sha256,
        "vocab_size": len(ck.vocab),
        "n_samples": n_samples,
        "words": words,
        "temperature": temperature,
        "seed_offset": seed_offset,
        "seeds": [seed_offset + j for j in range(n_samples)],
        "lambda": ck.config.lam,
    }
    prev = check_sample_settings(out_dir, manifest, force)
    if prev is not None and (
        changed_settings(prev, manifest) or prev.get("checkpoint_sha256") != manifest["checkpoint_sha256"]
    ):
        for f in sample_dir.glob("[0-9]*.txt"):  # samples of another model/settings are never reused
            f.unlink()
    atomic_write_json(out_dir / "manifest.json", manifest)
    todo = [j for j in range(n_samples) if not (sample_dir / f"{j:05d}.txt").exists()]
    for start in range(0, len(todo), batch):
        chunk = todo[start : start + batch]
        ids = sample_batch(ck.model, [seed_offset + j for j in chunk], words, temperature)
        for j, row in zip(chunk, ids):
            atomic_write_text(sample_dir / f"{j:05d}.txt", " ".join(ck.vocab[i] for i in row) + "\n")
        if log:
            log(f"samples {start + len(chunk)}/{len(todo)}")
    lines = []
    for j in range(n_samples):
        text = (sample_dir / f"{j:05d}.txt").read_text(encoding="utf-8").strip()
        lines.append(json.dumps({"sample": j, "seed": seed_offset + j, "text": text}, ensure_ascii=False))
    atomic_write_text(out_dir / "samples.jsonl", "\n".join(lines) + "\n")
    return manifest


def read_samples(out_dir: Path, n_samples: int | None = None) -> list[str]:
    """The sample texts of a generation folder, in sample order (from the per-sample files); with
    ``n_samples``, exactly samples 0 … n_samples − 1 (a folder may hold more from an earlier, larger run)."""
    if n_samples is not None:
        files = [Path(out_dir) / f"{j:05d}.txt" for j in range(n_samples)]
    else:
        files = sorted(Path(out_dir).glob("[0-9]*.txt"))
    return [f.read_text(encoding="utf-8") for f in files]
