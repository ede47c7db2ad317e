"""A fully cached rerun of full GEST (21,390 prompts) through the CLI: target under 3 s wall.

Fills a fresh GENDERSCOPE_HOME with one uncached run against the loopback server (own
process, no latency, concurrency 64), then times the same `genderscope run gest` command
again: every answer comes from the store (the server must see zero requests).  Prints
both wall times and their ratio, and `--model random` (no store, no HTTP) for reference.

    .venv/bin/python benchmarks/bench_cached_rerun.py
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "devtools"))  # genderscope_dev (dev rig)
if (ROOT.parent / "shared" / "data").is_dir():
    os.environ.setdefault("GENDERSCOPE_DATA_MIRROR", str(ROOT.parent / "shared" / "data"))
os.environ.setdefault("GENDERSCOPE_OFFLINE", "1")

from genderscope_dev.fake_openai import FakeConfig, FakeOpenAIProcess

CLI = [sys.executable, "-m", "genderscope.cli"]


def wall(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the child) of one command."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    dt = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"command failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stderr}")
    return dt, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAIProcess(FakeConfig(latency=0.0)) as srv:
        env = {**os.environ, "GENDERSCOPE_HOME": str(Path(tmp) / "home")}
        cmd = CLI + [
            "run",
            "gest",
            "--model",
            "openai:fake",
            "--base-url",
            srv.url,
            "--concurrency",
            "64",
            "--no-progress",
        ]
        first = wall(cmd + ["--out", str(Path(tmp) / "first")], env)
        sent_first = srv.stats()["requests"]
        srv.reset()
        cached = [wall(cmd + ["--out", str(Path(tmp) / f"cached{i}")], env) for i in range(3)]
        sent_cached = srv.stats()["requests"]
        random_model = wall(
            CLI + ["run", "gest", "--model", "random", "--no-progress", "--out", str(Path(tmp) / "random")],
            env,
        )
    best = min(cached)
    load = os.getloadavg()[0]
    print(
        "full GEST through `genderscope run gest --model openai:fake --base-url <loopback>` (whole command; "
        f"load average {load:.1f} on {os.cpu_count()} cores)"
    )
    print(f"{'run':40} {'wall s':>7} {'CPU s':>6} {'requests':>9}")
    print(f"{'uncached (fills the store, c=64, 0 ms)':40} {first[0]:7.2f} {first[1]:6.2f} {sent_first:9d}")
    print(f"{'fully cached rerun (best of 3)':40} {best[0]:7.2f} {best[1]:6.2f} {sent_cached:9d}")
    print(f"{'  (all 3 cached reruns, wall)':40} {' '.join(f'{c[0]:.2f}' for c in cached)}")
    print(f"{'--model random (reference)':40} {random_model[0]:7.2f} {random_model[1]:6.2f} {'-':>9}")
    print(
        f"cached rerun is {first[0] / best[0]:.1f}x faster than the uncached run; target < 3 s wall -> "
        f"{'met' if best[0] < 3 else 'MISSED'}; "
        f"zero requests on rerun -> {'yes' if sent_cached == 0 else 'NO'}"
    )


if __name__ == "__main__":
    main()
