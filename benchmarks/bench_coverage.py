"""Coverage of the 95 % intervals on null models: the share of seeds whose interval contains the metric's
no-bias value (``MetricDoc.neutral``), for every metric that has one, at ``--limit 30`` and at full size.

Each seed ``s`` is one run in this process (``genderscope.run``, nothing cached or written): the null
model ``random:s`` (its answers depend on its seed) and the run seed ``s`` (the items drawn under
``--limit`` and the bootstrap resamples).  ``bbq`` and ``direct`` run on the unbiased test model
(``tests/unbiased_model.py``): uniform guessing is itself the harm these two measure, so the random
model is not null for them.

    .venv/bin/python benchmarks/bench_coverage.py [--seeds 200] [--sizes 30,full] [--tasks gest,bbq]
        [--budget-s 1800] [--json out.json]

Prints one row per (task, metric, size): seeds run, seeds with an interval, coverage, and the target
(>= 93 %).  ``--budget-s`` stops a (task, size) after that many seconds and prints the seeds it ran.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import math
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if (ROOT.parent / "shared" / "data").is_dir():
    os.environ.setdefault("GENDERSCOPE_DATA_MIRROR", str(ROOT.parent / "shared" / "data"))
if Path("/work/shared/data").is_dir():
    os.environ.setdefault("GENDERSCOPE_DATA_MIRROR", "/work/shared/data")
os.environ.setdefault("GENDERSCOPE_OFFLINE", "1")
os.environ.setdefault("GENDERSCOPE_HOME", tempfile.mkdtemp(prefix="gs-coverage-"))
sys.path.insert(0, str(ROOT / "tests"))

import genderscope
from genderscope import catalogue as registry
from genderscope.core import lookup

TARGET = 0.93
#: tasks whose harm is the guessing itself: run on the unbiased test model instead of ``random``
UNBIASED_MODEL_TASKS = ("bbq", "direct")
#: tasks run by default (those with a metric that has a no-bias value)
DEFAULT_TASKS = tuple(
    t for t in registry.TASKS if t not in ("dreaddit", "isear", "cooccurrence-amplification")
)


def null_metrics(task: str) -> dict[str, float]:
    """Metric name (or pattern such as ``diff_*``) -> no-bias value, for every metric doc that has one."""
    docs = lookup.task_class(task).metric_docs
    return {n: float(d.neutral) for n, d in docs.items() if d.neutral is not None and d.sign != 0}


def model_for(task: str, seed: int) -> str:
    """The null model spec of ``task`` for ``seed``."""
    if task in UNBIASED_MODEL_TASKS:
        import unbiased_model

        unbiased_model.register()
        return f"{unbiased_model.KIND}:{seed}"
    return f"random:{seed}"


@dataclass
class Tally:
    """Per metric: seeds run, seeds with an interval, seeds whose interval contains the neutral value,
    seeds whose interval excludes the value itself, and the widths of the intervals."""

    runs: int = 0
    with_ci: int = 0
    covered: int = 0
    value_outside: int = 0
    widths: list[float] = field(default_factory=list)

    @property
    def coverage(self) -> float:
        return self.covered / self.with_ci if self.with_ci else math.nan


def one_seed(task: str, limit: int | None, seed: int) -> dict[str, Any]:
    """The metrics of one null-model run: name -> (value, ci_low, ci_high)."""
    res = genderscope.run(task, model_for(task, seed), limit=limit, seed=seed, no_cache=True, write=False)
    return {n: (m.value, m.ci_low, m.ci_high) for n, m in res.metrics[task].items()}


def measure(
    task: str, limit: int | None, seeds: int, budget_s: float = math.inf, first_seed: int = 1
) -> tuple[dict[str, Tally], int, float]:
    """Tallies per metric of ``task`` at ``limit`` over up to ``seeds`` seeds (stops after ``budget_s``);
    returns (tallies, seeds run, seconds)."""
    wanted = null_metrics(task)
    tallies: dict[str, Tally] = {}
    t0 = time.perf_counter()
    done = 0
    for seed in range(first_seed, first_seed + seeds):
        if time.perf_counter() - t0 > budget_s:
            break
        for name, (v, lo, hi) in one_seed(task, limit, seed).items():
            neutral = next((x for p, x in wanted.items() if fnmatch.fnmatchcase(name, p)), None)
            if neutral is None:
                continue
            t = tallies.setdefault(name, Tally())
            t.runs += 1
            if lo is None or hi is None or not (math.isfinite(lo) and math.isfinite(hi)):
                continue
            t.with_ci += 1
            t.covered += int(lo <= neutral <= hi)
            t.value_outside += int(v is not None and not lo <= v <= hi)
            t.widths.append(hi - lo)
        done += 1
    return tallies, done, time.perf_counter() - t0


def rows(task: str, size: str, tallies: dict[str, Tally], done: int, secs: float) -> list[dict[str, Any]]:
    out = []
    for name, t in tallies.items():
        out.append(
            {
                "task": task,
                "metric": name,
                "size": size,
                "seeds": done,
                "with_ci": t.with_ci,
                "coverage": t.coverage,
                "mean_width": sum(t.widths) / len(t.widths) if t.widths else math.nan,
                "value_outside": t.value_outside,
                "seconds": secs,
                "ok": bool((t.with_ci == 0 or t.coverage >= TARGET) and not t.value_outside),
            }
        )
    return out


def print_row(r: dict[str, Any]) -> None:
    cov = "   –  " if math.isnan(r["coverage"]) else f"{100 * r['coverage']:5.1f}%"
    flag = "" if r["ok"] else "  < 93 %" if r["coverage"] < TARGET else "  value outside its CI"
    print(
        f"{r['task']:<22} {r['metric']:<28} {r['size']:>5} {r['seeds']:>5} {r['with_ci']:>5} {cov} "
        f"{r['mean_width']:>9.4g} {r['seconds']:>7.1f}s{flag}",
        flush=True,
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=200)
    ap.add_argument("--sizes", default="30,full", help="comma list of limits; full = no limit")
    ap.add_argument("--tasks", default=",".join(DEFAULT_TASKS))
    ap.add_argument("--budget-s", type=float, default=math.inf, help="seconds per (task, size)")
    ap.add_argument("--first-seed", type=int, default=1)
    ap.add_argument("--json", type=Path, default=None, help="also write the rows to this file")
    args = ap.parse_args(argv)
    print(
        f"{'task':<22} {'metric':<28} {'size':>5} {'seeds':>5} {'w/ CI':>5} {'cover':>6} {'width':>9} "
        f"{'time':>8}"
    )
    all_rows: list[dict[str, Any]] = []
    for task in args.tasks.split(","):
        for size in args.sizes.split(","):
            limit = None if size == "full" else int(size)
            tallies, done, secs = measure(task, limit, args.seeds, args.budget_s, args.first_seed)
            for r in rows(task, size, tallies, done, secs):
                print_row(r)
                all_rows.append(r)
            if args.json:
                args.json.write_text(json.dumps(all_rows, indent=1))
    bad = [r for r in all_rows if not r["ok"]]
    print(f"{len(all_rows) - len(bad)} of {len(all_rows)} rows at or above {100 * TARGET:.0f} % coverage")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
