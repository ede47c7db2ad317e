"""Null flag rate of ``compare --paired`` for one scored-task metric under several interval rules, from many
null pairs at a small cost: K runs ``random:S`` (S = 1 … K, one run each, the same run seed) are read back
once, and every two of them form a null pair (K·(K−1)/2 pairs; they share runs, so the pairs are not
independent, but each is a valid null pair).  Each pair's change is resampled by
:func:`genderscope.stats.rules.rule_intervals` with the pair's own seed, exactly as ``paired_task`` does.

    .venv/bin/python benchmarks/bench_paired_null_pairs.py [--task crows-pairs] [--metric likelihood_diff]
        [--limit 120] [--runs 40] [--n-boot 1000]

Prints, per rule, the pairs and the share whose 95 % interval of the change excludes 0.
"""

from __future__ import annotations

import argparse
import itertools
import os
import tempfile
from pathlib import Path

if Path("/work/shared/data").is_dir():
    os.environ.setdefault("GENDERSCOPE_DATA_MIRROR", "/work/shared/data")
os.environ.setdefault("GENDERSCOPE_OFFLINE", "1")
os.environ.setdefault("GENDERSCOPE_HOME", tempfile.mkdtemp(prefix="gs-paired-null-"))

import numpy as np

import genderscope
from genderscope.core.paired import _scores
from genderscope.core.reparse import read_manifest
from genderscope.stats.rules import IntervalRule, rule_intervals

RULES = {
    "percentile (task rule)": IntervalRule(),
    "jackknife-t (= t on per-unit differences)": IntervalRule(jackknife_metrics=("*",)),
}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--task", default="crows-pairs")
    ap.add_argument("--metric", default="likelihood_diff")
    ap.add_argument("--limit", type=int, default=120)
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--n-boot", type=int, default=1000)
    ap.add_argument("--rules", default=",".join(RULES))
    args = ap.parse_args(argv)
    scored = []
    with tempfile.TemporaryDirectory(prefix="gs-null-pairs-") as tmp:
        for s in range(1, args.runs + 1):
            out = Path(tmp) / f"r{s}"
            genderscope.run(args.task, f"random:{s}", limit=args.limit, no_cache=True, out=out)
            scored.append(_scores(out, args.task, read_manifest(out)))
    task = scored[0][0]
    n = scored[0][1].n
    for name in args.rules.split(","):
        flagged = pairs = 0
        for i, j in itertools.combinations(range(len(scored)), 2):
            sa, sb = scored[i][1], scored[j][1]

            def change(C: np.ndarray) -> dict[str, np.ndarray]:
                return {args.metric: task.compute(sb, C)[args.metric] - task.compute(sa, C)[args.metric]}

            _, _, cols = rule_intervals(change, n, np.arange(n), args.n_boot, pairs + 1, RULES[name])
            lo, hi, _ = cols[0]
            pairs += 1
            flagged += lo is not None and not lo <= 0 <= hi
        print(f"{args.task} {args.metric} limit {args.limit}: {name:<44} {pairs:>5} pairs, "
              f"{flagged:>4} flagged = {flagged / pairs:.1%}", flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
