"""`bordia audit` at scale: peak memory vs corpus size, tokens/s per core, 1 vs 2 workers, Ray overhead.

The corpus is synthetic and deterministic: documents of 1–16 lines drawn (NumPy PCG64, ``--seed``) from the
non-blank lines of the mirror's WikiText-2 and PTB valid/test files, written as ``--shards`` JSONL shards
(``{"text": ...}`` per line) under ``--workdir`` (kept and reused). Every audit runs in a fresh process
(``resource`` reports its peak RSS and its pool workers'), with both contexts, wiki pairs, bootstrap off.

Run (modest sizes, what the test machine allows)::

    GENDERSCOPE_DATA_MIRROR=../shared/data PYTHONPATH=src .venv/bin/python \\
        benchmarks/bench_corpus_stream.py --tokens 8M,16M,32M --workers-at 16M --ray

The full run of the issue (1 B tokens, 64 shards, ~6 GB of JSONL; a quiet machine, 2+ free cores)::

    GENDERSCOPE_DATA_MIRROR=../shared/data PYTHONPATH=src .venv/bin/python \\
        benchmarks/bench_corpus_stream.py --tokens 8M,64M,256M,1G --workers-at 1G --ray \\
        --workdir /data/bench-corpus

Columns: tokens/s of wall time; tokens per CPU-second of every process (imports, reading, counting,
reduce, scoring, writing); ``count/cpu``: tokens per CPU-second of the map alone (read + count + write a
shard, summed over shards; Ray's too); peak RSS of the driver and of the largest pool worker. Prints
``uptime`` first and last: on a busy machine the wall-clock figures (and the 2-worker speed-up) mean
little, the CPU-second figures are the per-core ones.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "devtools"))  # genderscope_dev (dev rig)
SOURCES = (
    "corpora/wikitext-2/valid.txt",
    "corpora/wikitext-2/test.txt",
    "corpora/ptb/ptb.valid.txt",
    "corpora/ptb/ptb.test.txt",
)

RUNNER = r"""
import json, resource, sys, time
from pathlib import Path
from genderscope.commands.bordia.audit import audit_corpus
from genderscope.commands.bordia.options import CorpusAuditOptions
a = json.loads(sys.argv[1])
t0, c0 = time.perf_counter(), time.process_time()
r = audit_corpus(CorpusAuditOptions(corpora=[a["corpus"]], pairs="wiki", bootstrap=0, out=Path(a["out"]),
                 workers=a["workers"], executor=a["executor"], ray_address=a.get("address"), fresh=True))
wall = time.perf_counter() - t0
me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"wall": wall, "tokens": r.scores["fixed"].counts.n_tokens,
    "cpu": me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime,
    "rss_main_mb": me.ru_maxrss / 1024, "rss_worker_mb": kids.ru_maxrss / 1024,
    "per_worker": r.results.extra["throughput"]["tokens_per_second_per_worker"],
    "count_per_cpu_s": r.results.extra["throughput"].get("tokens_per_cpu_second_per_worker"),
    "mu": r.scores["fixed"].bias.mu}))
"""


def parse_size(s: str) -> int:
    s = s.strip().upper()
    mult = {"K": 10**3, "M": 10**6, "G": 10**9}.get(s[-1], 1)
    return int(float(s[:-1] if s[-1] in "KMG" else s) * mult)


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def build_corpus(root: Path, n_tokens: int, shards: int, seed: int) -> Path:
    """JSONL shards of resampled WikiText-2/PTB lines, ``n_tokens`` whitespace tokens in all (cached)."""
    folder = root / f"corpus-{n_tokens}-{shards}-{seed}"
    if (folder / ".done").exists():
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    mirror = Path(os.environ["GENDERSCOPE_DATA_MIRROR"])
    lines = [
        ln for src in SOURCES for ln in (mirror / src).read_text(encoding="utf-8").split("\n") if ln.strip()
    ]
    encoded = [json.dumps(ln)[1:-1] for ln in lines]  # JSON string bodies, joined by an escaped newline
    lengths = np.array([len(ln.split()) for ln in lines], dtype=np.int64)
    rng = np.random.default_rng(seed)
    per_shard = n_tokens // shards
    t0 = time.perf_counter()
    for s in range(shards):
        target = per_shard if s < shards - 1 else n_tokens - per_shard * (shards - 1)
        with open(folder / f"shard-{s:05d}.jsonl", "w", encoding="utf-8") as fh:
            done = 0
            while done < target:
                picks = rng.integers(0, len(lines), size=(4096, 16))
                sizes = rng.integers(1, 17, size=4096)
                out = []
                for row, k in zip(picks, sizes):
                    idx = row[:k]
                    out.append('{"text": "' + "\\n".join(encoded[i] for i in idx) + '"}\n')
                    done += int(lengths[idx].sum())
                    if done >= target:
                        break
                fh.write("".join(out))
    (folder / ".done").write_text(f"{time.perf_counter() - t0:.1f} s\n")
    return folder


def audit(corpus: Path, out: Path, workers: int, executor: str = "local", address: str | None = None) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    arg = {
        "corpus": str(corpus),
        "out": str(out),
        "workers": workers,
        "executor": executor,
        "address": address,
    }
    proc = subprocess.run(
        [sys.executable, "-c", RUNNER, json.dumps(arg)], capture_output=True, text=True, env=env, check=False
    )
    if proc.returncode != 0:
        sys.exit(f"audit failed: {proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def same_counts(a: Path, b: Path) -> bool:
    import pyarrow.parquet as pq

    return all(
        pq.read_table(a / ctx / "counts.parquet").equals(pq.read_table(b / ctx / "counts.parquet"))
        for ctx in ("fixed", "infinite")
    )


def line(label: str, r: dict, local: bool = True) -> str:
    """One row; Ray's workers are not children of the driver: no CPU time or worker memory for them."""
    cpu = f"{r['tokens'] / r['cpu'] / 1e6:>9.2f}" if local else f"{'–':>9}"
    shard_cpu = r.get("count_per_cpu_s")
    shard_cpu = f"{shard_cpu / 1e6:>9.2f}" if shard_cpu else f"{'–':>9}"
    worker = f"{r['rss_worker_mb']:>9.0f}" if local else f"{'–':>9}"
    return (
        f"{label:<22} {r['tokens']:>13,} {r['wall']:>8.1f} {r['tokens'] / r['wall'] / 1e6:>8.2f} "
        f"{cpu} {shard_cpu} {r['rss_main_mb']:>9.0f} {worker}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tokens", default="8M,16M,32M", help="corpus sizes (K/M/G suffixes)")
    ap.add_argument("--shards", type=int, default=64)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers-at", default=None, help="size for the 1 vs 2 workers (and Ray) comparison")
    ap.add_argument("--ray", action="store_true", help="also run on a local Ray cluster (needs ray)")
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/genderscope-bench-corpus"))
    ap.add_argument(
        "--sweep-workers",
        type=int,
        default=1,
        help="workers of the size sweep; with 2, the 1 vs 2 comparison runs only where --workers-at is given",
    )
    args = ap.parse_args()
    print("uptime:", uptime())
    print(f"nproc: {os.cpu_count()}")
    sizes = [parse_size(s) for s in args.tokens.split(",")]
    at = parse_size(args.workers_at) if args.workers_at else sizes[-1]
    head = f"{'run':<22} {'tokens':>13} {'wall s':>8} {'Mtok/s':>8} {'Mtok/cpu-s':>9} {'count/cpu':>9}"
    head += f" {'main MB':>9}"
    head += f" {'worker MB':>9}"
    print(head)
    results = {}
    sw = args.sweep_workers
    for n in sorted(set(sizes + [at])):
        corpus = build_corpus(args.workdir, n, args.shards, args.seed)
        r = audit(corpus, args.workdir / f"out-{n}-w{sw}", sw)
        results[(n, sw)] = r
        print(line(f"{n / 1e6:g}M, {sw} worker{'s' if sw > 1 else ''}", r), flush=True)
    if sw != 1 and not args.workers_at:
        peak = max(max(r["rss_main_mb"], r["rss_worker_mb"]) for r in results.values())
        print(f"peak memory of any process over the sizes: {peak:.0f} MB")
        print("uptime:", uptime())
        return
    if sw != 1:
        corpus = build_corpus(args.workdir, at, args.shards, args.seed)
        results[(at, 1)] = audit(corpus, args.workdir / f"out-{at}-w1", 1)
        print(line(f"{at / 1e6:g}M, 1 worker", results[(at, 1)]), flush=True)
    corpus = build_corpus(args.workdir, at, args.shards, args.seed)
    r2 = results.get((at, 2)) or audit(corpus, args.workdir / f"out-{at}-w2", 2)
    if sw != 2:
        print(line(f"{at / 1e6:g}M, 2 workers", r2), flush=True)
    r1 = results[(at, 1)]
    print(f"2 workers vs 1: {r1['wall'] / r2['wall']:.2f}x faster (wall)")
    same = same_counts(args.workdir / f"out-{at}-w1", args.workdir / f"out-{at}-w2")
    print(f"same counts, 1 vs 2 workers: {same}")
    if args.ray:
        from genderscope_dev.ray_cluster import local_ray_cluster

        env = {"PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
        t0 = time.perf_counter()
        with local_ray_cluster(num_cpus=2, env=env) as address:
            start = time.perf_counter() - t0
            rr = audit(corpus, args.workdir / f"out-{at}-ray", 2, "ray", address)
        print(line(f"{at / 1e6:g}M, Ray (2 CPUs)", rr, local=False))
        print(
            f"Ray: cluster start {start:.1f} s; audit {rr['wall']:.1f} s vs {r2['wall']:.1f} s local "
            "(2 workers): "
            f"overhead {rr['wall'] - r2['wall']:+.1f} s; same counts: "
            f"{same_counts(args.workdir / f'out-{at}-w1', args.workdir / f'out-{at}-ray')}"
        )
    peak = max(max(r["rss_main_mb"], r["rss_worker_mb"]) for r in results.values())
    print(f"peak memory of any process over the sizes: {peak:.0f} MB")
    print("uptime:", uptime())


if __name__ == "__main__":
    main()
