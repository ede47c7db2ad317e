"""``abc`` (GenDa Lens ABC, all 13,680 sentences) over one fake ``/v1/completions`` server vs
``hf-causal`` in-process, on the same tiny causal LM: wall time, sentences/s, client CPU per request.

* ``openai-completions:tiny``: the fake server (:mod:`genderscope_dev.fake_openai`, echo log-probs
  computed by the tiny model on its own worker thread, queued requests batched into one forward pass)
  runs in its own process, so this process's CPU is the client's alone.  Client CPU per request =
  (CPU of the run - CPU of the same run answered from the response store) / requests: HTTP, JSON,
  mapping the echo to ``token_logprobs`` and the store write; task building, scoring and the
  bootstrap cancel out.  A one-item warm-up run of each backend (imports) comes first, unmeasured.
  The whole run's CPU per sentence is printed too.  Target <= 0.5 ms per request.
* ``hf-causal``: the same model directory in this process (torch threads: the backend's default).

Both runs use a fresh GENDERSCOPE_HOME; the per-sentence log-likelihoods of the two runs are compared
(max |difference| in nats).  This machine's cores are shared: treat wall times as indicative.

    .venv/bin/python benchmarks/bench_completions_abc.py [--limit N] [--concurrency 32]
"""

from __future__ import annotations

import sys
import argparse
import json
import os
import resource
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


def timed_run(model: str, home: Path, out: Path, limit: int | None, **options: Any) -> dict[str, Any]:
    """One ``run_tasks(["abc"], model)`` with GENDERSCOPE_HOME = ``home``: wall, CPU, attempts."""
    from genderscope.core.engine import run_tasks

    os.environ["GENDERSCOPE_HOME"] = str(home)
    c0, t0 = cpu(), time.perf_counter()
    res = run_tasks(["abc"], model, limit=limit, out=out, progress=False, options=options)
    wall, used = time.perf_counter() - t0, cpu() - c0
    recs = [json.loads(x) for x in (res.out_dir / "attempts.jsonl").read_text().splitlines()]
    errors = [r["error"] for r in recs if r.get("error")]
    if errors:
        raise SystemExit(f"{model}: {len(errors)} failed attempts, e.g. {errors[0]}")
    lls = {
        (r["item_id"], r["trial"]): sum(x for x in r["response"]["logprobs"] if x is not None)
        for r in recs
        if isinstance(r.get("response"), dict) and "logprobs" in r["response"]
    }
    return {"wall": wall, "cpu": used, "sentences": len(lls), "ll": lls}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--limit", type=int, default=None, help="abc items (6 sentences each); default all")
    ap.add_argument("--concurrency", type=int, default=32, help="client requests in flight")
    ap.add_argument("--n-boot", type=int, default=1000, help="abc bootstrap resamples")
    a = ap.parse_args()

    from genderscope.data.registry import DataRegistry
    from genderscope_dev.fake_openai import FakeConfig, FakeOpenAIProcess
    from genderscope.demo_models import build_tiny_causal, likelihood_task_texts, words_of

    with tempfile.TemporaryDirectory() as tmp_:
        tmp = Path(tmp_)
        words = words_of(likelihood_task_texts(DataRegistry()))
        model_dir = build_tiny_causal(tmp / "tiny", words, seed=7, add_bos=True)
        with FakeOpenAIProcess(FakeConfig(model_dir=str(model_dir))) as srv:
            opts = {"base_url": srv.url, "concurrency": a.concurrency, "n_boot": a.n_boot}
            # warm-up (imports, first connections) in a throw-away home, outside the measurement
            timed_run("openai-completions:tiny", tmp / "h0", tmp / "warm", 1, **opts)
            timed_run(f"hf-causal:{model_dir}", tmp / "h0", tmp / "warm", 1, n_boot=10)
            srv.reset()
            api = timed_run("openai-completions:tiny", tmp / "h1", tmp / "api", a.limit, **opts)
            requests = srv.stats()["by_endpoint"].get("completions", 0)
            forwards = srv.stats()["forwards"]
            srv.reset()
            cached = timed_run("openai-completions:tiny", tmp / "h1", tmp / "cached", a.limit, **opts)
            if srv.stats()["by_endpoint"].get("completions", 0) > 5:  # only the start-up probe may ask
                raise SystemExit("the cached rerun sent requests: the store did not answer")
        hf = timed_run(f"hf-causal:{model_dir}", tmp / "h2", tmp / "hf", a.limit, n_boot=a.n_boot)

    diff = max(abs(api["ll"][k] - hf["ll"][k]) for k in hf["ll"])
    assert set(api["ll"]) == set(hf["ll"])
    n = api["sentences"]
    per_req = (api["cpu"] - cached["cpu"]) / max(1, requests) * 1e3
    print(f"abc, {n} sentences, tiny causal LM ({model_dir.name}); {os.cpu_count()} CPUs on this machine")
    print(f"{'backend':<34}{'wall s':>9}{'sent/s':>10}{'CPU s':>9}{'CPU ms/sentence':>17}")
    for name, r in (
        (f"openai-completions (1 server, c={a.concurrency})", api),
        ("  same run, answered from store", cached),
        ("hf-causal in-process", hf),
    ):
        print(
            f"{name:<34}{r['wall']:>9.2f}{r['sentences'] / r['wall']:>10.0f}{r['cpu']:>9.2f}"
            f"{r['cpu'] / max(1, r['sentences']) * 1e3:>17.3f}"
        )
    print(
        f"completions requests: {requests} (server forward passes: {forwards}, "
        f"{requests / max(1, forwards):.1f} requests batched per pass)"
    )
    print(f"client CPU per request (run - cached rerun): {per_req:.3f} ms (target <= 0.5 ms)")
    print(f"completions / hf-causal wall time: {api['wall'] / hf['wall']:.2f}x")
    print(f"max |per-sentence log-likelihood difference|: {diff:.2e} nats (agreement target 1e-4)")


if __name__ == "__main__":
    main()
