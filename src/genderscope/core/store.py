"""The response store: every model answer, committed as soon as it arrives.

SQLite in WAL mode at ``$GENDERSCOPE_HOME/store.sqlite``.  The key is
``sha256(fingerprint, canonical request, trial)`` (see
:func:`genderscope.core.requests.store_key`), so repeated sampled trials stay
distinct.  Several processes may read and write at once: WAL allows concurrent
readers, writers wait on a busy timeout, and ``INSERT OR IGNORE`` keeps the
first answer for a key (an answer is never stored twice).
"""

from __future__ import annotations

import json
import queue
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Iterable, Sequence

from genderscope.core.paths import home

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    fingerprint TEXT NOT NULL,
    kind TEXT NOT NULL,
    trial INTEGER NOT NULL,
    request TEXT NOT NULL,
    response TEXT NOT NULL,
    created REAL NOT NULL
) WITHOUT ROWID;
"""


class ResponseStore:
    """A persistent key -> JSON response map (thread-safe for one writer thread per process)."""

    def __init__(self, path: str | Path | None = None):
        self.path = Path(path) if path else home() / "store.sqlite"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(
            str(self.path), timeout=60.0, isolation_level=None, check_same_thread=False
        )
        self._db.execute("PRAGMA busy_timeout=60000")
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(_SCHEMA)
        self.writes = 0

    def get_many(self, keys: Sequence[str]) -> dict[str, Any]:
        """Stored responses for the given keys (missing keys are absent from the result)."""
        out: dict[str, Any] = {}
        chunk = 900
        for i in range(0, len(keys), chunk):
            part = list(keys[i : i + chunk])
            q = "SELECT key, response FROM responses WHERE key IN (%s)" % ",".join("?" * len(part))
            for key, resp in self._db.execute(q, part):
                out[key] = json.loads(resp)
        return out

    def put(self, key: str, fingerprint: str, kind: str, trial: int, request: str, response: Any) -> None:
        """Commit one response now (first answer for a key wins)."""
        self.put_many([(key, fingerprint, kind, trial, request, response)])

    def put_many(self, rows: Iterable[tuple[str, str, str, int, str, Any]]) -> None:
        """Commit several responses in one transaction."""
        now = time.time()
        data = [(k, f, kd, t, rq, json.dumps(rs, ensure_ascii=False), now) for k, f, kd, t, rq, rs in rows]
        if not data:
            return
        for attempt in range(20):
            try:
                self._db.execute("BEGIN IMMEDIATE")
                self._db.executemany("INSERT OR IGNORE INTO responses VALUES (?,?,?,?,?,?,?)", data)
                self._db.execute("COMMIT")
                self.writes += len(data)
                return
            except sqlite3.OperationalError as exc:  # "database is locked" beyond busy_timeout
                try:
                    self._db.execute("ROLLBACK")
                except sqlite3.OperationalError:
                    pass
                if "locked" not in str(exc) or attempt == 19:
                    raise
                time.sleep(0.05 * (attempt + 1))

    def writer(self, interval: float = 0.0) -> StoreWriter:
        """A background committer for this store (see :class:`StoreWriter`); close it when done."""
        return StoreWriter(self.path, interval)

    def info(self) -> dict[str, Any]:
        """Path, size on disk and number of responses per backend fingerprint."""
        rows = self._db.execute(
            "SELECT fingerprint, kind, COUNT(*) FROM responses GROUP BY fingerprint, kind ORDER BY 3 DESC"
        ).fetchall()
        size = sum(p.stat().st_size for p in self.path.parent.glob(self.path.name + "*") if p.exists())
        total = sum(r[2] for r in rows)
        return {
            "path": str(self.path),
            "bytes": size,
            "responses": total,
            "by_model": [{"fingerprint": f, "kind": k, "responses": n} for f, k, n in rows],
        }

    def clear(self, fingerprint_prefix: str | None = None) -> int:
        """Delete all responses, or those whose fingerprint starts with the prefix; returns the count."""
        if fingerprint_prefix:
            cur = self._db.execute(
                "DELETE FROM responses WHERE fingerprint LIKE ?", (fingerprint_prefix + "%",)
            )
        else:
            cur = self._db.execute("DELETE FROM responses")
        n = cur.rowcount
        self._db.execute("VACUUM")
        return n

    def close(self) -> None:
        self._db.close()


Row = tuple[str, str, str, int, str, Any]


class StoreWriter:
    """Commits answers from a background thread with its own connection: each transaction takes every
    answer queued since the previous one began (``interval`` > 0 also waits that long between
    transactions; the runner uses 0: the next commit starts as soon as the last one ends).

    The event loop only queues an answer; while one transaction commits, the answers that arrive meanwhile
    wait for the next, so under load commits hold several answers. A killed run loses at most the answers
    of the commit under way (they are asked again). :meth:`close` commits everything still queued and
    re-raises a commit error; the runner calls it in a ``finally``.
    """

    def __init__(self, path: Path, interval: float = 0.0):
        self._store = ResponseStore(path)
        self._queue: queue.SimpleQueue[Row | None] = queue.SimpleQueue()
        self._interval = interval
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._loop, name="store-writer", daemon=True)
        self._thread.start()

    def put(self, key: str, fingerprint: str, kind: str, trial: int, request: str, response: Any) -> None:
        """Queue one answer for the next commit."""
        self._queue.put((key, fingerprint, kind, trial, request, response))

    def _loop(self) -> None:
        done = False
        while not done:
            first = self._queue.get()
            started = time.monotonic()
            rows: list[Row] = []
            if first is None:
                done = True
            else:
                rows.append(first)
                if self._interval > 0:
                    time.sleep(max(0.0, self._interval - (time.monotonic() - started)))
            while True:
                try:
                    row = self._queue.get_nowait()
                except queue.Empty:
                    break
                if row is None:
                    done = True
                else:
                    rows.append(row)
            self._commit(rows)

    def _commit(self, rows: list[Row]) -> None:
        """One transaction; if it fails, each row alone, so one bad row loses only itself."""
        try:
            self._store.put_many(rows)
            return
        except Exception as exc:  # kept for close()
            self._error = self._error or exc
        for row in rows if len(rows) > 1 else []:
            try:
                self._store.put_many([row])
            except Exception:
                pass

    def close(self) -> None:
        """Commit what is queued, stop the thread, and raise the first commit error (if any)."""
        self._queue.put(None)
        self._thread.join()
        self._store._db.close()
        if self._error is not None:
            raise self._error
