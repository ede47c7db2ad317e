"""lm-evaluation-harness 0.4.13's ``esbbq_gender`` and ``cabbq_gender`` against genderscope's ``esbbq-gender``
and ``cabbq-gender`` (``--mode lm-eval``), side by side on one tiny causal model, offline.

lm-eval reads EsBBQ/CaBBQ from the hub (BSC-LT/EsBBQ, BSC-LT/CaBBQ); here its own task YAML and ``utils.py``
read the mirror's ``Gender.full.csv`` converted to JSON lines in the hub's row shape (``dataset_path: json``,
``data_files``; :func:`lmeval_venv.esbbq_rows`).  Same first N rows (``--limit``), same model: the requests
(context, continuation) are identical strings, each choice's log-likelihood equal within float noise, the
four metrics equal.  Slow: two lm_eval processes (``make test-reference``).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import lmeval_venv  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.reference, pytest.mark.timeout(3600)]

#: first rows asked: two templates, ambiguous and disambiguated, pro- and anti-stereo questions
LIMIT = 40  # rows of each file (x 11 choices): lm-eval at batch size 1 takes minutes per 100 rows
OURS = {"esbbq_gender": "esbbq-gender", "cabbq_gender": "cabbq-gender"}
METRICS = ("acc_ambig", "acc_disambig", "bias_score_ambig", "bias_score_disambig")


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("transformers")
    try:
        lmeval_venv.provision_lm_eval()
    except lmeval_venv.EngineUnavailable as exc:
        pytest.skip(f"reference: {exc}".splitlines()[0])
    return lmeval_venv.build_reference_model(tmp_path_factory.mktemp("tiny") / "model", texts="es-ca")


@pytest.fixture(scope="module")
def runs(tiny_model: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    out = tmp_path_factory.mktemp("lmeval")
    return {task: lmeval_venv.run_task(tiny_model, task, out, limit=LIMIT) for task in OURS}


@pytest.fixture(scope="module")
def ours(tiny_model: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """genderscope's run of each task through the CLI: metrics, loglikelihood attempts, wall seconds."""
    out = tmp_path_factory.mktemp("ours")
    got = {}
    for lm_task, task in OURS.items():
        folder = out / task
        cmd = [sys.executable, "-c", "from genderscope.cli.app import main; main()", "run", task, "--model",
               f"hf-causal:{tiny_model}", "--mode", "lm-eval", "--limit", str(LIMIT), "--no-cache",
               "--out", str(folder)]  # fmt: skip
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
        wall = time.perf_counter() - t0
        assert proc.returncode == 0, proc.stderr[-2000:]
        metrics = json.loads((folder / "results.json").read_text())["tasks"][task]["metrics"]
        lines = [json.loads(x) for x in (folder / "attempts.jsonl").read_text().splitlines()]
        got[lm_task] = {"metrics": metrics, "attempts": lines, "wall": wall}
    return got


@pytest.mark.parametrize("lm_task", sorted(OURS))
def test_requests_are_lmevals(lm_task: str, runs: dict[str, dict[str, Any]]) -> None:
    """Our items (library code) pose lm-eval's exact requests, document by document."""
    from genderscope.data.registry import DataRegistry
    from genderscope.tasks.esbbq.task import CaBbqGenderTask, EsBbqGenderTask, item_of
    from genderscope.tasks.scored.jsonl_rows import csv_rows

    cls = EsBbqGenderTask if lm_task == "esbbq_gender" else CaBbqGenderTask
    rows = [row for _n, row in csv_rows(DataRegistry().path(cls.data_file))][:LIMIT]
    samples = runs[lm_task]["samples"]
    assert len(samples) == LIMIT
    for s, row in zip(samples, rows):
        it = item_of(cls.name, cls.language, row)
        want = [[it.candidates.context, c] for c in it.candidates.continuations]
        assert s["requests"] == want, s["doc_id"]


@pytest.mark.parametrize("lm_task", sorted(OURS))
def test_genderscope_equals_lm_eval(
    lm_task: str, runs: dict[str, dict[str, Any]], ours: dict[str, dict[str, Any]]
) -> None:
    """Each choice's log-likelihood within 2e-4 nats (batched float32 forwards) and the four metrics equal
    (ratios of counts: 1e-12)."""
    ref, got = runs[lm_task], ours[lm_task]
    attempts = [a for a in got["attempts"] if a.get("request_kind") == "loglikelihood"]
    assert len(attempts) == len(ref["samples"]) == LIMIT
    for s, a in zip(ref["samples"], attempts):
        assert a["response"]["logprobs"] == pytest.approx(s["loglikelihoods"], abs=2e-4), a["item_id"]
    for name in METRICS:
        want = float(ref["metrics"][f"{name},none"])
        assert got["metrics"][name]["value"] == pytest.approx(want, abs=1e-12), (name, want)
    print(f"{lm_task}: lm-eval {ref['wall_seconds']:.1f} s, genderscope {got['wall']:.1f} s, "
          + json.dumps({k: got["metrics"][k]["value"] for k in METRICS}))  # fmt: skip
