"""The HTTP machinery shared by ``openai:`` and ``openai-completions:``: options, API key, retries and
a fleet of servers (:mod:`~genderscope.backends.openai.pool`).

``--base-url URL1,URL2,...`` names one or more servers of the same model (default ``$OPENAI_BASE_URL``,
else ``https://api.openai.com/v1``).  Key: ``$OPENAI_API_KEY`` (or the variable named by
``--api-key-env``), sent as a bearer token to every server and never stored in options, fingerprints,
logs or run files; required unless every URL is loopback (127.0.0.1, localhost, ::1).

Requests go out from one asyncio loop (HTTP/1.1 keep-alive; ``run`` runs the loop itself, on a helper
thread inside a running loop such as a notebook's): to plain ``http://`` servers with no proxy through
:mod:`~genderscope.backends.openai.wire` (a fraction of aiohttp's CPU per request), else over aiohttp
(https, proxies, or ``GENDERSCOPE_HTTP=aiohttp``).  ``--concurrency`` is per server:
``concurrency x servers`` workers share the job list, and a request takes a slot on the least loaded
usable server.  Retryable failures (429, 5xx, 408/409/425, timeouts, connection errors, bodies the caller
cannot parse) are retried up to ``max_retries`` times per request: at once on another server when one is
usable, else after ``uniform(0, min(backoff_max, backoff_base * 2**n))`` seconds (full jitter), or the
server's ``Retry-After`` (429/503; clipped at 300 s) plus a tenth of that jitter.  Other 4xx responses
raise :class:`Fatal` (a BackendError for the run).  If a request exhausts its retries before any request
of the run has succeeded, every server is taken to be down and the run stops with one line.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import json
import os
import random
import re
import threading
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from genderscope.backends.openai.pool import Pool, Server
from genderscope.backends.openai.wire import WireError, WireSession
from genderscope.core.backend import Emit
from genderscope.common.errors import BackendError, UsageError
from genderscope.core.options import opt
from genderscope.core.requests import Job, Outcome

DEFAULT_BASE_URL = "https://api.openai.com/v1"
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})
RETRYABLE_STATUS = frozenset({408, 409, 425, 429})  # plus every 5xx
MAX_RETRY_AFTER = 300.0  # seconds: longer Retry-After values are clipped to this


@dataclass
class HTTPOptions:
    base_url: str = opt(
        "",
        "API root(s), comma-separated for several servers of the same model, e.g. "
        "http://10.0.0.1:8000/v1,http://10.0.0.2:8000/v1 (default: $OPENAI_BASE_URL, else "
        "https://api.openai.com/v1)",
    )
    concurrency: int = opt(16, "requests in flight at once, per server", minimum=1, maximum=100_000)
    timeout: float = opt(
        300.0, "seconds per request before it counts as timed out (then retried); lm-eval's default"
    )
    max_retries: int = opt(
        6,
        "retries per request for 429, 5xx, timeouts, connection errors, garbage bodies",
        minimum=0,
        maximum=1000,
    )
    backoff_base: float = opt(0.5, "seconds: retry n waits uniform(0, min(backoff_max, backoff_base * 2^n))")
    backoff_max: float = opt(30.0, "seconds: the longest backoff wait (Retry-After may ask for longer)")
    pause_after: int = opt(3, "several servers: pause a server after this many failures in a row")
    pause_seconds: float = opt(2.0, "seconds a failing server is paused (doubling per pause, at most 60)")
    api_key_env: str = opt("OPENAI_API_KEY", "environment variable that holds the API key")
    model_id: str = opt(
        "",
        "identity of the weights behind MODEL (e.g. a hub revision), added to the fingerprint; "
        "stored answers are keyed by model, not by server URL",
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
        if self.pause_after < 1 or self.pause_seconds < 0:
            raise ValueError("--pause-after must be at least 1 and --pause-seconds 0 or more")


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or HTTP date); None if absent or
    unreadable."""
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


_USAGE_DECODER = json.JSONDecoder()
USAGE_FIELDS = ("prompt_tokens", "completion_tokens", "total_tokens")


def count_usage(tokens: Counter[str], body: bytes) -> None:
    """Add the ``usage`` token counts of an answer body to ``tokens`` (decodes only the usage object)."""
    i = body.rfind(b'"usage"')
    if i < 0:
        return
    text = body[i + 7 :].decode("utf-8", "replace")
    j = text.find("{")
    if j < 0 or text[:j].strip() != ":":
        return
    try:
        usage, _end = _USAGE_DECODER.raw_decode(text, j)
    except ValueError:
        return
    if isinstance(usage, dict):
        for name in USAGE_FIELDS:
            v = usage.get(name)
            if isinstance(v, int) and not isinstance(v, bool):
                tokens[name] += v


def backoff_delay(retry: int, base: float, cap: float, rng: random.Random) -> float:
    """Full-jitter exponential backoff: uniform(0, min(cap, base * 2**retry)) seconds (retry = 0, 1, ...)."""
    return rng.uniform(0.0, min(cap, base * (2.0**retry)))


def error_message(raw: bytes) -> str:
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


HINTS = {
    400: "the server rejected the request; check --max-tokens, --max-tokens-field, --temperature "
    "and the model's limits",
    422: "the server rejected a field of the request; check --max-tokens, --temperature and the model name",
    401: "check the API key in ${env}",
    403: "the key in ${env} has no access to this model or endpoint",
    404: "check the model name, and that --base-url ends in /v1",
}


# What to change when a 4xx names one field of the request body.
FIELD_FIXES = {
    "seed": "the server refuses the per-trial seed: pass --send-seed false",
    "max_tokens": "lower --max-tokens, or pass --max-tokens-field max_completion_tokens",
    "max_completion_tokens": "pass --max-tokens-field max_tokens, or lower --max-tokens",
    "temperature": "pass a --temperature the server accepts",
    "top_p": "the server refuses top_p; check the task's sampling options",
    "model": "check the model name after the colon (the server's GET /v1/models lists them)",
    "messages": "the model has no chat template or refuses the messages; use openai-completions: for "
    "likelihood tasks",
    "logprobs": "the server limits logprobs; pass a lower --logprobs or use a server that echoes them",
    "echo": "the server cannot echo prompt log-probs; see docs/servers.md",
    "prompt": "the prompt is too long for the model's context (check --max-model-len on vLLM)",
}
_FIELD_PATTERNS = (
    re.compile(r"\bbody\.(\w+)"),  # vLLM / FastAPI: "body.seed: Input should be ..."
    re.compile(r"\(\s*'body'\s*,\s*'(\w+)'"),  # pydantic loc tuples: ('body', 'seed')
    re.compile(r"['\"`](\w+)['\"`]\s+(?:must|should|is|has)\b"),  # "'seed' must be ..."
)


def rejected_field(raw: bytes) -> str | None:
    """The request field a 4xx body blames: OpenAI's ``error.param``, else a field named in the message."""
    try:
        obj = json.loads(raw)
    except ValueError:
        obj = None
    err = obj.get("error") if isinstance(obj, dict) else None
    if isinstance(err, dict) and isinstance(err.get("param"), str) and err["param"]:
        return err["param"].split(".")[-1]
    text = error_message(raw)
    for pattern in _FIELD_PATTERNS:
        m = pattern.search(text)
        if m and m.group(1) in FIELD_FIXES:
            return m.group(1)
    return None


def client_error_hint(status: int, raw: bytes) -> str:
    """What to do about a non-retryable 4xx: the blamed field's fix when one is named, else the status's."""
    field = rejected_field(raw)
    if field is not None:
        fix = FIELD_FIXES.get(field, "check the option that sets it")
        return f"the server rejected field {field!r}: {fix}"
    return HINTS.get(status, "a client error that retrying will not fix")


def run_coroutine(coro: Any) -> Any:
    """``asyncio.run(coro)``; inside a running loop (a notebook) on a helper thread instead."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    result: list[Any] = []
    errors: list[BaseException] = []

    def target() -> None:
        try:
            result.append(asyncio.run(coro))
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            errors.append(exc)

    thread = threading.Thread(target=target, name="genderscope-openai")
    thread.start()
    thread.join()
    if errors:
        raise errors[0]
    return result[0] if result else None


def _cancel_all(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel the tasks still pending on ``loop`` (not running) and let them finish, as asyncio.run does."""
    pending = asyncio.all_tasks(loop)
    for task in pending:
        task.cancel()
    if pending:
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))


class Fatal(Exception):
    """A failure no retry can fix (non-retryable status, every server down): BackendError outside."""


class Unreachable(Fatal):
    """No server answered anything yet, and one request ran out of attempts."""


class ServerUnreachable(BackendError):
    """:class:`Unreachable` outside: the message names the servers and asks whether they are up."""


class RequestFailed(Exception):
    """One request exhausted its retries: the job gets an error outcome."""


def split_base_urls(text: str) -> list[str]:
    """The comma-separated API roots of ``--base-url`` (trailing ``/`` removed); UsageError if one is not
    an http(s) URL or one repeats."""
    urls = [u.strip().rstrip("/") for u in text.split(",") if u.strip()]
    for u in urls:
        p = urlsplit(u)
        if p.scheme not in ("http", "https") or not p.hostname:
            raise UsageError(f"--base-url {u!r} is not an http(s) URL (e.g. http://127.0.0.1:8000/v1)")
    if len(set(urls)) != len(urls):
        raise UsageError(f"--base-url names a server twice: {text!r}")
    if not urls:
        raise UsageError("--base-url is empty")
    return urls


#: ``GENDERSCOPE_HTTP=aiohttp`` sends every request through aiohttp (default ``auto``: see wire_eligible)
HTTP_CLIENT_ENV = "GENDERSCOPE_HTTP"


def wire_eligible(urls: Sequence[str], loopback: bool) -> bool:
    """Whether requests go through :mod:`~genderscope.backends.openai.wire` (cheaper per request) rather
    than aiohttp: every URL plain ``http://`` without credentials and no proxy in the environment
    (aiohttp honours proxies for non-loopback servers; the small client does not speak to proxies),
    unless ``$GENDERSCOPE_HTTP`` is ``aiohttp``."""
    if os.environ.get(HTTP_CLIENT_ENV, "auto").strip().lower() == "aiohttp":
        return False
    if any(urlsplit(u).scheme != "http" or "@" in urlsplit(u).netloc for u in urls):
        return False  # https, or user:password in the URL (aiohttp sends it as basic auth)
    if loopback:
        return True
    from urllib.request import getproxies

    proxies = getproxies()
    return not (proxies.get("http") or proxies.get("all"))


def public_url(url: str) -> str:
    """``url`` without user:password, query and fragment (for run files)."""
    p = urlsplit(url)
    return p._replace(netloc=p.netloc.rpartition("@")[2], query="", fragment="").geturl()


Parse = Callable[[bytes], Any]


class FleetClient:
    """Retrying POSTs over one or more servers (see the module docstring)."""

    def __init__(self, options: HTTPOptions, what: str, offline: bool = False):
        """``offline``: only build request bodies (batch files), so no API key is required."""
        o = options
        urls = split_base_urls(o.base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL)
        self.options = o
        self.what = what  # e.g. "model 'gpt-4o'" for messages
        self.urls = urls
        hosts = [urlsplit(u).hostname.lower() for u in urls]  # type: ignore[union-attr]
        self.loopback = all(h in LOOPBACK_HOSTS for h in hosts)  # no key needed, no proxy used
        key = os.environ.get(o.api_key_env, "").strip()
        if not key and not self.loopback and not offline:
            raise BackendError(
                f"no API key: set {o.api_key_env} (the key for {', '.join(sorted(set(hosts)))}); "
                "only loopback base URLs (127.0.0.1, localhost) work without one"
            )
        self._key = key
        self.pool = Pool(
            [Server(u, o.concurrency, public_url(u)) for u in urls], o.pause_after, o.pause_seconds
        )
        self._rng = random.Random()
        self.counts: Counter[str] = Counter()
        self.retry_reasons: Counter[str] = Counter()
        self.tokens: Counter[str] = Counter()
        self._session: Any = None
        self._successes = 0
        self.wire = wire_eligible(urls, self.loopback)  # POSTs through openai_wire, not aiohttp
        self._wire: WireSession | None = None
        self._startup: asyncio.AbstractEventLoop | None = None  # the loop of :meth:`startup`, while open

    @property
    def key_set(self) -> bool:
        return bool(self._key)

    def describe(self, d: dict[str, Any]) -> dict[str, Any]:
        """A backend's description ``d`` with the servers' public URLs (no credentials) and whether a key
        is set."""
        urls = ",".join(public_url(u) for u in self.urls)
        d["base_url"] = urls
        d["options"] = {**d["options"], "base_url": urls}
        d["api_key_set"] = self.key_set
        return d

    def stats(self) -> dict[str, Any]:
        out = {
            "route": "online",
            "http_requests": sum(s.counts["requests"] for s in self.pool.servers),
            "answers": self.counts["answers"],
            "retries": self.counts["retries"],
            "failed_jobs": self.counts["failed"],
            "retry_reasons": dict(self.retry_reasons),
            "seconds": round(self.counts["micros"] / 1e6, 3),
            "tokens": dict(self.tokens),
        }
        out["servers"] = self.pool.stats()
        return out

    def clean(self, text: str) -> str:
        """Never let the key reach a message."""
        return text.replace(self._key, "***") if self._key else text

    # -- running ------------------------------------------------------------------------------
    def run(self, jobs: Sequence[Job], handle: Callable[[Job], Awaitable[Any]], emit: Emit) -> None:
        """Answer ``jobs``: ``await handle(job)`` gives the response (it calls :meth:`post`); emitted as
        soon as it exists.  A :class:`RequestFailed` becomes the job's error outcome."""
        if not jobs:
            return
        t0 = time.perf_counter()
        try:
            run_coroutine(self._run_all(jobs, handle, emit))
        except Fatal as exc:
            raise BackendError(str(exc)) from None
        finally:
            self.counts["micros"] += int((time.perf_counter() - t0) * 1e6)

    def call(
        self, path: str, obj: dict[str, Any], parse: Parse = json.loads, retries: int | None = None
    ) -> Any:
        """One POST outside a run (start-up probes): the parsed answer; BackendError if it fails (after
        ``retries`` retries, default ``max_retries``)."""

        async def one() -> Any:
            if self._startup is not None:  # inside startup(): its session
                return await self.post(path, json.dumps(obj).encode(), parse, retries)
            async with self._open_session(1):
                return await self.post(path, json.dumps(obj).encode(), parse, retries)

        try:
            return self._run_startup(one())
        except Unreachable as exc:
            raise ServerUnreachable(str(exc)) from None
        except (Fatal, RequestFailed) as exc:
            raise BackendError(str(exc)) from None

    def get(self, path: str) -> Any:
        """One GET outside a run (start-up lookups such as vLLM's ``/tokenizer_info``): the JSON of the
        first server that answers 200, else None (an endpoint the servers lack is not an error)."""
        import aiohttp

        async def each() -> Any:
            for server in self.pool.servers:
                try:
                    async with self._session.get(server.url(path)) as resp:
                        if resp.status == 200:
                            return json.loads(await resp.read())
                except (aiohttp.ClientError, asyncio.TimeoutError, ValueError):
                    continue
            return None

        async def first() -> Any:
            if self._startup is not None:  # inside startup(): its session
                return await each()
            async with self._open_session(1):
                return await each()

        return self._run_startup(first())

    def _run_startup(self, coro: Any) -> Any:
        """Run a start-up coroutine: on the loop of :meth:`startup` while it is open, else on its own."""
        if self._startup is not None:
            return self._startup.run_until_complete(coro)
        return run_coroutine(coro)

    @contextlib.contextmanager
    def startup(self) -> Iterator[None]:
        """Start-up calls (:meth:`call`, :meth:`get`) made inside share one event loop and one session
        (one connection where it stays open) instead of one each: the same requests for less client CPU.
        Inside a running loop (a notebook) each call keeps its own, as outside."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            yield
            return
        loop = asyncio.new_event_loop()
        session = self._open_session(1)
        try:
            loop.run_until_complete(session.__aenter__())
            self._startup = loop
            try:
                yield
            finally:
                self._startup = None
                _cancel_all(loop)  # a call interrupted (Ctrl-C) leaves its task pending
                loop.run_until_complete(session.__aexit__(None, None, None))
        finally:
            _cancel_all(loop)
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    @contextlib.asynccontextmanager
    async def _open_session(self, conc: int) -> AsyncIterator[Any]:
        """An aiohttp session for one run on the current loop (keep-alive pool of ``conc`` connections)."""
        import aiohttp

        self.pool.bind()
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        connector = aiohttp.TCPConnector(
            limit=conc, limit_per_host=self.options.concurrency, ttl_dns_cache=600
        )
        self._session = aiohttp.ClientSession(
            connector=connector,
            timeout=aiohttp.ClientTimeout(total=self.options.timeout),
            headers=headers,
            trust_env=not self.loopback,
        )
        if self.wire:
            self._wire = WireSession(headers, self.options.timeout)
        try:
            yield self._session
        finally:
            if self._wire is not None:
                await self._wire.close()
                self._wire = None
            await self._session.close()
            self._session = None

    async def _run_all(
        self, jobs: Sequence[Job], handle: Callable[[Job], Awaitable[Any]], emit: Emit
    ) -> None:
        conc = min(self.pool.capacity, len(jobs))
        async with self._open_session(self.pool.capacity):
            it = iter(jobs)
            workers = [asyncio.ensure_future(self._worker(it, handle, emit)) for _ in range(conc)]
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

    async def _worker(self, it: Any, handle: Callable[[Job], Awaitable[Any]], emit: Emit) -> None:
        for job in it:
            try:
                response = await handle(job)
            except RequestFailed as exc:
                self.counts["failed"] += 1
                emit(job, Outcome(error=str(exc)))
            else:
                self.counts["answers"] += 1
                emit(job, Outcome(response=response))

    async def post(self, path: str, body: bytes, parse: Parse, retries: int | None = None) -> Any:
        """POST ``body`` to ``path`` on some server (wire path: ``/v1/completions``, ``/tokenize``) and
        return ``parse(raw)``; retried and failed over as the module docstring says.  ``parse`` raising
        ValueError marks the body malformed (retried)."""
        import aiohttp

        o, pool = self.options, self.pool
        reason, avoid = "", None
        most = o.max_retries if retries is None else retries
        for attempt in range(most + 1):
            server = await pool.acquire(avoid)
            url = server.url(path)
            wait: float | None = None
            kind = ""
            try:
                if self._wire is not None:
                    status, retry_after, raw = await self._wire.post(url, body)
                else:
                    async with self._session.post(url, data=body) as resp:
                        status, raw = resp.status, await resp.read()
                        retry_after = resp.headers.get("Retry-After")
                if status in (429, 503):
                    wait = parse_retry_after(retry_after)
            except asyncio.TimeoutError:
                reason, kind = f"timeout after {o.timeout:g} s", "timeout"
            except (aiohttp.ClientError, WireError) as exc:
                reason = f"connection error ({type(exc).__name__}: {self.clean(str(exc))})"
                kind = "connection"
            else:
                if status == 200:
                    try:
                        value = parse(raw)
                    except ValueError as exc:
                        reason, kind = str(exc), "malformed"
                    else:
                        pool.release(server)
                        pool.succeeded(server)
                        count_usage(self.tokens, raw)
                        self._successes += 1
                        return value
                elif status >= 500 or status in RETRYABLE_STATUS:
                    reason, kind = f"HTTP {status}: {self.clean(error_message(raw))}", str(status)
                else:
                    pool.release(server)
                    hint = client_error_hint(status, raw)
                    raise Fatal(
                        f"{public_url(url)} answered HTTP {status} for {self.what}: "
                        f"{self.clean(error_message(raw))} ({hint.replace('${env}', o.api_key_env)})"
                    )
            pool.release(server)
            self.retry_reasons[kind] += 1
            if len(pool.servers) > 1:
                reason = f"{server.label}: {reason}"
            wait = min(wait, MAX_RETRY_AFTER) if wait is not None else None
            pool.failed(server, kind, wait)
            if attempt == most:
                break
            self.counts["retries"] += 1
            avoid = server
            if pool.other_usable(server):
                continue  # fail over at once
            delay = backoff_delay(attempt, o.backoff_base, o.backoff_max, self._rng)
            if wait is not None:  # the server is paused for ``wait``: acquire() waits that out
                delay *= 0.1
            await asyncio.sleep(delay)
        if self._successes == 0:
            every = "every server" if len(pool.servers) > 1 else public_url(self.urls[0])
            raise Unreachable(
                f"{every} gave no answer after {most + 1} attempts: {reason} "
                "(is the server up and --base-url right?)"
            )
        hint = ""
        if kind == "timeout":
            hint = f"; the server was slower than --timeout {o.timeout:g}: raise it or lower --concurrency"
        raise RequestFailed(f"{reason} (gave up after {most + 1} attempts{hint})")
