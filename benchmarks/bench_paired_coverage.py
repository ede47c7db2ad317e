"""Coverage of ``compare --paired`` on pairs of null models: for seeds S, the runs ``random:S`` and
``random:S+1000`` (unbiased and unrelated, so every metric's true change is 0) are compared with
:func:`genderscope.core.paired.paired_task` (bootstrap seed S), and each metric's share of pairs whose
95 % interval of the change excludes 0 is printed (target <= 7 %, i.e. coverage of 0 >= 93 %).

Each run is written once to a temporary folder (``genderscope.run``, no cache) and read back through the
replay path, as ``genderscope compare --paired`` does.

    .venv/bin/python benchmarks/bench_paired_coverage.py [--seeds 100] [--sizes 120,full]
        [--tasks crows-pairs,stereoset] [--n-boot 1000] [--budget-s 600] [--rules task,plain]
        [--json out.json]

Any paired task: scored-layer ones and those that declare ``paired_units`` (e.g. ``--tasks
winobias-lm,gest-likelihood,gest,jobs-lum --rules task``).  Prints one row per (task, size, metric), then
one per rule over all metrics pooled: pairs, pairs with an interval, pairs marked changed (interval excludes
0) and that share, under the task's own rule (``[task]``) and under the plain percentile bootstrap over the
clusters that ``compare --paired`` used before issue 29 (``[plain]``), on the same runs.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if Path("/work/shared/data").is_dir():
    os.environ.setdefault("GENDERSCOPE_DATA_MIRROR", "/work/shared/data")
os.environ.setdefault("GENDERSCOPE_OFFLINE", "1")
os.environ.setdefault("GENDERSCOPE_HOME", tempfile.mkdtemp(prefix="gs-paired-coverage-"))

import genderscope
from genderscope.core.paired import CHANGED_DOWN, CHANGED_UP, paired_task
from genderscope.stats.rules import IntervalRule

#: the rule before issue 29: a percentile bootstrap over the clusters whenever there are 2 or more
PLAIN = IntervalRule(min_units=2, few_units=0)

TARGET_EXCLUDED = 0.07


def write_run(task: str, model: str, limit: int | None, seed: int, out: Path) -> Path:
    """One run of ``task`` on ``model`` written to ``out``."""
    genderscope.run(task, model, limit=limit, seed=seed, no_cache=True, out=out)
    return out


def measure(
    task: str,
    limit: int | None,
    seeds: int,
    n_boot: int,
    budget_s: float,
    first_seed: int,
    tmp: Path,
    rules: tuple[str, ...] = ("task",),
) -> tuple[dict[str, dict[str, Any]], int, float]:
    """Per metric and rule (``task``: the task's own small-sample rule, ``plain``: :data:`PLAIN`) on the same
    runs: pairs, pairs with an interval, pairs marked changed; (tallies, pairs run, seconds)."""
    tallies: dict[str, dict[str, Any]] = {}
    t0 = time.perf_counter()
    done = 0
    for s in range(first_seed, first_seed + seeds):
        if time.perf_counter() - t0 > budget_s:
            break
        tag = f"{task}-{limit}-{s}"
        a = write_run(task, f"random:{s}", limit, s, tmp / f"{tag}-a")
        b = write_run(task, f"random:{s + 1000}", limit, s, tmp / f"{tag}-b")
        for rule in rules:
            for c in paired_task(a, b, task, n_boot=n_boot, seed=s, rule=None if rule == "task" else PLAIN):
                t = tallies.setdefault(f"{c.metric} [{rule}]", {"pairs": 0, "with_ci": 0, "changed": 0})
                t["pairs"] += 1
                t["with_ci"] += int(c.ci_low is not None)
                t["changed"] += int(c.state in (CHANGED_UP, CHANGED_DOWN))
        done += 1
    return tallies, done, time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=100)
    ap.add_argument("--sizes", default="120", help="comma list of limits; full = no limit")
    ap.add_argument("--tasks", default="crows-pairs,stereoset")
    ap.add_argument("--n-boot", type=int, default=1000)
    ap.add_argument("--budget-s", type=float, default=math.inf, help="seconds per (task, size)")
    ap.add_argument("--first-seed", type=int, default=1)
    ap.add_argument("--rules", default="task,plain", help="task (the task's rule), plain (before issue 29)")
    ap.add_argument("--json", type=Path, default=None, help="also write the rows to this file")
    args = ap.parse_args(argv)
    rows: list[dict[str, Any]] = []
    print(f"{'task':<12} {'size':>5} {'metric':<36} {'pairs':>5} {'ci':>5} {'changed':>7} {'share':>6}  ok")
    with tempfile.TemporaryDirectory(prefix="gs-paired-runs-") as tmp:
        for task in args.tasks.split(","):
            for size in args.sizes.split(","):
                limit = None if size == "full" else int(size)
                tallies, done, secs = measure(
                    task,
                    limit,
                    args.seeds,
                    args.n_boot,
                    args.budget_s,
                    args.first_seed,
                    Path(tmp),
                    tuple(args.rules.split(",")),
                )
                pooled: dict[str, dict[str, Any]] = {}
                for name, t in tallies.items():
                    p = pooled.setdefault(f"(all metrics) [{name.rpartition('[')[2]}", dict.fromkeys(t, 0))
                    for k in t:
                        p[k] += t[k]
                for name, t in {**tallies, **pooled}.items():
                    share = t["changed"] / t["pairs"] if t["pairs"] else math.nan
                    ok = "yes" if share <= TARGET_EXCLUDED else "NO"
                    rows.append({"task": task, "size": size, "metric": name, **t, "share": share})
                    counts = f"{t['pairs']:>5} {t['with_ci']:>5} {t['changed']:>7}"
                    print(f"{task:<12} {size:>5} {name:<36} {counts} {share:>6.1%}  {ok}")
                print(f"# {task} size {size}: {done} pairs in {secs:.0f} s", flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
