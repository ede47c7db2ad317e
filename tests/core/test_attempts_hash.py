"""attempts.jsonl records each attempt's request kind and sha256; replay's stale check compares that hash
(prompt text on lines without one); run folders written before (attempts schema version 1) still replay
and reparse identically."""

from __future__ import annotations

from repo_paths import FIXTURES
import json
from pathlib import Path
from typing import Any

import pytest

from genderscope.core.engine import run_tasks
from genderscope.common.errors import DataError
from genderscope.core.reparse import reparse_run
from genderscope.core.request_value import canonical_json
from genderscope.core.requests import request_sha256
from genderscope.core.runlog import ATTEMPTS_SCHEMA_VERSION, read_manifest

from _run_versions import strip_to_v1

V1_RUN = FIXTURES / "runs" / "v1-random"  # written by genderscope before the change


def metric_values(run_dir: Path, task: str | None = None) -> dict[str, Any]:
    """{task: {metric: (value, ci_low, ci_high)}} of a run folder (or of one task's subfolder)."""
    tasks = json.loads((run_dir / "results.json").read_text(encoding="utf-8"))["tasks"]
    return {
        t: {m: (e.get("value"), e.get("ci_low"), e.get("ci_high")) for m, e in block["metrics"].items()}
        for t, block in tasks.items()
        if task is None or t == task
    }


def record(tmp_path: Path, name: str, **kw: Any) -> Path:
    out = tmp_path / name
    opts = {"n_boot": 20, **kw.pop("options", {})}
    run_tasks(["gest", "dawinobias"], "random", limit=2, out=out, options=opts, progress=False, **kw)
    return out


def test_every_line_records_its_request_kind_and_hash(tmp_path):
    run = run_tasks(["gest", "dawinobias"], "random", limit=2, out=tmp_path / "r", progress=False)
    lines = [json.loads(x) for x in (tmp_path / "r" / "attempts.jsonl").read_text().splitlines()]
    results = [ar for r in run.runs for ar in r.results]
    assert len(lines) == len(results) > 0
    for line, ar in zip(lines, results):
        req = ar.attempt.request
        assert line["request_kind"] == req.kind
        assert line["request_sha256"] == request_sha256(req)
        canonical = canonical_json({"kind": req.kind, "payload": req.payload})
        assert len(line["request_sha256"]) == 64 and canonical == req.canonical()
    assert {x["request_kind"] for x in lines} >= {"chat", "tokenize", "fill_mask"}
    manifest = read_manifest(tmp_path / "r")
    assert manifest is not None and manifest.attempts_schema_version == ATTEMPTS_SCHEMA_VERSION == 2


def test_the_stale_check_compares_the_request_hash(tmp_path):
    """A run recorded at temperature 0.7 asked other requests than one at 1.0 (same prompts): the hash
    tells them apart, the prompt text cannot."""
    rec = run_tasks(["gest"], "random", limit=2, out=tmp_path / "rec", temperature=0.7, progress=False)
    attempts = tmp_path / "rec" / "attempts.jsonl"
    replay = f"replay:{attempts}"
    with pytest.raises(DataError, match=r"stale cache entry gest/.*#1: .* different request .* for 12 of 12"):
        run_tasks(["gest"], replay, limit=2, temperature=1.0, write=False, progress=False)
    used = run_tasks(["gest"], replay, limit=2, temperature=1.0, options={"replay_stale": "use"}, write=False)
    assert used.results_json()["tasks"] == rec.results_json()["tasks"]
    same = run_tasks(["gest"], replay, limit=2, temperature=0.7, write=False, progress=False)
    assert same.results_json()["tasks"] == rec.results_json()["tasks"]
    # one line's hash changed: exactly that attempt is stale
    lines = attempts.read_text().splitlines()
    row = json.loads(lines[4])
    row["request_sha256"] = "0" * 64
    lines[4] = json.dumps(row)
    edited = tmp_path / "edited.jsonl"
    edited.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError, match=f"stale cache entry {row['item_id']}#1: .* for 1 of 12 attempts"):
        run_tasks(["gest"], f"replay:{edited}", limit=2, temperature=0.7, write=False, progress=False)


def test_lines_without_a_hash_are_compared_by_prompt(tmp_path):
    rec = run_tasks(["gest"], "random", limit=2, out=tmp_path / "rec", temperature=0.7, progress=False)
    old = strip_to_v1(tmp_path / "rec", tmp_path / "old") / "attempts.jsonl"
    # the prompts are the same: a v1 line cannot tell the temperature, so it replays (as before)
    again = run_tasks(["gest"], f"replay:{old}", limit=2, temperature=1.0, write=False, progress=False)
    assert again.results_json()["tasks"] == rec.results_json()["tasks"]
    lines = old.read_text().splitlines()
    row = json.loads(lines[2])
    row["prompt"] = row["prompt"] + " (edited)"
    lines[2] = json.dumps(row)
    old.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError, match=f"stale cache entry {row['item_id']}#1"):
        run_tasks(["gest"], f"replay:{old}", limit=2, temperature=0.7, write=False, progress=False)


def test_a_folder_stripped_to_version_1_reparses_identically(tmp_path):
    new = record(tmp_path, "new")
    old = strip_to_v1(new, tmp_path / "old")
    assert "request_sha256" not in (old / "attempts.jsonl").read_text()
    assert read_manifest(old).attempts_schema_version is None  # type: ignore[union-attr]
    reparse_run(new, {}, tmp_path / "new-re")
    reparse_run(old, {}, tmp_path / "old-re")
    for task in ("gest", "dawinobias"):
        want = metric_values(new, task)
        assert want[task]
        assert metric_values(tmp_path / "new-re" / task) == want
        assert metric_values(tmp_path / "old-re" / task) == want


def test_a_run_folder_written_before_the_change_reparses_identically(tmp_path):
    """tests/fixtures/runs/v1-random: `genderscope run gest dawinobias abc --model random --limit 2
    --trials 1 --n-boot 20`, written by the code before attempts.jsonl carried request hashes."""
    assert "request_sha256" not in (V1_RUN / "attempts.jsonl").read_text()
    assert "attempts_schema_version" not in json.loads((V1_RUN / "run.json").read_text())
    outs = reparse_run(V1_RUN, {}, tmp_path / "re")
    assert [o.runs[0].counts.skipped for o in outs] == [0, 0, 0]
    want = metric_values(V1_RUN)
    assert set(want) == {"gest", "dawinobias", "abc"}
    for task in want:
        assert want[task] and metric_values(tmp_path / "re" / task) == {task: want[task]}
    # the reparsed folder is version 2: its lines carry the hashes the old lines lacked
    lines = [json.loads(x) for x in (tmp_path / "re" / "gest" / "attempts.jsonl").read_text().splitlines()]
    assert all(len(x["request_sha256"]) == 64 and x["request_kind"] == "chat" for x in lines)
