"""What the response store remembers about batch jobs (two tables in the store's SQLite file).

``batch_jobs``: one row per batch file a run submitted, recorded the moment it exists, so a killed
run attaches to its batches instead of submitting again.  ``state`` moves ``new`` (keys chosen, nothing
uploaded) -> ``uploaded`` (``file_id`` known) -> ``submitted`` (``batch_id`` known) -> ``done``
(answers read and stored) or ``failed`` (the provider refused the batch).  ``keys`` are the store keys
(= the lines' ``custom_id``) as a JSON list.

``batch_requests``: the requests written to a batch file for another runner (``genderscope batch
write``), by store key, so ``genderscope batch read`` can store the answers of its output file.
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from genderscope.core.store import ResponseStore

_SCHEMA = """
CREATE TABLE IF NOT EXISTS batch_jobs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    fingerprint TEXT NOT NULL,
    endpoint TEXT NOT NULL,
    url TEXT NOT NULL,
    round INTEGER NOT NULL,
    keys TEXT NOT NULL,
    state TEXT NOT NULL,
    file_id TEXT,
    batch_id TEXT,
    created REAL NOT NULL,
    updated REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS batch_requests (
    key TEXT PRIMARY KEY,
    fingerprint TEXT NOT NULL,
    kind TEXT NOT NULL,
    trial INTEGER NOT NULL,
    request TEXT NOT NULL,
    created REAL NOT NULL
) WITHOUT ROWID;
"""

OPEN_STATES = ("new", "uploaded", "submitted")


@dataclass
class BatchRecord:
    """One row of ``batch_jobs``: ``round`` 0 = first submission, 1.. = follow-ups of failed lines."""

    id: int
    fingerprint: str
    endpoint: str
    url: str
    round: int
    keys: list[str]
    state: str
    file_id: str | None
    batch_id: str | None


class BatchLedger:
    """The batch tables of a :class:`ResponseStore` (same file, same connection)."""

    def __init__(self, store: ResponseStore):
        self.store = store
        self._db: sqlite3.Connection = store._db
        self._db.executescript(_SCHEMA)

    def _write(self, sql: str, args: Sequence[Any] | Iterable[Sequence[Any]], many: bool = False) -> int:
        for attempt in range(20):
            try:
                cur = self._db.executemany(sql, args) if many else self._db.execute(sql, args)  # type: ignore[arg-type]
                return int(cur.lastrowid or 0)
            except sqlite3.OperationalError as exc:  # "database is locked" beyond busy_timeout
                if "locked" not in str(exc) or attempt == 19:
                    raise
                time.sleep(0.05 * (attempt + 1))
        return 0

    def add(self, fingerprint: str, endpoint: str, url: str, round_: int, keys: Sequence[str]) -> BatchRecord:
        """Record a batch about to be uploaded (state ``new``)."""
        now = time.time()
        rid = self._write(
            "INSERT INTO batch_jobs (fingerprint, endpoint, url, round, keys, state, created, updated) "
            "VALUES (?,?,?,?,?,?,?,?)",
            (fingerprint, endpoint, url, round_, json.dumps(list(keys)), "new", now, now),
        )
        return BatchRecord(rid, fingerprint, endpoint, url, round_, list(keys), "new", None, None)

    def update(self, rec: BatchRecord, **fields: Any) -> None:
        """Set ``state``, ``file_id`` and/or ``batch_id`` of a record (committed at once)."""
        for name, value in fields.items():
            if name not in ("state", "file_id", "batch_id"):
                raise ValueError(f"batch_jobs has no updatable field {name!r}")
            setattr(rec, name, value)
        cols = ", ".join(f"{n} = ?" for n in fields)
        self._write(
            f"UPDATE batch_jobs SET {cols}, updated = ? WHERE id = ?", (*fields.values(), time.time(), rec.id)
        )

    def open_batches(self, fingerprint: str, endpoint: str) -> list[BatchRecord]:
        """Records of this model and provider that were never read to the end, oldest first."""
        rows = self._db.execute(
            "SELECT id, fingerprint, endpoint, url, round, keys, state, file_id, batch_id FROM batch_jobs "
            f"WHERE fingerprint = ? AND endpoint = ? AND state IN ({','.join('?' * len(OPEN_STATES))}) "
            "ORDER BY id",
            (fingerprint, endpoint, *OPEN_STATES),
        ).fetchall()
        return [BatchRecord(r[0], r[1], r[2], r[3], r[4], json.loads(r[5]), r[6], r[7], r[8]) for r in rows]

    def all_batches(self) -> list[dict[str, Any]]:
        """Every record, newest first, without its keys (for listings)."""
        rows = self._db.execute(
            "SELECT id, fingerprint, endpoint, url, round, state, file_id, batch_id, created, "
            "json_array_length(keys) FROM batch_jobs ORDER BY id DESC"
        ).fetchall()
        names = ("id", "fingerprint", "endpoint", "url", "round", "state", "file_id", "batch_id", "created")
        return [{**dict(zip(names, r[:9])), "requests": r[9]} for r in rows]

    # -- requests written for another runner ---------------------------------------------------
    def put_requests(self, rows: Iterable[tuple[str, str, str, int, str]]) -> None:
        """Remember (key, fingerprint, kind, trial, canonical request) of lines written to a file."""
        now = time.time()
        data = [(*r, now) for r in rows]
        self._db.execute("BEGIN IMMEDIATE")
        try:
            self._write("INSERT OR IGNORE INTO batch_requests VALUES (?,?,?,?,?,?)", data, many=True)
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise

    def get_requests(self, keys: Sequence[str]) -> dict[str, tuple[str, str, int, str]]:
        """key -> (fingerprint, kind, trial, canonical request) for the keys written before."""
        out: dict[str, tuple[str, str, int, str]] = {}
        for i in range(0, len(keys), 900):
            part = list(keys[i : i + 900])
            q = (
                "SELECT key, fingerprint, kind, trial, request FROM batch_requests WHERE key IN (%s)"
                % ",".join("?" * len(part))
            )
            for k, fp, kind, trial, req in self._db.execute(q, part):
                out[k] = (fp, kind, trial, req)
        return out
