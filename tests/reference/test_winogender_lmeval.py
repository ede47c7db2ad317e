"""``winogender --mode lm-eval`` against lm-evaluation-harness 0.4.13 itself (tests/reference/lmeval_venv.py,
offline on the mirror's files) on a tiny causal model: the seven winogender tasks with ``--limit``, the same
requests, log-likelihoods and ``acc`` / ``acc_stderr``.  lm-eval's ``gotcha`` config is the hub set's
gotcha.tsv, the paper's Table 2 rule (240 rows; docs/decisions.md), so the gotcha data are built with it.
Slow: seven lm_eval processes (``make test-reference``); skipped where the harness is absent."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
lmeval_venv = pytest.importorskip(
    "lmeval_venv", reason="tests/reference/lmeval_venv.py (lm-eval harness) absent"
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(3600)]

LIMIT = 12
TASKS = ("winogender_all", "winogender_male", "winogender_female", "winogender_neutral", "winogender_gotcha",
         "winogender_gotcha_male", "winogender_gotcha_female")  # fmt: skip


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("transformers")
    try:
        lmeval_venv.provision_lm_eval()
    except lmeval_venv.EngineUnavailable as exc:
        pytest.skip(f"reference: {exc}".splitlines()[0])
    from genderscope.demo_models import build_tiny_causal, words_of

    rows = lmeval_venv.winogender_rows()
    texts = [f"{r['sentence']} {r['occupation']} {r['participant']}" for r in rows]
    texts.append("\u2018 He She They His Her Their Him Them \u2019 refers to the")
    return build_tiny_causal(tmp_path_factory.mktemp("tiny") / "m", words_of(texts), seed=3)


@pytest.fixture(scope="module")
def reference(model: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    mp = pytest.MonkeyPatch()
    mp.setitem(
        lmeval_venv.DATA_BUILDERS, "winogender_gotcha", lambda: lmeval_venv.winogender_gotcha_rows("paper")
    )
    out = tmp_path_factory.mktemp("lmeval")
    try:
        return {t: lmeval_venv.run_task(model, t, out, limit=LIMIT) for t in TASKS}
    finally:
        mp.undo()


def test_same_requests_loglikelihoods_and_acc(
    model: Path, reference: dict, tmp_path: Path, data_registry
) -> None:
    from genderscope.core.engine import run_tasks
    from genderscope.tasks.winogender.data import SENTENCES, STATS, read_sentences
    from genderscope.tasks.winogender.task import prompt

    data = {s.sentid: s for s in read_sentences(data_registry.path(SENTENCES), data_registry.path(STATS))}

    run_tasks(["winogender"], f"hf-causal:{model}", limit=LIMIT, out=tmp_path / "o", progress=False,
              options={"mode": "lm-eval", "n_boot": 0})  # fmt: skip
    block = json.loads((tmp_path / "o" / "results.json").read_text())["tasks"]["winogender"]
    ours = {}
    for line in (tmp_path / "o" / "attempts.jsonl").read_text().splitlines():
        a = json.loads(line)
        ours[a["item_id"].split("/", 1)[1]] = a["response"]["logprobs"]
    for task, got in reference.items():
        assert len(got["samples"]) == LIMIT
        for smp in got["samples"]:
            sid = smp["doc"]["sentid"]
            choice = prompt(data[sid])
            assert smp["requests"] == [[choice.context, c] for c in choice.continuations]
            assert ours[sid] == pytest.approx(smp["loglikelihoods"], abs=1e-4)
        assert block["metrics"][f"{task}/acc"]["value"] == got["metrics"]["acc,none"], task
        assert block["lm_eval"][task]["acc_stderr,none"] == pytest.approx(got["metrics"]["acc_stderr,none"])
