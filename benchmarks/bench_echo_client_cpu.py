"""Client CPU per ``loglikelihood`` request of ``openai-completions:`` over a loopback server with
vLLM-shaped echo bodies (every prompt token's ``tokens``/``token_logprobs``/``top_logprobs``/``text_offset``).

The server is the dev rig's fake OpenAI server in its own process (:class:`FakeOpenAIProcess`), scoring
with a tiny GPT-2-style model whose word-level vocabulary holds every word of the benchmarks' prompts (so
echoes have one token per word and punctuation mark, as long as the real prompts).  For each benchmark
(``--mode lm-eval``, first ``--limit`` documents): a run, then the same run answered from the response
store; client CPU per request = (CPU of the run - CPU of the stored run) / requests, CPU =
``time.process_time()`` of this process (HTTP, JSON, echo mapping, store writes; the server's CPU is not
in it, though other processes on a loaded machine still move it by several %); the least CPU of
``--repeat`` runs and of as many stored runs.  Prints CPU seconds too, and the spread of the same figure
taken per pair (run r - stored run r): its median and range, ms per request.  Both runs also build and
score the benchmark (BBQ at ``--limit 100``: ~0.35 s of CPU, most of it off the main thread), so on a
loaded machine one pair moves by tens of ms: compare builds on several pairs (``--limit 200 --repeat 5``
or more), not on one run.

    .venv/bin/python benchmarks/bench_echo_client_cpu.py [--limit 60] [--concurrency 16] [--repeat 2]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "devtools"))  # genderscope_dev (dev rig)
if (ROOT.parent / "shared" / "data").is_dir():
    os.environ.setdefault("GENDERSCOPE_DATA_MIRROR", str(ROOT.parent / "shared" / "data"))
os.environ.setdefault("GENDERSCOPE_OFFLINE", "1")

TASKS = "crows-pairs,winogender,bbq-likelihood,discrim-eval-likelihood"


def run(task: str, model: str, home: Path, out: Path, limit: int, **options: Any) -> dict[str, Any]:
    """One ``run_tasks`` with GENDERSCOPE_HOME = ``home``: CPU s of this process, requests, echoes."""
    from genderscope.core.engine import run_tasks
    from genderscope.core.runlog import read_run_log

    os.environ["GENDERSCOPE_HOME"] = str(home)
    c0 = time.process_time()
    res = run_tasks(
        [task], model, limit=limit, out=out, progress=False, options={"mode": "lm-eval", **options}
    )
    used = time.process_time() - c0
    counts = read_run_log(res.out_dir)[0].tasks[task].counts
    if counts.get("errors"):
        raise SystemExit(f"{task} on {model}: {counts['errors']} failed attempts")
    echoes = 0
    with open(Path(res.out_dir) / "attempts.jsonl", encoding="utf-8") as fh:
        for line in fh:
            resp = json.loads(line).get("response")
            if isinstance(resp, dict) and isinstance(resp.get("logprobs"), list):
                echoes += len(resp["logprobs"])
    return {"cpu": used, "requests": counts["requests"], "echoes": echoes, "out": res.out_dir}


def vocabulary(tasks: list[str], limit: int, tmp: Path) -> list[str]:
    """Every word of the prompts the benchmarks send (read from a run on the null model)."""
    from genderscope.demo_models import words_of

    texts = ["The nurse said that she"]  # the start-up probe's text
    for t in tasks:
        got = run(t, "random", tmp / "voc", tmp / f"voc-{t}", limit)
        with open(Path(got["out"]) / "attempts.jsonl", encoding="utf-8") as fh:
            texts += [str(json.loads(line).get("prompt", "")) for line in fh]
    return words_of(texts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--limit", type=int, default=60, help="documents per benchmark")
    ap.add_argument("--tasks", default=TASKS, help="comma-separated benchmarks")
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--prompts-per-request", type=int, default=None, help="backend option (default: its own)")
    ap.add_argument(
        "--repeat", type=int, default=3, help="run + stored-run pairs per benchmark (least CPU of each)"
    )
    args = ap.parse_args()
    tasks = [t for t in args.tasks.split(",") if t]

    from genderscope.demo_models import build_tiny_causal
    from genderscope_dev.fake_openai import FakeConfig, FakeOpenAIProcess

    import genderscope

    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        model_dir = build_tiny_causal(tmp / "tiny", vocabulary(tasks, args.limit, tmp), n_positions=1024)
        with FakeOpenAIProcess(FakeConfig(model_dir=str(model_dir))) as srv:
            opts = {"base_url": srv.url, "start_token": "<s>", "concurrency": args.concurrency}
            if args.prompts_per_request:
                opts["prompts_per_request"] = args.prompts_per_request
            run(tasks[0], "openai-completions:tiny", tmp / "warm", tmp / "warm-a", 2, **opts)  # imports
            print(f"client: {Path(genderscope.__file__).parent}")
            print(f"{'benchmark':<26}{'requests':>9}{'echoes':>8}{'CPU s run':>10}{'CPU s stored':>13}"
                  f"{'ms/req':>8}{'ms/echo':>9}  per pair: median [min, max] ms/req")  # fmt: skip
            for t in tasks:
                runs, stored = [], []
                for r in range(args.repeat):
                    home = tmp / f"h-{t}-{r}"
                    runs.append(
                        run(t, "openai-completions:tiny", home, tmp / f"{t}-{r}-a", args.limit, **opts)
                    )
                    stored.append(
                        run(t, "openai-completions:tiny", home, tmp / f"{t}-{r}-b", args.limit, **opts)
                    )
                first, again = min(runs, key=lambda x: x["cpu"]), min(s["cpu"] for s in stored)
                ms = 1000 * (first["cpu"] - again) / max(1, first["requests"])
                per_echo = ms * first["requests"] / max(1, first["echoes"])
                pairs_of = zip(runs, stored)
                pairs = sorted(1000 * (a["cpu"] - b["cpu"]) / max(1, a["requests"]) for a, b in pairs_of)
                print(
                    f"{t:<26}{first['requests']:>9}{first['echoes']:>8}{first['cpu']:>10.3f}"
                    f"{again:>13.3f}{ms:>8.3f}{per_echo:>9.3f}  {statistics.median(pairs):.3f} "
                    f"[{pairs[0]:.3f}, {pairs[-1]:.3f}]",
                    flush=True,
                )


if __name__ == "__main__":
    main()
