"""``openai:MODEL`` — any OpenAI-compatible chat-completions endpoint.

Base URL: ``--base-url``, else ``$OPENAI_BASE_URL``, else ``https://api.openai.com/v1``.
Key: ``$OPENAI_API_KEY`` (or the variable named by ``--api-key-env``); it is sent as a
bearer token and never stored in options, fingerprints, logs or run files.  A key is
required except for loopback base URLs (127.0.0.1, localhost, ::1).

Requests go out from one asyncio loop over aiohttp (HTTP/1.1 keep-alive; ``answer`` runs the loop
itself, on a helper thread when called inside a running loop such as a notebook's): ``concurrency``
workers share the job list, so at most that many requests are in flight.  Retryable
failures (429, 5xx, 408/409, timeouts, connection errors, bodies that are not a chat
completion) are retried up to ``max_retries`` times, waiting ``uniform(0, min(backoff_max,
backoff_base * 2**n))`` seconds before retry n+1 (exponential backoff with full jitter), or
the server's ``Retry-After`` when a 429/503 gives one.  Other 4xx responses (400, 401, 403,
404, ...) raise :class:`BackendError` at once; answers already emitted stay stored.  If
no request of the run has succeeded when a job exhausts its retries, the endpoint is
treated as unreachable and the run stops with a BackendError instead of failing every job.
"""

from __future__ import annotations

import asyncio
import hashlib
import email.utils
import json
import os
import random
import threading
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from genderscope.core.backend import Backend, Emit
from genderscope.core.errors import BackendError, UsageError
from genderscope.core.options import opt
from genderscope.core.requests import CHAT, Job, Outcome

DEFAULT_BASE_URL = "https://api.openai.com/v1"
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})
RETRYABLE_STATUS = frozenset({408, 409, 425, 429})  # plus every 5xx
MAX_RETRY_AFTER = 300.0  # seconds: longer Retry-After values are clipped to this


def trial_seed(item_id: str, trial: int) -> int:
    """Seed for one sampled trial: first 8 bytes of sha256("<item id>#<trial>"), unsigned big-endian.

    Each item and trial gets its own seed, never one fixed seed for all trials.
    """
    return int.from_bytes(hashlib.sha256(f"{item_id}#{trial}".encode()).digest()[:8], "big")


@dataclass
class OpenAIOptions:
    base_url: str = opt(
        "",
        "API root, e.g. http://127.0.0.1:8000/v1 (default: $OPENAI_BASE_URL, else https://api.openai.com/v1)",
    )
    concurrency: int = opt(16, "requests in flight at once")
    timeout: float = opt(60.0, "seconds per request before it counts as timed out (then retried)")
    max_retries: int = opt(6, "retries per request for 429, 5xx, timeouts, connection errors, garbage bodies")
    backoff_base: float = opt(0.5, "seconds: retry n waits uniform(0, min(backoff_max, backoff_base * 2^n))")
    backoff_max: float = opt(30.0, "seconds: the longest backoff wait (Retry-After may ask for longer)")
    send_seed: bool = opt(
        True,
        "send a seed derived from (item id, trial), so sampled trials repeat where the server honours it",
    )
    api_key_env: str = opt("OPENAI_API_KEY", "environment variable that holds the API key")
    max_tokens_field: str = opt(
        "max_tokens",
        "name under which the answer-length limit is sent (newer OpenAI "
        "reasoning models want max_completion_tokens)",
        ("max_tokens", "max_completion_tokens"),
    )

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise ValueError("--concurrency must be at least 1")
        if not self.timeout > 0:
            raise ValueError("--timeout must be positive (seconds)")
        if self.max_retries < 0:
            raise ValueError("--max-retries must be 0 or more")
        if self.backoff_base < 0 or self.backoff_max < 0:
            raise ValueError("--backoff-base and --backoff-max must be 0 or more (seconds)")


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or HTTP-date); None if absent/unreadable."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def backoff_delay(retry: int, base: float, cap: float, rng: random.Random) -> float:
    """Full-jitter exponential backoff: uniform(0, min(cap, base * 2**retry)) seconds (retry = 0, 1, ...)."""
    return rng.uniform(0.0, min(cap, base * (2.0**retry)))


def chat_content(raw: bytes) -> str | None:
    """``choices[0].message.content`` of a chat-completion body; ValueError if the body is not one."""
    try:
        obj = json.loads(raw)
        content = obj["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError):
        snippet = raw[:120].decode("utf-8", "replace").replace("\n", " ")
        raise ValueError(f"response is not a chat completion: {snippet!r}") from None
    if content is not None and not isinstance(content, str):
        raise ValueError(f"choices[0].message.content is a {type(content).__name__}, not a string")
    return content


def _error_message(raw: bytes) -> str:
    """The server's error message from an error body (OpenAI shape or plain text), on one line."""
    try:
        obj = json.loads(raw)
        msg = obj.get("error", obj) if isinstance(obj, dict) else obj
        if isinstance(msg, dict):
            msg = msg.get("message") or msg.get("detail") or json.dumps(msg)
        text = str(msg)
    except ValueError:
        text = raw.decode("utf-8", "replace")
    text = " ".join(text.split())
    return text[:300] + ("…" if len(text) > 300 else "")


_HINTS = {
    400: "the server rejected the request; check --max-tokens, --max-tokens-field, --temperature "
    "and the model's limits",
    401: "check the API key in ${env}",
    403: "the key in ${env} has no access to this model or endpoint",
    404: "check the model name, and that --base-url ends in /v1",
}


def _run_coroutine(coro: Any) -> None:
    """``asyncio.run(coro)``; inside a running loop (a notebook) on a helper thread instead."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(coro)
        return
    errors: list[BaseException] = []

    def target() -> None:
        try:
            asyncio.run(coro)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            errors.append(exc)

    thread = threading.Thread(target=target, name="genderscope-openai")
    thread.start()
    thread.join()
    if errors:
        raise errors[0]


class _Fatal(Exception):
    """A non-retryable HTTP status inside the loop (turned into BackendError outside)."""


class OpenAIChatBackend(Backend):
    kind = "openai"
    description = "OpenAI-compatible chat-completions API (openai:MODEL; --base-url, $OPENAI_API_KEY)"
    Options = OpenAIOptions
    request_kinds = frozenset({CHAT})

    def __init__(self, target: str, options: OpenAIOptions):
        super().__init__(target, options)
        base = (options.base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).strip().rstrip("/")
        parts = urlsplit(base)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise UsageError(f"--base-url {base!r} is not an http(s) URL (e.g. http://127.0.0.1:8000/v1)")
        self.base_url = base
        self.url = base + "/chat/completions"
        self.host = parts.hostname.lower() + (f":{parts.port}" if parts.port else "")
        self.loopback = parts.hostname.lower() in LOOPBACK_HOSTS  # no key needed, no proxy used
        key = os.environ.get(options.api_key_env, "").strip()
        if not key and not self.loopback:
            raise BackendError(
                f"no API key: set {options.api_key_env} (the key for {parts.hostname}); "
                "only loopback base URLs (127.0.0.1, localhost) work without one"
            )
        self._key = key
        self._rng = random.Random()
        self.counts: Counter[str] = Counter()
        self.retry_reasons: Counter[str] = Counter()

    # -- identity -------------------------------------------------------------------------
    @property
    def fingerprint(self) -> str:
        return f"openai:{self.target}@{self.host}"

    def describe(self) -> dict[str, Any]:
        d = super().describe()
        p = urlsplit(self.base_url)
        d["base_url"] = p._replace(netloc=p.netloc.rpartition("@")[2], query="", fragment="").geturl()
        d["options"] = {**d["options"], "base_url": d["base_url"]}
        d["api_key_set"] = bool(self._key)
        return d

    def stats(self) -> dict[str, Any]:
        return {
            "http_requests": self.counts["requests"],
            "answers": self.counts["answers"],
            "retries": self.counts["retries"],
            "failed_jobs": self.counts["failed"],
            "retry_reasons": dict(self.retry_reasons),
            "seconds": round(self.counts["micros"] / 1e6, 3),
        }

    # -- requests -------------------------------------------------------------------------
    def payload(self, job: Job) -> bytes:
        """The JSON body for one job: the request's sampling parameters + model (+ seed)."""
        p = job.request.payload
        body: dict[str, Any] = {"model": self.target, "messages": p["messages"]}
        for name in ("temperature", "top_p", "stop", "presence_penalty", "frequency_penalty"):
            if p.get(name) is not None:
                body[name] = p[name]
        if p.get("max_tokens") is not None:
            body[self.options.max_tokens_field] = p["max_tokens"]
        if self.options.send_seed:
            body["seed"] = trial_seed(job.item_id, job.trial)
        return json.dumps(body, ensure_ascii=False).encode()

    def answer(self, jobs: Sequence[Job], emit: Emit) -> None:
        for job in jobs:
            if job.request.kind != CHAT:
                raise BackendError(f"openai backend cannot answer {job.request.kind!r} requests")
        if not jobs:
            return
        t0 = time.perf_counter()
        try:
            _run_coroutine(self._answer_all(jobs, emit))
        except _Fatal as exc:
            raise BackendError(str(exc)) from None
        finally:
            self.counts["micros"] += int((time.perf_counter() - t0) * 1e6)

    async def _answer_all(self, jobs: Sequence[Job], emit: Emit) -> None:
        import aiohttp

        conc = min(self.options.concurrency, len(jobs))
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        connector = aiohttp.TCPConnector(limit=conc, limit_per_host=conc, ttl_dns_cache=600)
        timeout = aiohttp.ClientTimeout(total=self.options.timeout)
        self._successes = 0
        async with aiohttp.ClientSession(
            connector=connector, timeout=timeout, headers=headers, trust_env=not self.loopback
        ) as session:
            it = iter(jobs)
            workers = [asyncio.ensure_future(self._worker(session, it, emit)) for _ in range(conc)]
            try:
                done, _pending = await asyncio.wait(workers, return_when=asyncio.FIRST_EXCEPTION)
            finally:
                for w in workers:
                    w.cancel()
                await asyncio.gather(*workers, return_exceptions=True)
            for w in done:
                exc = w.exception()
                if exc is not None:
                    raise exc

    async def _worker(self, session: Any, it: Any, emit: Emit) -> None:
        for job in it:
            outcome = await self._one(session, job)
            emit(job, outcome)

    async def _one(self, session: Any, job: Job) -> Outcome:
        import aiohttp

        body = self.payload(job)
        o = self.options
        reason = ""
        for attempt in range(o.max_retries + 1):
            self.counts["requests"] += 1
            wait: float | None = None
            try:
                async with session.post(self.url, data=body) as resp:
                    status = resp.status
                    raw = await resp.read()
                    if status in (429, 503):
                        wait = parse_retry_after(resp.headers.get("Retry-After"))
            except asyncio.TimeoutError:
                reason = f"timeout after {o.timeout:g} s"
                self.retry_reasons["timeout"] += 1
            except aiohttp.ClientError as exc:
                reason = f"connection error ({type(exc).__name__}: {self._clean(str(exc))})"
                self.retry_reasons["connection"] += 1
            else:
                if status == 200:
                    try:
                        content = chat_content(raw)
                    except ValueError as exc:
                        reason = str(exc)
                        self.retry_reasons["malformed"] += 1
                    else:
                        self._successes += 1
                        self.counts["answers"] += 1
                        return Outcome(response=content)
                elif status >= 500 or status in RETRYABLE_STATUS:
                    reason = f"HTTP {status}: {self._clean(_error_message(raw))}"
                    self.retry_reasons[str(status)] += 1
                else:
                    hint = _HINTS.get(status, "a client error that retrying will not fix")
                    raise _Fatal(
                        f"{self.url} answered HTTP {status} for model {self.target!r}: "
                        f"{self._clean(_error_message(raw))} ({hint.replace('${env}', o.api_key_env)})"
                    )
            if attempt == o.max_retries:
                break
            self.counts["retries"] += 1
            delay = backoff_delay(attempt, o.backoff_base, o.backoff_max, self._rng)
            if wait is not None:
                delay = min(wait, MAX_RETRY_AFTER) + delay * 0.1
            await asyncio.sleep(delay)
        self.counts["failed"] += 1
        if self._successes == 0:
            raise _Fatal(
                f"{self.url} gave no answer after {o.max_retries + 1} attempts: {reason} "
                "(is the server up and --base-url right?)"
            )
        return Outcome(error=f"{reason} (gave up after {o.max_retries + 1} attempts)")

    def _clean(self, text: str) -> str:
        """Never let the key reach a message."""
        return text.replace(self._key, "***") if self._key else text
