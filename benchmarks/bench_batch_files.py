"""Client side of the batch route at scale: GEST x trials (default 5 trials = 106,950 requests) written as
a batch file, answered by a stand-in runner, read back into the store; target: writing + reading under
10 s and every phase under 500 MB peak RSS.  Printed against the online route's client CPU for the same
requests (a loopback fake server in its own process, no latency, concurrency 64, --no-cache).

Phases, each a CLI command in its own process (wall, CPU, peak RSS measured per process):

1. ``genderscope batch write gest --model openai:fake --trials T -o requests.jsonl``
2. (not timed: the runner) the fake's stand-in for ``vllm run-batch`` answers every line
3. ``genderscope batch read results.jsonl --model openai:fake``
4. ``genderscope run gest --model openai:fake --trials T``: must send 0 requests (all from the store)
5. (comparison) the same run online with ``--no-cache``

    .venv/bin/python benchmarks/bench_batch_files.py                       # full size
    .venv/bin/python benchmarks/bench_batch_files.py --limit 30 --trials 2  # smoke run
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "devtools"))  # genderscope_dev (dev rig)
if (ROOT.parent / "shared" / "data").is_dir():
    os.environ.setdefault("GENDERSCOPE_DATA_MIRROR", str(ROOT.parent / "shared" / "data"))
os.environ.setdefault("GENDERSCOPE_OFFLINE", "1")

from genderscope_dev import child_env
from genderscope_dev.fake_openai import FakeConfig, FakeOpenAIProcess

# runs the CLI in this child and reports its own peak RSS (KiB on Linux) on the last stderr line
MEASURED_CLI = (
    "import resource, sys\n"
    "from genderscope.cli.app import main\n"
    "sys.argv = ['genderscope'] + sys.argv[1:]\n"
    "try:\n    main()\nexcept SystemExit as exc:\n    code = exc.code\nelse:\n    code = 0\n"
    "print('MAXRSS_KB=%d' % resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\n"
    "sys.exit(code or 0)\n"
)


def measured(args: list[str], env: dict[str, str], cli: bool = True) -> dict[str, float]:
    """Wall s, CPU s and peak RSS MB of one child process (a CLI command, or ``python -m`` args)."""
    cmd = [sys.executable, "-c", MEASURED_CLI, *args] if cli else [sys.executable, *args]
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    dt = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"command failed ({proc.returncode}): {' '.join(args)}\n{proc.stderr[-3000:]}")
    rss = [ln for ln in proc.stderr.splitlines() if ln.startswith("MAXRSS_KB=")]
    return {
        "wall": dt,
        "cpu": (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime),
        "rss_mb": int(rss[-1].split("=")[1]) / 1024 if rss else float("nan"),
        "stdout": proc.stdout,  # type: ignore[dict-item]
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--trials", type=int, default=5)
    p.add_argument("--limit", type=int, default=None, help="GEST items (default: all)")
    p.add_argument("--skip-online", action="store_true", help="skip the online comparison (phase 5)")
    a = p.parse_args()
    size = ["--trials", str(a.trials)] + (["--limit", str(a.limit)] if a.limit else [])
    rows: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        env = {**os.environ, "GENDERSCOPE_HOME": str(tmp / "home")}
        req, res = tmp / "requests.jsonl", tmp / "results.jsonl"
        rows["batch write"] = measured(
            ["batch", "write", "gest", "--model", "openai:fake", *size, "-o", str(req)], env
        )
        n = sum(1 for _ in open(req, "rb"))
        rows["runner (not timed)"] = measured(
            ["-m", "genderscope_dev.fake_openai_batch", "-i", str(req), "-o", str(res)],
            child_env(env),
            cli=False,
        )
        rows["batch read"] = measured(["batch", "read", str(res), "--model", "openai:fake"], env)
        with FakeOpenAIProcess(FakeConfig(latency=0.0)) as srv:
            base = ["run", "gest", "--model", "openai:fake", *size, "--base-url", srv.url, "--no-progress"]
            rows["run from store"] = measured([*base, "--out", str(tmp / "cached")], env)
            manifest = json.loads((tmp / "cached" / "run.json").read_text())
            sent = manifest["tasks"]["gest"]["counts"]["requests"]
            if srv.stats()["requests"] or sent:
                raise SystemExit(f"the run after `batch read` sent {sent} requests; expected 0")
            if not a.skip_online:
                online = [*base, "--concurrency", "64", "--no-cache", "--out", str(tmp / "online")]
                rows["online, --no-cache"] = measured(online, env)
                # --no-cache shares nothing, not even identical (request, trial) pairs within the run; the
                # batch file holds each store key once
                online_sent = json.loads((tmp / "online" / "run.json").read_text())["tasks"]["gest"]["counts"]
                if srv.stats()["requests"] != online_sent["requests"] or online_sent["requests"] < n:
                    raise SystemExit(f"online run sent {srv.stats()['requests']} requests; its run.json says "
                                     f"{online_sent['requests']}, the batch file has {n} keys")
        size_mb = req.stat().st_size / 1e6, res.stat().st_size / 1e6
    print(f"GEST, {n:,} requests; requests.jsonl {size_mb[0]:.1f} MB, results.jsonl {size_mb[1]:.1f} MB")
    print(f"{'phase':<22} {'wall s':>8} {'CPU s':>8} {'peak MB':>8}")
    for name, r in rows.items():
        print(f"{name:<22} {r['wall']:>8.2f} {r['cpu']:>8.2f} {r['rss_mb']:>8.0f}")
    end_to_end = rows["batch write"]["wall"] + rows["batch read"]["wall"]
    peak = max(rows["batch write"]["rss_mb"], rows["batch read"]["rss_mb"])
    print(
        f"write + read: {end_to_end:.2f} s wall (target < 10 s), peak {peak:.0f} MB (target < 500 MB): "
        + ("OK" if end_to_end < 10 and peak < 500 else "OVER TARGET")
    )
    if "online, --no-cache" in rows:
        cpu_batch = rows["batch write"]["cpu"] + rows["batch read"]["cpu"]
        cpu_online = rows["online, --no-cache"]["cpu"]
        print(
            f"client CPU: batch write + read {cpu_batch:.2f} s vs online route {cpu_online:.2f} s "
            f"({cpu_online / max(cpu_batch, 1e-9):.1f}x)"
        )


if __name__ == "__main__":
    main()
