"""The response store: idempotent puts, JSON round trips, and two writer processes at once."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from genderscope.core.request_value import CHAT, Request
from genderscope.core.requests import store_key
from genderscope.core.store import ResponseStore

WRITER = r"""
import sys, time
from genderscope.core.store import ResponseStore
path, name, n, start = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
store = ResponseStore(path)
while time.time() < start:
    time.sleep(0.001)
for i in range(n):
    store.put(f"{name}{i}", "fp", "chat", 1, "{}", f"{name} answer {i}")   # own keys, one commit each
    store.put(f"shared{i}", "fp", "chat", 1, "{}", f"{name} shared {i}")  # keys both processes write
    if i % 50 == 0:
        assert len(store.get_many([f"{name}{j}" for j in range(i + 1)])) == i + 1
store.close()
"""


def test_put_is_idempotent_first_answer_wins(tmp_path: Path) -> None:
    store = ResponseStore(tmp_path / "s.sqlite")
    store.put("k", "fp", "chat", 1, "{}", "first")
    store.put("k", "fp", "chat", 1, "{}", "second")
    store.put_many([("k", "fp", "chat", 1, "{}", "third"), ("k2", "fp", "chat", 2, "{}", None)])
    assert store.get_many(["k", "k2", "missing"]) == {"k": "first", "k2": None}
    assert store.info()["responses"] == 2
    store.close()


def test_json_values_round_trip_and_survive_reopening(tmp_path: Path) -> None:
    values = {"s": "Žena — (b) ✓", "n": None, "f": -1.25, "l": [0.5, [1, 2]], "d": {"a": [None, "x"]}}
    store = ResponseStore(tmp_path / "s.sqlite")
    store.put_many([(k, "fp", "chat", 1, "{}", v) for k, v in values.items()])
    store.close()
    again = ResponseStore(tmp_path / "s.sqlite")
    assert again.get_many(list(values)) == values
    again.close()


def test_store_key_separates_fingerprint_request_and_trial() -> None:
    req = Request(CHAT, {"messages": [{"role": "user", "content": "hi"}], "temperature": 1.0})
    hotter = Request(CHAT, {"messages": [{"role": "user", "content": "hi"}], "temperature": 0.5})
    hinted = Request(CHAT, dict(req.payload), hints={"choices": ["(a)"]})
    keys = {store_key("a", req, 1), store_key("b", req, 1), store_key("a", req, 2), store_key("a", hotter, 1)}
    assert len(keys) == 4
    assert store_key("a", hinted, 1) == store_key("a", req, 1), "hints are not part of the key"


def test_two_processes_writing_at_once_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite"
    ResponseStore(path).close()  # create the schema and WAL mode once
    n = 400
    start = time.time() + 1.5
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), name, str(n), str(start)],
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("a", "b")
    ]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    rows = dict(db.execute("SELECT key, response FROM responses").fetchall())
    db.close()
    assert len(rows) == 3 * n
    for i in range(n):
        assert rows[f"a{i}"] == f'"a answer {i}"' and rows[f"b{i}"] == f'"b answer {i}"'
        assert rows[f"shared{i}"] in (f'"a shared {i}"', f'"b shared {i}"')


OLD_SCHEMA = """CREATE TABLE responses (key TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, kind TEXT NOT NULL,
trial INTEGER NOT NULL, request TEXT NOT NULL, response TEXT NOT NULL, created REAL NOT NULL) WITHOUT ROWID"""


def test_a_store_written_with_the_earlier_layout_still_reads_and_keeps_first_answers(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    db = sqlite3.connect(path)
    db.execute(OLD_SCHEMA)
    db.execute("INSERT INTO responses VALUES ('k', 'fp', 'chat', 1, '{}', '\"old\"', 0)")
    db.commit()
    db.close()
    store = ResponseStore(path)
    store.put_many([("k", "fp", "chat", 1, "{}", "new"), ("k2", "fp", "chat", 1, "{}", "two")])
    assert store.get_many(["k", "k2"]) == {"k": "old", "k2": "two"}
    store.close()
    fresh = ResponseStore(tmp_path / "new.sqlite")
    fresh.put("k", "fp", "chat", 1, "{}", "a")
    fresh.put("k", "fp", "chat", 1, "{}", "b")
    assert fresh.get_many(["k"]) == {"k": "a"}
    fresh.close()
    db = sqlite3.connect(tmp_path / "new.sqlite")
    sql = db.execute("SELECT sql FROM sqlite_master WHERE name='responses'").fetchone()[0]
    assert "WITHOUT ROWID" not in sql  # new stores keep rows in arrival order


def test_the_store_writer_sleeps_while_no_answers_arrive(tmp_path: Path, monkeypatch) -> None:
    """No rows queued: the writer thread does not wake (it polled 10 times a second before); a queued row
    is committed within ~0.1 s, and close() commits the rest."""
    import threading

    from genderscope.core import runner

    wakes = []

    class CountingCondition(threading.Condition):
        def wait(self, timeout=None):  # type: ignore[override]
            got = super().wait(timeout)
            if threading.current_thread().name == "genderscope-store":
                wakes.append(timeout)
            return got

    monkeypatch.setattr(runner.threading, "Condition", CountingCondition)
    store = ResponseStore(tmp_path / "s.sqlite")
    writer = runner.StoreWriter(store)
    time.sleep(0.35)
    assert wakes == [], "an idle writer must not wake"
    req = Request(kind=CHAT, payload={"messages": [{"role": "user", "content": "hi"}]})
    key = store_key("fp", req, 1)
    writer.add((key, "fp", req.canonical(), 1, CHAT, "answer"))
    deadline = time.monotonic() + 5
    while not store.get_many([key]) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert store.get_many([key]) == {key: "answer"}, "a queued row is committed without close()"
    writer.close()
    store.close()
