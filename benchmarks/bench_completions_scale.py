"""Scaling over several servers: ``openai-completions:`` (echoed log-probs) and ``openai:`` (chat) against
1, 2 and 4 fake servers, each its own process with a fixed 50 ms latency and a cap of 32 requests at once.

For each endpoint and fleet size: prompts/s, the latency-bound ideal (servers x 32 / 0.05 s), the fraction
of it reached, the speed-up over one server, and client CPU ms per request (os.times of this process
only: the backend's HTTP, JSON and echo mapping; the servers run in child processes).  Completions are
computed by a tiny transformers causal model on each server (1 torch thread each); chat answers are
hashes, so the chat rows show the client and pool alone.  One table, one run:

    .venv/bin/python benchmarks/bench_completions_scale.py                  # 1200 prompts per server
    .venv/bin/python benchmarks/bench_completions_scale.py --per-server 3000
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "devtools"))  # genderscope_dev (dev rig)
if (ROOT.parent / "shared" / "data").is_dir():
    os.environ.setdefault("GENDERSCOPE_DATA_MIRROR", str(ROOT.parent / "shared" / "data"))
os.environ.setdefault("GENDERSCOPE_OFFLINE", "1")

from genderscope.backends.openai.chat import OpenAIChatBackend, OpenAIOptions
from genderscope.backends.openai.completions import CompletionsOptions, OpenAICompletionsBackend
from genderscope.core.primitives import CHAT, TOKEN_LOGPROBS
from genderscope.core.requests import Job, Outcome
from genderscope.core.request_value import Request
from genderscope.data.registry import DataRegistry
from genderscope_dev.fake_openai import FakeConfig, FakeOpenAIProcess
from genderscope.demo_models import build_tiny_causal, genda_lens_texts, words_of

LATENCY, CAP, SIZES = 0.05, 32, (1, 2, 4)


def start_all(configs: list[FakeConfig]) -> list[FakeOpenAIProcess]:
    """Start the server processes in parallel (each loads torch when it has a model)."""
    procs = [FakeOpenAIProcess(c) for c in configs]
    threads = [threading.Thread(target=p.start) for p in procs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if not all(p.url for p in procs):
        raise SystemExit("a fake server did not start")
    return procs


def make_jobs(kind: str, texts: list[str]) -> list[Job]:
    def payload(t: str) -> dict[str, Any]:
        return {"text": t} if kind == TOKEN_LOGPROBS else {"messages": [{"role": "user", "content": t}]}

    return [
        Job(index=i, request=Request(kind, payload(t)), trial=1, item_id=f"i{i}") for i, t in enumerate(texts)
    ]


def measure(backend: Any, jobs: list[Job]) -> tuple[float, float]:
    """(prompts/s, client CPU ms per request); every job must be answered."""
    bad: list[Outcome] = []

    def emit(job: Job, out: Outcome) -> None:
        if not out.ok:
            bad.append(out)

    t0, w0 = os.times(), time.perf_counter()
    backend.answer(jobs, emit)
    t1, w1 = os.times(), time.perf_counter()
    assert not bad, f"{len(bad)} failed: {bad[0].error}"
    cpu = (t1.user - t0.user) + (t1.system - t0.system)
    return len(jobs) / (w1 - w0), 1000 * cpu / len(jobs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--per-server", type=int, default=1200, help="prompts per server in the fleet")
    ap.add_argument("--skip-chat", action="store_true", help="only the completions rows")
    a = ap.parse_args()
    texts_all = genda_lens_texts(DataRegistry())
    texts = list(dict.fromkeys(texts_all))
    need = a.per_server * max(SIZES)
    texts = (texts * (need // len(texts) + 1))[:need]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        model = build_tiny_causal(Path(tmp) / "tiny", words_of(texts_all))
        for endpoint in ("completions",) + (() if a.skip_chat else ("chat",)):
            cfg = FakeConfig(latency=LATENCY, max_concurrency=CAP, over_capacity="queue", torch_threads=1)
            if endpoint == "completions":
                cfg.model_dir = str(model)
            procs = start_all([FakeConfig(**vars(cfg)) for _ in range(max(SIZES))])
            try:
                base1 = None
                for n in SIZES:
                    urls = ",".join(p.url for p in procs[:n])
                    if endpoint == "completions":
                        # trust_echo: the random tiny model's near-uniform distribution has ties at the
                        # probe's position (the fake server's echo is exact; the probe is not measured here)
                        opts = CompletionsOptions(
                            base_url=urls, concurrency=CAP, start_token="<s>", trust_echo=True
                        )
                        backend: Any = OpenAICompletionsBackend("tiny", opts)
                        kind = TOKEN_LOGPROBS
                    else:
                        backend = OpenAIChatBackend("fake", OpenAIOptions(base_url=urls, concurrency=CAP))
                        kind = CHAT
                    measure(backend, make_jobs(kind, texts[: 64 * n]))  # warm-up: connections, probe
                    rate, cpu = measure(backend, make_jobs(kind, texts[: a.per_server * n]))
                    ideal = n * CAP / LATENCY
                    base1 = base1 or rate
                    per = [s["http_requests"] for s in backend.stats()["servers"]]
                    rows.append(
                        (endpoint, n, a.per_server * n, rate, ideal, rate / ideal, rate / base1, cpu, per)
                    )
            finally:
                for p in procs:
                    p.stop()
    print(
        f"\nfake servers: {LATENCY * 1000:.0f} ms latency, cap {CAP} at once (queue); "
        f"client --concurrency {CAP}"
        f" per server; {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}"
    )
    head = f"{'endpoint':<12}{'servers':>8}{'prompts':>9}{'prompts/s':>11}{'ideal':>8}{'% ideal':>9}"
    print(head + f"{'vs 1':>7}{'client ms/req':>15}  requests per server")
    for ep, n, k, rate, ideal, frac, ratio, cpu, per in rows:
        print(
            f"{ep:<12}{n:>8}{k:>9}{rate:>11.0f}{ideal:>8.0f}{100 * frac:>8.1f}%"
            f"{ratio:>6.2f}x{cpu:>15.3f}  {per}"
        )
    sys.stdout.flush()


if __name__ == "__main__":
    main()
