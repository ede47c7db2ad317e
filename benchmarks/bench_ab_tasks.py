"""A/B of every task against another source tree (the commit before): CPU seconds per `genderscope run`.

Each task runs through the CLI from both trees in turn, alternating A, B, A, B, … (so machine noise hits
both alike), with a fresh output folder and ``--no-cache`` (nothing comes from the response store).  The
figure per side is the lowest CPU time (user + system of the child process, s) of ``--repeats`` runs;
the ratio B / A above ``--tolerance`` flags a slowdown.  Models: ``random`` for every task, and with
``--hf`` tiny random hf-causal and hf-mlm models for the likelihood tasks (built once, shared), and
with ``--model SPEC`` that model for every task of ``--tasks`` only (``--run-args`` adds run options, e.g.
``"--mode lm-eval"``; ``--limit 0`` runs every item).  Wall seconds (lowest of the runs) print beside CPU.

    git worktree add /tmp/ab-base <commit-before>
    PYTHONPATH=src:devtools .venv/bin/python benchmarks/bench_ab_tasks.py --base /tmp/ab-base/src --hf
    ... --tasks crows-pairs --model hf-causal:/path/to/smollm2-fp32 --run-args "--mode lm-eval" --limit 0
"""

from __future__ import annotations

import argparse
import os
import resource
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if (ROOT.parent / "shared" / "data").is_dir():
    os.environ.setdefault("GENDERSCOPE_DATA_MIRROR", str(ROOT.parent / "shared" / "data"))
os.environ.setdefault("GENDERSCOPE_OFFLINE", "1")

LIKELIHOOD_TASKS = (
    "crows-pairs", "stereoset", "winogender", "winogenerated", "bbq-likelihood",
    "discrim-eval-likelihood", "winobias-lm", "gest-likelihood", "abc", "dawinobias",
)
MLM_TASKS = ("crows-pairs", "stereoset", "winogender", "winobias-lm", "dawinobias", "abc")


def cli_cpu(src: Path, args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one ``genderscope`` command run from source tree ``src``."""
    code = (  # the CLI's entry point in either tree (cli/app.py now; cli.py before the house plan)
        "try:\n    from genderscope.cli.app import main\n"
        "except ModuleNotFoundError:\n    from genderscope.cli import main\nmain()"
    )
    run_env = {**env, "PYTHONPATH": str(src)}
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", code, *args], env=run_env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{src}: genderscope {' '.join(args)} failed:\n{proc.stderr[-2000:]}")
    return (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime), wall


def task_names(src: Path, env: dict[str, str]) -> list[str]:
    """Every registered task, read from the source tree's registry."""
    code = "from genderscope.api import list_tasks; print(chr(10).join(list_tasks()))"
    out = subprocess.run([sys.executable, "-c", code], env={**env, "PYTHONPATH": str(src)},
                         capture_output=True, text=True, check=True)
    return out.stdout.split()


def tiny_models(work: Path, env: dict[str, str]) -> dict[str, str]:
    """Build a tiny random causal and masked LM once (from this tree's demo_models); their specs."""
    code = (
        "import sys; from pathlib import Path;"
        "from genderscope.data.registry import DataRegistry;"
        "from genderscope.demo_models import build_tiny_causal, build_tiny_mlm;"
        "from genderscope.demo_models import likelihood_task_texts, words_of;"
        "w = words_of(likelihood_task_texts(DataRegistry()));"
        "build_tiny_causal(Path(sys.argv[1]) / 'causal', w); build_tiny_mlm(Path(sys.argv[1]) / 'mlm', w)"
    )
    subprocess.run([sys.executable, "-c", code, str(work)], env={**env, "PYTHONPATH": str(ROOT / "src")},
                   check=True)
    return {"hf-causal": f"hf-causal:{work / 'causal'}", "hf-mlm": f"hf-mlm:{work / 'mlm'}"}


def cases(tasks: list[str], models: dict[str, str], model: str = "") -> list[tuple[str, str]]:
    """(task, model spec) pairs: random for all, tiny hf models for the likelihood tasks; only ``model``
    for every task when it is given."""
    if model:
        return [(t, model) for t in tasks]
    out = [(t, "random") for t in tasks]
    if "hf-causal" in models:
        out += [(t, models["hf-causal"]) for t in tasks if t in LIKELIHOOD_TASKS]
        out += [(t, models["hf-mlm"]) for t in tasks if t in MLM_TASKS]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", type=Path, required=True, help="the other tree's src/ folder (A)")
    ap.add_argument("--limit", type=int, default=60, help="items per task (default 60)")
    ap.add_argument("--repeats", type=int, default=3, help="runs per side; the lowest CPU counts")
    ap.add_argument("--tasks", default="", help="comma-separated tasks (default: every task of both trees)")
    ap.add_argument("--hf", action="store_true", help="also tiny hf-causal / hf-mlm runs of likelihood tasks")
    ap.add_argument("--tolerance", type=float, default=1.10, help="flag B/A CPU above this (default 1.10)")
    ap.add_argument("--model", default="", help="run only this model spec on every task of --tasks")
    ap.add_argument("--run-args", default="", help='extra `run` options for every run, e.g. "--mode lm-eval"')
    args = ap.parse_args()
    if args.model and not args.tasks:
        raise SystemExit("--model needs --tasks (the tasks that model can answer)")
    print(f"uptime: {os.popen('uptime').read().strip()}")
    work = Path(tempfile.mkdtemp(prefix="gs-ab-"))
    env = {**os.environ, "GENDERSCOPE_HOME": str(work / "home")}
    trees = {"A": args.base.resolve(), "B": ROOT / "src"}
    tasks = args.tasks.split(",") if args.tasks else sorted(
        set(task_names(trees["A"], env)) & set(task_names(trees["B"], env)))
    models = tiny_models(work / "models", env) if args.hf else {}
    print(f"A = {trees['A']}\nB = {trees['B']}")
    print(f"--limit {args.limit or 'all'}, lowest CPU and wall of {args.repeats} runs per side")
    print(f"{'task':28} {'model':10} {'A cpu':>8} {'B cpu':>8} {'B/A':>6} {'A wall':>8} {'B wall':>8}")
    flagged, total = [], {"A": 0.0, "B": 0.0}
    extra = shlex.split(args.run_args) + (["--limit", str(args.limit)] if args.limit else [])
    for task, spec in cases(tasks, models, args.model):
        best = {"A": float("inf"), "B": float("inf")}
        wall = {"A": float("inf"), "B": float("inf")}
        for i in range(args.repeats):
            for side in ("A", "B") if i % 2 == 0 else ("B", "A"):
                out = work / f"out-{side}" / f"{task}-{spec.split(':')[0]}-{i}"  # a new folder every run
                cmd = ["run", task, "--model", spec, *extra, "--no-cache", "--no-progress", "--out", str(out)]
                cpu, secs = cli_cpu(trees[side], cmd, env)
                best[side], wall[side] = min(best[side], cpu), min(wall[side], secs)
        ratio = best["B"] / best["A"]
        total["A"] += best["A"]
        total["B"] += best["B"]
        kind = spec.split(":")[0]
        mark = "  slower" if ratio > args.tolerance else ""
        print(f"{task:28} {kind:10} {best['A']:8.2f} {best['B']:8.2f} {ratio:6.2f}"
              f" {wall['A']:8.2f} {wall['B']:8.2f}{mark}", flush=True)
        if mark:
            flagged.append(f"{task} ({kind})")
    print(f"{'all':28} {'':10} {total['A']:8.2f} {total['B']:8.2f} {total['B'] / total['A']:6.2f}")
    print(f"uptime: {os.popen('uptime').read().strip()}")
    print("slower than tolerance: " + (", ".join(flagged) if flagged else "none"))


if __name__ == "__main__":
    main()
