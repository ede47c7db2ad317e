"""Which async HTTP client for the openai backend: aiohttp vs httpx (client CPU per request).

Sends N chat requests at concurrency C to the loopback fake server (own process,
latency 50 ms) with each client and prints prompts/s and client CPU ms per request
(os.times of this process only), with the ratio httpx / aiohttp.

    .venv/bin/python benchmarks/bench_http_clients.py [N] [C]
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
import time

import aiohttp
import httpx
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "devtools"))  # genderscope_dev (dev rig)

from genderscope_dev.fake_openai import FakeConfig, FakeOpenAIProcess


def body(i: int) -> bytes:
    return json.dumps(
        {
            "model": "m",
            "messages": [{"role": "user", "content": f"prompt {i} " + "x" * 600}],
            "temperature": 1.0,
            "max_tokens": 300,
            "top_p": 1.0,
            "seed": 1,
        }
    ).encode()


async def run_aiohttp(url: str, n: int, c: int) -> None:
    it = iter(range(n))
    conn = aiohttp.TCPConnector(limit=c)
    async with aiohttp.ClientSession(connector=conn, timeout=aiohttp.ClientTimeout(total=60)) as s:

        async def worker() -> None:
            for i in it:
                async with s.post(url, data=body(i), headers={"Content-Type": "application/json"}) as r:
                    json.loads(await r.read())["choices"][0]["message"]["content"]

        await asyncio.gather(*(worker() for _ in range(c)))


async def run_httpx(url: str, n: int, c: int) -> None:
    it = iter(range(n))
    limits = httpx.Limits(max_connections=c, max_keepalive_connections=c)
    async with httpx.AsyncClient(limits=limits, timeout=60) as s:

        async def worker() -> None:
            for i in it:
                r = await s.post(url, content=body(i), headers={"Content-Type": "application/json"})
                json.loads(r.content)["choices"][0]["message"]["content"]

        await asyncio.gather(*(worker() for _ in range(c)))


def measure(fn, url: str, n: int, c: int) -> tuple[float, float]:
    t0, w0 = os.times(), time.perf_counter()
    asyncio.run(fn(url, n, c))
    t1, w1 = os.times(), time.perf_counter()
    cpu = (t1.user - t0.user) + (t1.system - t0.system)
    return n / (w1 - w0), 1000 * cpu / n


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
    c = int(sys.argv[2]) if len(sys.argv) > 2 else 64
    with FakeOpenAIProcess(FakeConfig(latency=0.05)) as srv:
        url = srv.url + "/chat/completions"
        measure(run_aiohttp, url, 200, c)  # warm-up
        rows = [
            (name, *measure(fn, url, n, c)) for name, fn in (("aiohttp", run_aiohttp), ("httpx", run_httpx))
        ]
    print(f"{n} requests, concurrency {c}, server latency 50 ms (ideal {c / 0.05:.0f}/s)")
    print(f"{'client':8} {'prompts/s':>10} {'CPU ms/req':>11}")
    for name, rate, cpu in rows:
        print(f"{name:8} {rate:10.0f} {cpu:11.3f}")
    print(f"httpx / aiohttp CPU per request: {rows[1][2] / rows[0][2]:.2f}x")


if __name__ == "__main__":
    main()
