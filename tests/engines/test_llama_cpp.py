"""llama-cpp-python 0.3.36's OpenAI server on SmolLM2's GGUF file: the chat route runs the chat tasks;
the likelihood route is refused by the start-up probe (its echo is shifted by one token, docs/servers.md).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from enginecli import genderscope, read_run, run_ok
from test_vllm import CHAT_SIZE

from genderscope_dev.engines import RunningServer

pytestmark = pytest.mark.engines


def test_chat_tasks_run_on_llama_cpp_python(llama_server: RunningServer, tmp_path: Path) -> None:
    for task, size in sorted(CHAT_SIZE.items()):
        out = run_ok(
            task, "--model", "openai:smol", "--base-url", llama_server.url, *size,
            "--max-tokens", "32", "--concurrency", "2", "--out", str(tmp_path / task),
        )  # fmt: skip
        _results, run, attempts = read_run(out)
        assert run["tasks"][task]["counts"]["errors"] == 0, task
        assert attempts and all(isinstance(r["response"], str) for r in attempts), task


def test_the_probe_refuses_llama_cpp_python_echo(llama_server: RunningServer, tmp_path: Path) -> None:
    res = genderscope(
        "run", "winobias-lm", "--model", "openai-completions:smol", "--base-url", llama_server.url,
        "--start-token", "none", "--limit", "2", "--out", str(tmp_path / "echo"),
    )  # fmt: skip
    assert res.returncode != 0
    last = res.stderr.strip().splitlines()[-1]
    assert "refusing this server" in last and "--trust-echo" in last, res.stderr[-2000:]
