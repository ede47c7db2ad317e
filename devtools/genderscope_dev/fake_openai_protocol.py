"""The fake OpenAI server's HTTP/1.1 protocol: routing, chat answers, completions (scored on the
model's worker thread, :mod:`~genderscope_dev.fake_openai_completions`), fault injection, the
per-server concurrency cap and the control endpoints, on one asyncio event loop (:func:`start_server`).

Routes: ``POST /v1/chat/completions``, ``POST /v1/completions``, ``POST /tokenize`` and
``/detokenize`` (also under ``/v1``), ``GET /v1/models``; control: ``GET /_stats``, ``GET /_count``,
``POST /_reset``, ``POST /_config``.  Chat and completions requests pass the concurrency cap
(``max_concurrency``; beyond it they wait in FIFO order, or get 429 with ``over_capacity = "429"``);
``latency`` counts from admission, so a capped server answers at most ``max_concurrency / latency``
requests/s.  Token endpoints bypass the cap and the latency and are never faulted."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import random
from typing import Any, Callable

from genderscope_dev.fake_openai_completions import (
    PromptError,
    completion_body,
    completion_json,
    detokenize_body,
    parse_completion,
    tokenize_body,
)
from genderscope_dev.fake_openai_config import FakeConfig, chat_answer, chat_completion_body
from genderscope_dev.fake_openai_state import _State

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

    def _begin(self) -> float:
        st = self.state
        st.in_flight += 1
        st.max_in_flight = max(st.max_in_flight, st.in_flight)
        return self.loop.time()

    def _finish(
        self,
        started: float,
        delay: float,
        data: bytes | None,
        close: bool = False,
        prompts: list[str] | None = None,
        slot: bool = True,
    ) -> None:
        """Send ``data`` ``delay`` s after ``started``; ``prompts`` = answered (None = a fault)."""

        def fire() -> None:
            st = self.state
            st.in_flight -= 1
            if prompts is not None:
                st.answered += 1
                st.answered_by_prompt.update(prompts)
            self._send(data, close)
            if slot:
                st.release()

        wait = started + delay - self.loop.time()
        if wait > 0:
            self.loop.call_later(wait, fire)
        else:
            fire()

    def _later(self, delay: float, data: bytes | None, close: bool = False, done: bool = True) -> None:
        """Answer outside the capacity queue (401/404 before any work)."""
        self._finish(self._begin(), delay, data, close, [] if done else None, slot=False)

    def _model_or_404(self, what: str) -> Any:
        """The served model; None after answering 404 naming ``what`` when the server has none."""
        model = self.state.model()
        if model is None:
            msg = f"this fake server has no {what} (start it with --model-dir DIR)"
            self._send(_response(404, _error_body(msg, "invalid_request_error")))
        return model

    def _serve(
        self,
        key: str,
        req: dict[str, Any],
        headers: dict[str, str],
        endpoint: str,
        answer: Callable[[str, float, float], None],
    ) -> None:
        """A model request: :meth:`_gate` it, wait for a capacity slot, start (:meth:`_begin`); a dropped
        connection or an injected error status / malformed body is sent after the latency, any other
        request is ``answer(fault, started, delay)``'d (delay in s: the timeout sleep for ``timeout``,
        else the latency; the configuration is the one when the request came)."""
        fault = self._gate(key, req, headers, endpoint)
        if fault is None:
            return
        cfg = self.state.config

        def start() -> None:
            started = self._begin()
            if fault in ("drop", "429", "500", "502", "503", "malformed"):
                data, close = self._fault_reply(fault)
                self._finish(started, cfg.latency, data, close)
                return
            answer(fault, started, cfg.timeout_sleep if fault == "timeout" else cfg.latency)

        self._admit(start)

    def _fault_reply(self, fault: str) -> tuple[bytes | None, bool]:
        if fault == "429":
            head = f"Retry-After: {self.state.config.retry_after}\r\n"
            return _response(
                429, _error_body("Rate limit reached", "requests", "rate_limit_exceeded"), head
            ), False
        if fault in ("500", "502", "503"):
            return _response(int(fault), _error_body("injected server error", "server_error")), False
        if fault == "malformed":
            return _response(200, b'{"id": "x", "object": "text_completion", "choices": [{"text": "a'), False
        return None, True  # drop

    def handle(self, method: str, path: str, headers: dict[str, str], body: bytes) -> None:
        route = path.split("?", 1)[0].rstrip("/")
        if route.startswith("/_"):
            self._control(method, route, body)
        elif route.startswith(("/v1/files", "/v1/batches")):
            st = self.state
            st.by_endpoint[route.split("/")[2]] += 1
            config, answer = st.config, self._batch_answer
            status, out, _ctype = st.batches.handle(method, route, headers, body, config, answer)
            self._send(_response(status, out))
        elif method == "POST" and route.endswith("/chat/completions"):
            self._chat(headers, body)
        elif method == "POST" and route.endswith("/completions"):
            self._completions(headers, body)
        elif method == "POST" and route in ("/tokenize", "/v1/tokenize", "/detokenize", "/v1/detokenize"):
            self._tokens(route.rsplit("/", 1)[1], body)
        elif method == "GET" and route.endswith("/models"):
            self._models()
        else:
            self._send(_response(404, _error_body(f"no route {method} {path}", "invalid_request_error")))

    def _batch_answer(self, url: str, req: dict[str, Any]) -> dict[str, Any]:
        """The answer body of one batch line, as the online route gives it (ValueError = HTTP 400)."""
        st = self.state
        st.by_endpoint["batch_lines"] += 1
        if url.endswith("/chat/completions"):
            try:
                prompt = req["messages"][-1]["content"]
            except (KeyError, IndexError, TypeError):
                raise ValueError("request body is not a chat request") from None
            st.by_prompt[prompt] += 1
            content = chat_answer(st.config, req["messages"], req.get("seed"))
            return chat_completion_body(req.get("model"), content, prompt)
        model = st.model()
        if model is None:
            raise ValueError("this fake server has no completions model (start it with --model-dir DIR)")
        job = parse_completion(req, model)
        scored = model.forward([p[0] for p in job.prompts], job.k or 0)
        return completion_body(model, job, scored, "", st.config.logprob_shift)

    def _gate(self, key: str, req: dict[str, Any], headers: dict[str, str], endpoint: str) -> str | None:
        """Count a model request and pick its fault ("" = none); None = already answered (401/404/status)."""
        st, cfg = self.state, self.state.config
        st.requests += 1
        st.by_endpoint[endpoint] += 1
        st.by_prompt[key] += 1
        st.last_body = req
        st.with_seed += req.get("seed") is not None
        auth = headers.get("authorization")
        st.with_auth += auth is not None
        model = req.get("model")
        if cfg.api_key is not None and auth != f"Bearer {cfg.api_key}":
            err = _error_body("Incorrect API key provided.", "invalid_request_error", "invalid_api_key")
            self._later(0, _response(401, err))
            return None
        if cfg.models and model not in cfg.models:
            msg = f"The model `{model}` does not exist or you do not have access to it."
            self._later(0, _response(404, _error_body(msg, "invalid_request_error", "model_not_found")))
            return None
        if cfg.status and st.requests > cfg.status_after:
            err = _error_body(f"injected status {cfg.status}", "invalid_request_error")
            self._later(cfg.latency, _response(cfg.status, err), done=False)
            return None
        n = st.by_prompt[key]
        if key in cfg.fault_exempt:
            return ""
        fault = cfg.schedule[n - 1] if n <= len(cfg.schedule) else ""
        if not fault and cfg.fault_rate > 0 and cfg.faults and st.rng.random() < cfg.fault_rate:
            fault = st.rng.choice(cfg.faults)
        if fault:
            st.faults[fault] += 1
        return fault

    def _admit(self, start: Callable[[], None]) -> None:
        if not self.state.acquire(start):
            err = _error_body("server at capacity", "requests", "rate_limit_exceeded")
            head = f"Retry-After: {self.state.config.retry_after}\r\n"
            self._send(_response(429, err, head))

    def _chat(self, headers: dict[str, str], body: bytes) -> None:
        try:
            req = json.loads(body)
            prompt = req["messages"][-1]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            self._send(
                _response(400, _error_body("request body is not a chat request", "invalid_request_error"))
            )
            return

        def answer(fault: str, started: float, delay: float) -> None:
            null = fault in ("null", "no_logprobs")
            content = None if null else chat_answer(self.state.config, req["messages"], req.get("seed"))
            out = json.dumps(chat_completion_body(req.get("model"), content, prompt)).encode()
            self._finish(started, delay, _response(200, out), prompts=[prompt])

        self._serve(prompt, req, headers, "chat", answer)

    def _completions(self, headers: dict[str, str], body: bytes) -> None:
        st = self.state
        model = self._model_or_404("completions model")
        if model is None:
            return
        try:
            req = json.loads(body)
            if not isinstance(req, dict):
                raise PromptError("request body is not a JSON object")
            job = parse_completion(req, model)
        except (ValueError, TypeError) as exc:  # PromptError is a ValueError
            self._send(_response(400, _error_body(str(exc), "BadRequestError", "400")))
            return
        key = job.keys[0] if len(job.keys) == 1 else json.dumps(req.get("prompt"))
        cfg = st.config
        if cfg.single_prompt and len(job.prompts) > 1:  # llama-cpp-python: `assert len(body.prompt) <= 1`
            self._send(_response(500, _error_body("Internal Server Error", "server_error")))
            return
        if not cfg.echo_logprobs:
            job.echo = False

        def answer(fault: str, started: float, delay: float) -> None:
            def done(scored: Any) -> None:  # on the model's worker thread
                if isinstance(scored, Exception):
                    data = _response(500, _error_body(f"model error: {scored}", "server_error"))
                    prompts = None
                else:
                    out = completion_body(model, job, scored, fault, cfg.logprob_shift)
                    data = _response(200, completion_json(out))
                    prompts = None if fault in ("null", "no_logprobs") else job.keys  # broken on purpose
                self.loop.call_soon_threadsafe(self._finish, started, delay, data, False, prompts)

            model.score([p[0] for p in job.prompts], job.k or 0, done)

        self._serve(key, req, headers, "completions", answer)

    def _tokens(self, what: str, body: bytes) -> None:
        st = self.state
        model = self._model_or_404("model")
        if model is None:
            return
        st.by_endpoint[what] += 1
        try:
            req = json.loads(body)
            out = (tokenize_body if what == "tokenize" else detokenize_body)(req, model)
        except (ValueError, TypeError, AttributeError) as exc:
            self._send(_response(400, _error_body(str(exc), "BadRequestError", "400")))
            return
        self._send(_response(200, json.dumps(out).encode()))

    def _models(self) -> None:
        cfg = self.state.config
        names = cfg.models or ["fake"]
        model = self.state.model()
        data = [{"id": n, "object": "model", "owned_by": "genderscope-fake"} for n in names]
        if model is not None:
            for d in data:
                d["max_model_len"] = model.max_len
        self._send(_response(200, json.dumps({"object": "list", "data": data}).encode()))

    def _control(self, method: str, path: str, body: bytes) -> None:
        st = self.state
        if path == "/_stats":
            self._send(_response(200, json.dumps(st.snapshot()).encode()))
        elif path == "/_count":  # cheap enough to poll while a run goes on (``/_stats`` grows with prompts)
            counts = {"requests": st.requests, "in_flight": st.in_flight}
            self._send(_response(200, json.dumps(counts).encode()))
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
    state.model()  # load the completions model now (errors surface at start)
    server = await loop.create_server(lambda: _Connection(state, loop), host, port, backlog=1024)
    real_port = server.sockets[0].getsockname()[1]
    return server, state, f"http://{host}:{real_port}/v1"
