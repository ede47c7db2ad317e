"""Null flag rate of ``compare --paired`` on crows-pairs ``likelihood_diff`` under several interval rules,
by simulating the random model exactly (many pairs at a small cost).

The random model answers a ``loglikelihood`` request with, per continuation, the sum of its whitespace
tokens' draws, each uniform in (−5, −1] nats, independent of everything else
(``backends/random_model.py``).  One run ``random:1`` of the task gives each item's token counts (the
Scores' ``n_tokens``); each simulated pair is two independent sets of those sums over the same items, and
its change of ``likelihood_diff`` (mean |LL(sent_more) − LL(sent_less)|) is resampled by
:func:`genderscope.stats.rules.rule_intervals` with the pair's own seed, as ``paired_task`` does.

    .venv/bin/python benchmarks/bench_paired_null_pairs.py [--limit 120] [--pairs 2000] [--n-boot 1000]

Prints, per rule, the pairs and the share whose 95 % interval of the change excludes 0 (with its binomial
standard error).
"""

from __future__ import annotations

import argparse
import math
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
    "percentile (the task's rule)": IntervalRule(),
    "jackknife-t (= t on the per-pair differences)": IntervalRule(jackknife_metrics=("*",)),
}


def token_counts(task: str, limit: int) -> np.ndarray:
    """N × 2 whitespace-token counts of each item's two sentences, from one ``random:1`` run."""
    with tempfile.TemporaryDirectory(prefix="gs-null-pairs-") as tmp:
        out = Path(tmp) / "r"
        genderscope.run(task, "random:1", limit=limit, no_cache=True, out=out)
        _task, s = _scores(out, task, read_manifest(out))
        return np.asarray(s.n_tokens[:, :2], dtype=np.int64)


def simulate(counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One run's |LL(more) − LL(less)| per item: each token's log-probability uniform in (−5, −1]."""
    ll = [np.array([np.sum(-1.0 - 4.0 * rng.random(m)) for m in counts[:, k]]) for k in (0, 1)]
    return np.abs(ll[0] - ll[1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--task", default="crows-pairs")
    ap.add_argument("--limit", type=int, default=120)
    ap.add_argument("--pairs", type=int, default=2000)
    ap.add_argument("--n-boot", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    counts = token_counts(args.task, args.limit)
    n = len(counts)
    rng = np.random.default_rng(args.seed)
    flagged = dict.fromkeys(RULES, 0)
    for p in range(args.pairs):
        x = simulate(counts, rng) - simulate(counts, rng)  # after − before, per item

        def change(C: np.ndarray, x: np.ndarray = x) -> dict[str, np.ndarray]:
            return {"likelihood_diff": (C @ x) / C.sum(axis=1)}

        for name, rule in RULES.items():
            lo, hi, _ = rule_intervals(change, n, np.arange(n), args.n_boot, p + 1, rule)[2][0]
            flagged[name] += lo is not None and not lo <= 0 <= hi
    for name, k in flagged.items():
        share = k / args.pairs
        se = math.sqrt(share * (1 - share) / args.pairs)
        print(f"{args.task} likelihood_diff limit {args.limit}, {n} items: {name:<46} {args.pairs} pairs, "
              f"{k} flagged = {share:.1%} (s.e. {se:.1%})", flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
