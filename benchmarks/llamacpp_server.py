"""Start and stop a llama-cpp-python OpenAI-compatible server on 127.0.0.1 (for the llama.cpp checks).

``llama-cpp-python[server]`` lives in its own venv; ``python -m genderscope_dev.engines provision
llama-cpp-python`` makes one (~5.5 minutes of compiling on 2 cores) and prints its folder.
"""

from __future__ import annotations

import sys
import json
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "devtools"))  # genderscope_dev (dev rig)


@contextmanager
def llama_server(llama_python: str, gguf: Path) -> Iterator[str]:
    """Serve ``gguf`` with ``llama_python -m llama_cpp.server`` (genderscope_dev.engines starts and
    stops it); yields the API root ``http://127.0.0.1:PORT/v1``."""
    from genderscope_dev.engines import start_llama_cpp_python

    server = start_llama_cpp_python(gguf, python=Path(llama_python))
    try:
        yield server.url
    finally:
        server.stop()


def post_json(url: str, path: str, body: dict[str, Any], timeout: float = 120) -> Any:
    """POST ``body`` as JSON to ``url + path`` and return the parsed JSON answer."""
    req = urllib.request.Request(url + path, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return json.loads(resp.read())
