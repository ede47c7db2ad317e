"""The fake OpenAI server's HTTP/1.1 protocol: request parsing, chat answers, fault injection and
the control endpoints, on one asyncio event loop (:func:`start_server`)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import random
from collections import Counter
from typing import Any

from genderscope.testing.fake_openai_config import FakeConfig, expected_answer

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
