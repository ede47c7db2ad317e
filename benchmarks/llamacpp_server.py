"""Start and stop a llama-cpp-python OpenAI-compatible server on 127.0.0.1 (for the llama.cpp checks).

``llama-cpp-python[server]`` lives in its own venv (building it takes ~7+ minutes on 2 cores)::

    python3 -m venv /tmp/llamavenv && /tmp/llamavenv/bin/pip install 'llama-cpp-python[server]'
"""

from __future__ import annotations

import json
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_ready(url: str, proc: subprocess.Popen, seconds: float = 180) -> None:
    """Wait until ``GET {url}/models`` answers; SystemExit if the server exits or never answers."""
    t0 = time.time()
    while time.time() - t0 < seconds:
        if proc.poll() is not None:
            raise SystemExit(f"llama.cpp server exited with code {proc.returncode}")
        try:
            urllib.request.urlopen(url + "/models", timeout=2).read()
            return
        except OSError:
            time.sleep(1)
    raise SystemExit("llama.cpp server did not become ready")


@contextmanager
def llama_server(llama_python: str, gguf: Path, extra: Sequence[str] = ()) -> Iterator[str]:
    """Serve ``gguf`` with ``llama_python -m llama_cpp.server``; yields the API root ``http://.../v1``."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/v1"
    proc = subprocess.Popen([llama_python, "-m", "llama_cpp.server", "--model", str(gguf), "--host",
                             "127.0.0.1", "--port", str(port), "--n_ctx", "2048", "--n_threads", "2",
                             *extra], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_ready(url, proc)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def post_json(url: str, path: str, body: dict[str, Any], timeout: float = 120) -> Any:
    """POST ``body`` as JSON to ``url + path`` and return the parsed JSON answer."""
    req = urllib.request.Request(url + path, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return json.loads(resp.read())
