"""Shared record fields (core.jsonutil.SharedFields / JoinedRecord) and the attempts.jsonl fast path."""

from __future__ import annotations

import json
import math

from genderscope.core.engine import RunOutput, TaskRun
from genderscope.core.evidence import ReportFacts
from genderscope.core.jsonutil import JoinedRecord, SharedFields, encode_json
from genderscope.core.request_value import CHAT, Request
from genderscope.core.requests import Attempt, AttemptResult
from genderscope.core.runner import RunCounts
from genderscope.core.task import TaskResult


def test_shared_fields_cache_and_joined_mapping():
    a = SharedFields({"line": 3, "entities": ["cook", "nurse"], "note": "ünï"})
    b = SharedFields({"class": "correct", "x": None})
    assert a.members() == '"line": 3, "entities": ["cook", "nurse"], "note": "ünï"'
    assert a.members() is a.members()  # cached
    assert a.members(frozenset({"line"})) is None
    j = JoinedRecord(a, b)
    assert dict(j) == {**a, **b} and len(j) == 5 and j["x"] is None and "class" in j and "y" not in j
    assert "{" + j.json_members() + "}" == encode_json({**a, **b})
    assert JoinedRecord(a, SharedFields()).json_members() == a.members()
    assert JoinedRecord(a, b).json_members(frozenset({"class"})) is None


class _Named:
    name = "t"
    report_facts = ReportFacts()


def _output(tmp_path, records):
    atts = [
        Attempt(f"t/{i}", 1, Request(CHAT, {"messages": [{"role": "user", "content": f"q{i}"}]}))
        for i in range(len(records))
    ]
    results = [AttemptResult(a, response=f"r{i}") for i, a in enumerate(atts)]
    run = TaskRun(task=_Named(), result=TaskResult(records=records), results=results, counts=RunCounts())
    from genderscope.core.runlog import ModelInfo, new_manifest

    return RunOutput(out_dir=tmp_path, runs=[run], manifest=new_manifest(model=ModelInfo("m")))


def test_write_fast_path_equals_merged_dicts(tmp_path):
    info = SharedFields({"line": 1, "label": "pro"})
    records = [
        JoinedRecord(info, SharedFields({"answer_class": "correct"})),
        JoinedRecord(info, SharedFields({"prompt": "task's own prompt"})),  # clashes: task value wins
        JoinedRecord(info, SharedFields({"score": math.nan})),  # NaN: written as null
        {"plain": True},
    ]
    out = _output(tmp_path, records)
    out.write()
    lines = (tmp_path / "attempts.jsonl").read_text().splitlines()
    merged = out.attempt_records()
    assert lines[0] == json.dumps(merged[0], ensure_ascii=False)
    assert json.loads(lines[1])["prompt"] == "task's own prompt" and list(json.loads(lines[1]))[3] == "prompt"
    assert json.loads(lines[2])["score"] is None
    assert json.loads(lines[3])["plain"] is True and json.loads(lines[3])["response"] == "r3"


def test_attempt_lines_are_encoded_when_a_task_is_scored(tmp_path):
    """A written run encodes each task's attempts.jsonl lines as the task is scored (while other tasks'
    requests may still be in flight); write() only joins them, and the file is the lines of the records."""
    from genderscope.core.engine import run_tasks

    out = run_tasks(["gest", "dawinobias"], "random", limit=2, out=tmp_path / "r", progress=False)
    assert all(r.encoded is not None for r in out.runs)
    text = (tmp_path / "r" / "attempts.jsonl").read_bytes()
    assert text == b"".join(r.encoded[0] for r in out.runs)  # type: ignore[index]
    assert [json.loads(x) for x in text.decode().splitlines()] == out.attempt_records()
    unwritten = run_tasks(["gest"], "random", limit=2, write=False, progress=False)
    assert all(r.encoded is None for r in unwritten.runs)
