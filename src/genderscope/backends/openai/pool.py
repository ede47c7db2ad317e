"""A fleet of OpenAI-compatible servers: per-server concurrency slots, spreading, pausing, statistics.

Each server has ``limit`` slots (``--concurrency``).  :meth:`Pool.acquire` gives a request the usable
server with the lowest load (in-flight / limit; ties go round-robin), preferring one other than the server
its last attempt failed on.  A server is *usable* when it has a free slot and is not paused.

Pausing: ``pause_after`` consecutive failures (5xx, 429, timeouts, connection errors, malformed bodies)
pause a server for ``pause_seconds * 2**k`` seconds (k = pauses since its last success, at most
:data:`MAX_PAUSE` seconds), but only while another server is healthy (not paused, fewer than
``pause_after`` failures in a row): when every server fails nobody is paused, so the run fails as fast as
with one server, and one server behaves exactly as without a pool (its jobs back off and retry).  A
429/503 with ``Retry-After`` pauses that server for that long, even when it is the only one.  When a pause
ends the server gets one request at a time (a probe) until one succeeds.  Pure asyncio, single thread:
no locks.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

MAX_PAUSE = 60.0  # seconds: the longest pause for failures


@dataclass
class Server:
    """One server of the fleet: its API root (``…/v1``), slots and counters."""

    base: str
    limit: int
    label: str = ""
    in_flight: int = 0
    max_in_flight: int = 0
    fails: int = 0  # consecutive failures since the last success
    pauses_since_ok: int = 0
    paused_until: float = 0.0
    counts: Counter[str] = field(default_factory=Counter)
    reasons: Counter[str] = field(default_factory=Counter)

    @property
    def root(self) -> str:
        """The server root: ``base`` without a trailing ``/v1`` (vLLM serves ``/tokenize`` there)."""
        return self.base[:-3] if self.base.endswith("/v1") else self.base

    def url(self, path: str) -> str:
        """The URL of a wire path: ``/v1/x`` -> ``base + /x``; any other path hangs off the root."""
        return self.base + path[3:] if path.startswith("/v1/") else self.root + path

    def stats(self) -> dict[str, Any]:
        return {
            "url": self.label or self.base,
            "http_requests": self.counts["requests"],
            "ok": self.counts["ok"],
            "failures": self.counts["failures"],
            "pauses": self.counts["pauses"],
            "max_in_flight": self.max_in_flight,
            "retry_reasons": dict(self.reasons),
        }


class Pool:
    """Chooses a server per request; see the module docstring for the policy."""

    def __init__(self, servers: list[Server], pause_after: int, pause_seconds: float):
        self.servers = servers
        self.pause_after = pause_after
        self.pause_seconds = pause_seconds
        self._turn = 0
        self._changed: asyncio.Event | None = None

    @property
    def capacity(self) -> int:
        return sum(s.limit for s in self.servers)

    def _usable(self, s: Server, now: float) -> bool:
        if s.paused_until > now or s.in_flight >= s.limit:
            return False
        # after a pause (or while failing) one request at a time until one succeeds
        return not (s.fails >= self.pause_after and s.in_flight >= 1 and len(self.servers) > 1)

    def _pick(self, avoid: Server | None, now: float) -> Server | None:
        best: Server | None = None
        best_key: tuple[int, float, int] | None = None
        n = len(self.servers)
        for k in range(n):
            s = self.servers[(self._turn + k) % n]
            if not self._usable(s, now):
                continue
            key = (1 if s is avoid else 0, s.in_flight / s.limit, k)
            if best_key is None or key < best_key:
                best, best_key = s, key
        return best

    def other_usable(self, s: Server) -> bool:
        """Whether a server other than ``s`` could take a request now."""
        now = time.monotonic()
        return any(o is not s and self._usable(o, now) for o in self.servers)

    def bind(self) -> None:
        """Start a run on the current event loop (each ``answer`` runs its own loop)."""
        self._changed = asyncio.Event()
        for s in self.servers:
            s.in_flight = 0

    async def acquire(self, avoid: Server | None = None) -> Server:
        """A slot on the best usable server (waits for a release or for a pause to end)."""
        if self._changed is None:
            self.bind()
        while True:
            now = time.monotonic()
            s = self._pick(avoid, now)
            if s is not None:
                self._turn = (self._turn + 1) % len(self.servers)
                s.in_flight += 1
                s.max_in_flight = max(s.max_in_flight, s.in_flight)
                s.counts["requests"] += 1
                return s
            wake = [p.paused_until - now for p in self.servers if p.paused_until > now]
            self._changed.clear()
            try:
                await asyncio.wait_for(self._changed.wait(), min(wake) + 1e-3 if wake else None)
            except asyncio.TimeoutError:
                pass

    def release(self, s: Server) -> None:
        s.in_flight -= 1
        if self._changed is not None:
            self._changed.set()

    def succeeded(self, s: Server) -> None:
        s.counts["ok"] += 1
        s.fails = 0
        s.pauses_since_ok = 0

    def failed(self, s: Server, reason: str, retry_after: float | None = None) -> None:
        """Count a failure; pause the server (see the module docstring)."""
        s.counts["failures"] += 1
        s.reasons[reason] += 1
        s.fails += 1
        now = time.monotonic()
        if retry_after is not None and retry_after > 0:
            s.paused_until = max(s.paused_until, now + retry_after)
            s.counts["pauses"] += 1
            return
        healthy = any(
            o is not s and o.fails < self.pause_after and o.paused_until <= now for o in self.servers
        )
        if s.fails >= self.pause_after and healthy and self.pause_seconds > 0:
            s.paused_until = now + min(MAX_PAUSE, self.pause_seconds * 2.0**s.pauses_since_ok)
            s.pauses_since_ok += 1
            s.counts["pauses"] += 1

    def stats(self) -> list[dict[str, Any]]:
        return [s.stats() for s in self.servers]
