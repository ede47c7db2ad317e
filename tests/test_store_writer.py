"""The store's background committer: every queued answer is committed by close(), in few transactions."""

from __future__ import annotations

from pathlib import Path

import pytest

from genderscope.core.store import ResponseStore


def test_writer_commits_everything_on_close(tmp_path: Path) -> None:
    store = ResponseStore(tmp_path / "s.sqlite")
    writer = store.writer(interval=0.05)
    for i in range(500):
        writer.put(f"k{i}", "fp", "chat", 1, "{}", {"text": str(i)})
    writer.close()
    got = store.get_many([f"k{i}" for i in range(500)])
    assert len(got) == 500 and got["k7"] == {"text": "7"}


def test_first_answer_for_a_key_wins_and_errors_surface(tmp_path: Path) -> None:
    store = ResponseStore(tmp_path / "s.sqlite")
    store.put("k", "fp", "chat", 1, "{}", "first")
    writer = store.writer()
    writer.put("k", "fp", "chat", 1, "{}", "second")
    writer.put("bad", "fp", "chat", 1, "{}", object())  # not JSON: the commit fails
    writer.put("good", "fp", "chat", 1, "{}", "kept")
    with pytest.raises(TypeError):
        writer.close()
    assert store.get_many(["k", "good", "bad"]) == {"k": "first", "good": "kept"}
