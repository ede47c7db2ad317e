"""A loopback OpenAI-compatible chat-completions server for tests and benchmarks.

Answers are deterministic functions of the prompt (:func:`expected_answer`): one of
``(a)``/``(b)``/``(c)`` picked by a hash of the prompt (and of the request's ``seed``
when one is sent), followed by ``[ref]`` = the first 12 hex digits of sha256(prompt), so
a test can check that every answer belongs to its prompt.

Fault injection (:class:`FakeConfig`): ``429`` (with ``Retry-After``), ``500``/``502``/``503``,
``timeout`` (stall ``timeout_sleep`` seconds), ``malformed`` (HTTP 200 with a broken JSON
body), ``drop`` (close the connection without answering), ``null`` (a valid answer whose
content is null).  Faults come from ``schedule`` (the n-th request for a prompt gets
``schedule[n-1]``; later requests succeed) and/or with probability ``fault_rate`` from
``faults`` (seeded).  ``status`` answers every chat request after the first ``status_after`` with that HTTP error.

The server is a raw asyncio protocol (one event loop, HTTP/1.1 keep-alive, no framework),
so one core serves well over 2000 requests/s.  Use it in a thread
(:class:`FakeOpenAIServer`) or, for benchmarks, in its own process
(:class:`FakeOpenAIProcess`, or ``python -m genderscope.testing.fake_openai --port 0
--latency 0.05``, which prints its URL).  Control endpoints: ``GET /_stats``,
``POST /_reset``, ``POST /_config`` (JSON fields of :class:`FakeConfig`).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import hashlib
import json
import random
import signal
import subprocess
import sys
import threading
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

FAULT_KINDS = ("429", "500", "502", "503", "timeout", "malformed", "drop", "null")
_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
}


@dataclass
class FakeConfig:
    """Behaviour of the fake server (every field can be changed at run time via ``POST /_config``)."""

    latency: float = 0.0  # seconds before each answer (and before each injected fault)
    fault_rate: float = 0.0  # probability that a request gets a fault drawn from ``faults``
    faults: list[str] = field(default_factory=lambda: ["429", "500", "timeout", "malformed", "drop"])
    schedule: list[str] = field(default_factory=list)  # faults for the 1st, 2nd, ... request of each prompt
    seed: int = 0  # seed of the fault draws
    retry_after: str = "0"  # Retry-After header sent with 429 (seconds or an HTTP date)
    timeout_sleep: float = 30.0  # how long a "timeout" fault stalls before answering
    status: int = 0  # if non-zero: answer chat requests with this HTTP status ...
    status_after: int = 0  # ... once this many chat requests have been served normally
    api_key: str | None = None  # if set: require "Authorization: Bearer <api_key>" (else 401)
    models: list[str] = field(default_factory=list)  # known model names; others get 404 (empty = any)

    def __post_init__(self) -> None:
        for f in list(self.schedule) + list(self.faults):
            if f and f not in FAULT_KINDS:
                raise ValueError(f"unknown fault {f!r}; known: {', '.join(FAULT_KINDS)}")


def prompt_ref(prompt: str) -> str:
    """First 12 hex digits of sha256(prompt): the reference echoed in every answer."""
    return hashlib.sha256(prompt.encode()).hexdigest()[:12]


def expected_answer(prompt: str, seed: int | None = None) -> str:
    """The answer the server gives to ``prompt`` (sent with ``seed``, if any)."""
    key = prompt if seed is None else f"{prompt}\x00{seed}"
    tag = "(a)(b)(c)"[3 * (int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) % 3) :][:3]
    return f"My answer is {tag}. [{prompt_ref(prompt)}]"


def _response(status: int, body: bytes, extra: str = "", close: bool = False) -> bytes:
    head = (
        f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n{extra}" + ("Connection: close\r\n" if close else "") + "\r\n"
    )
    return head.encode("latin-1") + body


def _error_body(message: str, type_: str, code: str | None = None) -> bytes:
    return json.dumps({"error": {"message": message, "type": type_, "code": code}}).encode()


class _State:
    """Config and counters, owned by the server's event loop thread."""

    def __init__(self, config: FakeConfig):
        self.config = config
        self.rng = random.Random(config.seed)
        self.reset()

    def reset(self) -> None:
        self.requests = 0
        self.answered = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.with_seed = 0
        self.with_auth = 0
        self.by_prompt: Counter[str] = Counter()
        self.faults: Counter[str] = Counter()
        self.last_body: Any = None
        self.rng = random.Random(self.config.seed)

    def snapshot(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "answered": self.answered,
            "in_flight": self.in_flight,
            "max_in_flight": self.max_in_flight,
            "with_seed": self.with_seed,
            "with_auth": self.with_auth,
            "faults": dict(self.faults),
            "by_prompt": dict(self.by_prompt),
            "last_body": self.last_body,
            "config": dataclasses.asdict(self.config),
        }


class _Connection(asyncio.Protocol):
    """One client connection: parses HTTP/1.1 requests (Content-Length bodies) and answers them."""

    def __init__(self, state: _State, loop: asyncio.AbstractEventLoop):
        self.state = state
        self.loop = loop
        self.buf = bytearray()
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None

    def data_received(self, data: bytes) -> None:
        self.buf += data
        while True:
            end = self.buf.find(b"\r\n\r\n")
            if end < 0:
                return
            lines = bytes(self.buf[:end]).decode("latin-1").split("\r\n")
            headers = {}
            for line in lines[1:]:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
            length = int(headers.get("content-length", "0") or 0)
            if len(self.buf) < end + 4 + length:
                return
            body = bytes(self.buf[end + 4 : end + 4 + length])
            del self.buf[: end + 4 + length]
            parts = lines[0].split(" ")
            if len(parts) < 2:
                self._send(
                    _response(400, _error_body("bad request line", "invalid_request_error"), close=True)
                )
                return
            self.handle(parts[0], parts[1], headers, body)

    # -- responses -----------------------------------------------------------------------
    def _send(self, data: bytes | None, close: bool = False) -> None:
        t = self.transport
        if t is None or t.is_closing():
            return
        if data:
            t.write(data)
        if close:
            t.close()

    def _later(self, delay: float, data: bytes | None, close: bool = False, done: bool = True) -> None:
        def fire() -> None:
            st = self.state
            st.in_flight -= 1
            if done:
                st.answered += 1
            self._send(data, close)

        self.state.in_flight += 1
        self.state.max_in_flight = max(self.state.max_in_flight, self.state.in_flight)
        if delay > 0:
            self.loop.call_later(delay, fire)
        else:
            fire()

    def handle(self, method: str, path: str, headers: dict[str, str], body: bytes) -> None:
        st = self.state
        if path.startswith("/_"):
            self._control(method, path, body)
            return
        if method != "POST" or not path.endswith("/chat/completions"):
            self._send(_response(404, _error_body(f"no route {method} {path}", "invalid_request_error")))
            return
        cfg = st.config
        try:
            req = json.loads(body)
            prompt = req["messages"][-1]["content"]
            model = req.get("model")
        except (ValueError, KeyError, IndexError, TypeError):
            self._send(
                _response(400, _error_body("request body is not a chat request", "invalid_request_error"))
            )
            return
        st.requests += 1
        st.by_prompt[prompt] += 1
        st.last_body = req
        seed = req.get("seed")
        st.with_seed += seed is not None
        auth = headers.get("authorization")
        st.with_auth += auth is not None
        if cfg.api_key is not None and auth != f"Bearer {cfg.api_key}":
            self._later(
                0,
                _response(
                    401,
                    _error_body("Incorrect API key provided.", "invalid_request_error", "invalid_api_key"),
                ),
            )
            return
        if cfg.models and model not in cfg.models:
            self._later(
                0,
                _response(
                    404,
                    _error_body(
                        f"The model `{model}` does not exist or you do not have access to it.",
                        "invalid_request_error",
                        "model_not_found",
                    ),
                ),
            )
            return
        if cfg.status and st.requests > cfg.status_after:
            self._later(
                cfg.latency,
                _response(cfg.status, _error_body(f"injected status {cfg.status}", "invalid_request_error")),
            )
            return
        n = st.by_prompt[prompt]
        fault = cfg.schedule[n - 1] if n <= len(cfg.schedule) else ""
        if not fault and cfg.fault_rate > 0 and cfg.faults and st.rng.random() < cfg.fault_rate:
            fault = st.rng.choice(cfg.faults)
        if fault:
            st.faults[fault] += 1
        if fault == "drop":
            self._later(cfg.latency, None, close=True, done=False)
            return
        if fault == "429":
            self._later(
                cfg.latency,
                _response(
                    429,
                    _error_body("Rate limit reached", "requests", "rate_limit_exceeded"),
                    f"Retry-After: {cfg.retry_after}\r\n",
                ),
                done=False,
            )
            return
        if fault in ("500", "502", "503"):
            self._later(
                cfg.latency,
                _response(int(fault), _error_body("injected server error", "server_error")),
                done=False,
            )
            return
        if fault == "malformed":
            self._later(
                cfg.latency,
                _response(200, b'{"id": "chatcmpl-x", "choices": [{"message": {"cont'),
                done=False,
            )
            return
        content = None if fault == "null" else expected_answer(prompt, seed)
        out = json.dumps(
            {
                "id": "chatcmpl-fake",
                "object": "chat.completion",
                "created": 0,
                "model": model,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
            }
        ).encode()
        delay = cfg.timeout_sleep if fault == "timeout" else cfg.latency
        self._later(delay, _response(200, out))

    def _control(self, method: str, path: str, body: bytes) -> None:
        st = self.state
        if path == "/_stats":
            self._send(_response(200, json.dumps(st.snapshot()).encode()))
        elif path == "/_reset" and method == "POST":
            st.reset()
            self._send(_response(200, b"{}"))
        elif path == "/_config" and method == "POST":
            try:
                changes = json.loads(body or b"{}")
                st.config = FakeConfig(**{**dataclasses.asdict(st.config), **changes})
                st.rng = random.Random(st.config.seed)
            except (ValueError, TypeError) as exc:
                self._send(_response(400, _error_body(str(exc), "invalid_request_error")))
                return
            self._send(_response(200, json.dumps(dataclasses.asdict(st.config)).encode()))
        else:
            self._send(
                _response(404, _error_body(f"no control route {method} {path}", "invalid_request_error"))
            )


async def start_server(
    config: FakeConfig, host: str = "127.0.0.1", port: int = 0
) -> tuple[asyncio.AbstractServer, _State, str]:
    """Start serving on the running loop; returns (server, state, base URL ending in /v1)."""
    loop = asyncio.get_running_loop()
    state = _State(config)
    server = await loop.create_server(lambda: _Connection(state, loop), host, port, backlog=1024)
    real_port = server.sockets[0].getsockname()[1]
    return server, state, f"http://{host}:{real_port}/v1"


class FakeOpenAIServer:
    """The fake server on a background thread of this process (for tests)::

    with FakeOpenAIServer(FakeConfig(latency=0.01)) as srv:
        ... srv.url ...  srv.stats()["by_prompt"]
    """

    def __init__(self, config: FakeConfig | None = None, host: str = "127.0.0.1", port: int = 0):
        self.config = config or FakeConfig()
        self.host, self.port = host, port
        self.url = ""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._state: _State | None = None

    def start(self) -> FakeOpenAIServer:
        ready = threading.Event()
        errors: list[BaseException] = []

        def main() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            try:
                server, self._state, self.url = loop.run_until_complete(
                    start_server(self.config, self.host, self.port)
                )
            except BaseException as exc:  # noqa: BLE001 - reported to the starting thread
                errors.append(exc)
                ready.set()
                return
            ready.set()
            try:
                loop.run_forever()
            finally:
                server.close()
                loop.run_until_complete(server.wait_closed())
                loop.close()

        self._thread = threading.Thread(target=main, name="fake-openai", daemon=True)
        self._thread.start()
        ready.wait(10)
        if errors:
            raise errors[0]
        return self

    def _call(self, fn: Any) -> Any:
        assert self._loop is not None

        async def run() -> Any:
            return fn()

        return asyncio.run_coroutine_threadsafe(run(), self._loop).result(10)

    def stats(self) -> dict[str, Any]:
        """Counters: requests, answered, faults, by_prompt (prompt -> requests), max_in_flight, ..."""
        return self._call(lambda: json.loads(json.dumps(self._state.snapshot())))  # type: ignore[union-attr]

    def reset(self) -> None:
        self._call(lambda: self._state.reset())  # type: ignore[union-attr]

    def configure(self, **changes: Any) -> None:
        def apply() -> None:
            st = self._state
            assert st is not None
            st.config = FakeConfig(**{**dataclasses.asdict(st.config), **changes})
            st.rng = random.Random(st.config.seed)

        self._call(apply)

    def stop(self) -> None:
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
            self._loop = None

    def __enter__(self) -> FakeOpenAIServer:  # noqa: PYI034
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class FakeOpenAIProcess:
    """The fake server in a child process (for benchmarks: it does not use this process's CPU)."""

    def __init__(self, config: FakeConfig | None = None, host: str = "127.0.0.1", port: int = 0):
        self.config = config or FakeConfig()
        self.host, self.port = host, port
        self.url = ""
        self.proc: subprocess.Popen[str] | None = None

    def start(self) -> FakeOpenAIProcess:
        cmd = [
            sys.executable,
            "-m",
            "genderscope.testing.fake_openai",
            "--host",
            self.host,
            "--port",
            str(self.port),
            "--config-json",
            json.dumps(dataclasses.asdict(self.config)),
        ]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline().strip()  # type: ignore[union-attr]
        if not line.startswith("http"):
            self.stop()
            raise RuntimeError(f"fake OpenAI server did not start (printed {line!r})")
        self.url = line
        return self

    def _control(self, path: str, data: dict[str, Any] | None = None) -> Any:
        root = self.url.rsplit("/v1", 1)[0]
        req = urllib.request.Request(
            root + path,
            method="POST" if data is not None else "GET",
            data=json.dumps(data).encode() if data is not None else None,
        )
        with urllib.request.urlopen(req, timeout=10) as resp:
            return json.loads(resp.read())

    def stats(self) -> dict[str, Any]:
        return self._control("/_stats")

    def reset(self) -> None:
        self._control("/_reset", {})

    def configure(self, **changes: Any) -> None:
        self._control("/_config", changes)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            if self.proc.stdout:
                self.proc.stdout.close()
            self.proc = None

    def __enter__(self) -> FakeOpenAIProcess:  # noqa: PYI034
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(
        prog="python -m genderscope.testing.fake_openai",
        description="Loopback OpenAI-compatible server with deterministic answers and "
        "fault injection. Prints its base URL, then serves until killed.",
    )
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0, help="0 = any free port")
    p.add_argument("--latency", type=float, default=None, help="seconds before each answer")
    p.add_argument("--fault-rate", type=float, default=None, help="probability of a fault per request")
    p.add_argument(
        "--faults", default=None, help=f"comma-separated kinds drawn from: {','.join(FAULT_KINDS)}"
    )
    p.add_argument(
        "--schedule", default=None, help="comma-separated faults for the 1st, 2nd, ... request per prompt"
    )
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--retry-after", default=None, help="Retry-After value sent with 429")
    p.add_argument("--timeout-sleep", type=float, default=None)
    p.add_argument("--status", type=int, default=None, help="answer every chat request with this HTTP status")
    p.add_argument("--status-after", type=int, default=None, help="serve this many requests before --status")
    p.add_argument("--api-key", default=None, help="require this bearer key")
    p.add_argument("--config-json", default=None, help="a FakeConfig as JSON (other flags override it)")
    a = p.parse_args(argv)
    values: dict[str, Any] = json.loads(a.config_json) if a.config_json else {}
    for name in (
        "latency",
        "fault_rate",
        "seed",
        "retry_after",
        "timeout_sleep",
        "status",
        "status_after",
        "api_key",
    ):
        if getattr(a, name) is not None:
            values[name] = getattr(a, name)
    for name in ("faults", "schedule"):
        if getattr(a, name) is not None:
            values[name] = [s for s in getattr(a, name).split(",") if s]
    config = FakeConfig(**values)

    async def serve() -> None:
        server, _state, url = await start_server(config, a.host, a.port)
        print(url, flush=True)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        await stop.wait()
        server.close()

    asyncio.run(serve())


if __name__ == "__main__":
    main()
