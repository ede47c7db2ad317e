"""Task memos (core/taskmemo.py): a rerun from the store takes a task's outputs from its memo, byte for
byte what the rerun writes without it, and never when an input or a stored answer changed."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from genderscope.backends.random_model import RandomBackend
from genderscope.core import taskmemo
from genderscope.core.engine import run_spec
from genderscope.core.runspec import RunSpec

TASK = "direct"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private $GENDERSCOPE_HOME; the null model goes through the store as a served model does."""
    monkeypatch.setenv("GENDERSCOPE_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(RandomBackend, "cacheable", True)
    return tmp_path / "home"


def run(out: Path, seed: int = 1, **options: object) -> object:
    spec = RunSpec.build([TASK], "random", options=dict(options), limit=6, seed=seed)
    return run_spec(spec, out=out, progress=False, reuse=True)


def outputs(out: Path) -> tuple[bytes, dict]:
    results = json.loads((out / "results.json").read_text())
    results.pop("created", None)
    return (out / "attempts.jsonl").read_bytes(), results


def test_rerun_from_memo_writes_what_the_store_rerun_writes(home: Path, tmp_path: Path) -> None:
    first = run(tmp_path / "a")
    assert first.runs[0].memo is None and first.runs[0].counts.requests > 0
    assert list((home / taskmemo.MEMO_DIR).glob("*.pickle"))
    for p in (home / taskmemo.MEMO_DIR).glob("*.pickle"):  # the rerun without memos, for comparison
        p.rename(p.with_suffix(".kept"))
    plain = run(tmp_path / "b")
    assert plain.runs[0].memo is None and plain.runs[0].counts.requests == 0
    again = run(tmp_path / "c")
    r = again.runs[0]
    assert r.memo is not None and r.counts.cache_hits == r.counts.attempts == plain.runs[0].counts.attempts
    assert outputs(tmp_path / "c") == outputs(tmp_path / "b")
    assert outputs(tmp_path / "c")[1]["tasks"] == outputs(tmp_path / "a")[1]["tasks"]
    assert again.attempt_records() == plain.attempt_records()


def test_a_changed_stored_answer_is_not_served_from_the_memo(home: Path, tmp_path: Path) -> None:
    run(tmp_path / "a")
    db = sqlite3.connect(home / "store.sqlite")
    key, response = db.execute("SELECT key, response FROM responses ORDER BY key LIMIT 1").fetchone()
    changed = json.dumps(json.loads(response) + " (changed)")
    db.execute("UPDATE responses SET response = ? WHERE key = ?", (changed, key))
    db.commit()
    db.close()
    again = run(tmp_path / "b")
    assert again.runs[0].memo is None
    assert "(changed)" in (tmp_path / "b" / "attempts.jsonl").read_text()


def test_a_missing_stored_answer_is_not_served_from_the_memo(home: Path, tmp_path: Path) -> None:
    run(tmp_path / "a")
    db = sqlite3.connect(home / "store.sqlite")
    db.execute("DELETE FROM responses WHERE key = (SELECT MIN(key) FROM responses)")
    db.commit()
    db.close()
    again = run(tmp_path / "b")
    assert again.runs[0].memo is None and again.runs[0].counts.requests == 1


@pytest.mark.parametrize("change", [{"seed": 2}, {"max_tokens": 77}, {"temperature": 0.5}])
def test_a_changed_seed_or_option_takes_another_memo(home: Path, tmp_path: Path, change: dict) -> None:
    run(tmp_path / "a")
    seed = int(change.pop("seed", 1))  # type: ignore[call-overload]
    again = run(tmp_path / "b", seed=seed, **change)
    assert again.runs[0].memo is None
    assert run(tmp_path / "c", seed=seed, **change).runs[0].memo is not None  # its own memo now


def test_a_changed_data_pin_or_code_changes_the_key(home: Path, tmp_path: Path, monkeypatch) -> None:
    out = run(tmp_path / "a")
    task, fp, data = out.runs[0].task, "random", out.runs[0].task.ctx.data
    key = taskmemo.memo_key(task, fp, data)
    assert taskmemo.memo_key(task, "random:other", data) != key
    name = task.datasets()[0]
    pins = {n: data.sha256(n) for n in task.datasets()}
    monkeypatch.setattr(data, "sha256", lambda n: "0" * 64 if n == name else pins[n])
    assert taskmemo.memo_key(task, fp, data) != key
    monkeypatch.undo()
    monkeypatch.setattr(taskmemo, "_package_digest", lambda root: "another build")
    assert taskmemo.memo_key(task, fp, data) != key


def test_package_digest_follows_every_file(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "sub" / "data.json").write_text("{}")
    before = taskmemo._package_digest.__wrapped__(str(tmp_path))
    (tmp_path / "sub" / "data.json").write_text('{"a": 1}')
    assert taskmemo._package_digest.__wrapped__(str(tmp_path)) != before


def test_an_unreadable_memo_runs_the_task(home: Path, tmp_path: Path) -> None:
    run(tmp_path / "a")
    for p in (home / taskmemo.MEMO_DIR).glob("*.pickle"):
        p.write_bytes(b"not a pickle")
    again = run(tmp_path / "b")
    assert again.runs[0].memo is None and again.runs[0].counts.cache_hits == again.runs[0].counts.attempts


def test_a_memo_that_cannot_be_written_leaves_the_run_as_it_is(
    home: Path, tmp_path: Path, monkeypatch
) -> None:
    def full_disk(key: str, memo: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(taskmemo, "save_memo", full_disk)
    out = run(tmp_path / "a")
    assert out.runs[0].counts.attempts == 6 and (tmp_path / "a" / "results.json").exists()
    assert not list((home / taskmemo.MEMO_DIR).glob("*.pickle"))
