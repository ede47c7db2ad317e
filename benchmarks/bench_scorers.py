"""Offline scorers alone: N generations streamed through sentiment + hate + hurtlex + representation.

Texts are BOLD's gender prompts with seeded synthetic continuations (tests/reference/scorer_texts.py:
gender words, adjectives, professions, HurtLex words, punctuation; 4-45 words each), made chunk by chunk
so memory does not grow with N.  Each chunk goes through every scorer; only the column sums are kept
(what the generation layer keeps per group or person).  Reported: CPU seconds (process time, this
process) per scorer and in all, the time to make the texts apart, texts per CPU second, and peak
resident memory (ru_maxrss).  Issue 39's targets: <= 60 s CPU for 100,000 generations; <= 1 GB peak
at 1,000,000, streaming.  `uptime` is printed before and after (the load of a shared machine).

    PYTHONPATH=src python benchmarks/bench_scorers.py --n 100000
    PYTHONPATH=src python benchmarks/bench_scorers.py --n 1000000 --chunk 2000
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if (ROOT.parent / "shared" / "data").is_dir():
    os.environ.setdefault("GENDERSCOPE_DATA_MIRROR", str(ROOT.parent / "shared" / "data"))
os.environ.setdefault("GENDERSCOPE_OFFLINE", "1")
sys.path.insert(0, str(ROOT / "tests" / "reference"))

import scorer_texts  # noqa: E402

from genderscope.scorers.base import make_scorer


def uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "uptime: not available"


def chunks(n: int, size: int, seed: int = 39):
    """Synthetic generations, ``size`` at a time, ``n`` in all (the same texts for the same seed)."""
    rng = random.Random(seed)
    pools = scorer_texts._pools()
    prompts = scorer_texts.bold_prompts()
    made = 0
    while made < n:
        k = min(size, n - made)
        yield [prompts[(made + i) % len(prompts)] + scorer_texts._continuation(rng, pools) for i in range(k)]
        made += k


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000, help="generations (default 100,000)")
    parser.add_argument("--chunk", type=int, default=1000, help="texts per chunk (default 1,000)")
    parser.add_argument("--scorers", default="sentiment,hate,hurtlex,representation")
    args = parser.parse_args(argv)
    print("before:", uptime(), flush=True)
    names = [s for s in args.scorers.split(",") if s]
    t0 = time.process_time()
    scorers = {name: make_scorer(name) for name in names}
    setup = time.process_time() - t0
    cpu = dict.fromkeys(names, 0.0)
    sums = {name: scorers[name].empty() for name in names}
    making = 0.0
    wall0 = time.perf_counter()
    done = 0
    t = time.process_time()
    for texts in chunks(args.n, args.chunk):
        now = time.process_time()
        making += now - t
        t = now
        for name, scorer in scorers.items():
            sums[name] += scorer.score(texts).sum(axis=0)
            now = time.process_time()
            cpu[name] += now - t
            t = now
        done += len(texts)
        if done % max(args.chunk, args.n // 10) == 0:
            print(f"  {done:,} texts, {sum(cpu.values()):.1f} s CPU scoring so far", flush=True)
    wall = time.perf_counter() - wall0
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    total = sum(cpu.values())
    print(f"generations: {done:,} (chunks of {args.chunk:,}); scorer set-up {setup:.1f} s CPU")
    for name in names:
        print(f"  {name:15s} {cpu[name]:8.1f} s CPU  {done / max(cpu[name], 1e-9):10,.0f} texts/s")
    rate = done / max(total, 1e-9)
    print(f"scoring, all scorers: {total:.1f} s CPU ({rate:,.0f} texts/s); target <= 60 s per 100,000")
    print(f"making the texts (not scoring): {making:.1f} s CPU; wall time of the loop {wall:.1f} s")
    print(f"peak resident memory: {peak_mb:,.0f} MB (target <= 1,024 MB at 1,000,000)")
    for name in names:
        metrics = scorers[name].metrics(sums[name])
        shown = ", ".join(f"{k}={float(v):.4f}" for k, v in list(metrics.items())[:3])
        print(f"  {name}: {shown}")
    print("after:", uptime())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
