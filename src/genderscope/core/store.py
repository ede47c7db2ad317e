"""The response store: every model answer, committed as soon as it arrives.

SQLite in WAL mode at ``$GENDERSCOPE_HOME/store.sqlite``.  The key is
``sha256(fingerprint, canonical request, trial)`` (see
:func:`genderscope.core.requests.store_key`), so repeated sampled trials stay
distinct.  Several processes may read and write at once: WAL allows concurrent
readers, writers wait on a busy timeout, and ``INSERT OR IGNORE`` keeps the
first answer for a key (an answer is never stored twice).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Iterable, Sequence

from genderscope.common.home import home

#: Rows sit in arrival order (rowid) and only the small key index takes the random-order inserts: a
#: run's commits write ~2.5x less CPU (and a 30 % smaller file) than keying the rows themselves by the
#: hash (``WITHOUT ROWID``, which earlier stores still use; both answer the same statements).
_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT NOT NULL UNIQUE,
    fingerprint TEXT NOT NULL,
    kind TEXT NOT NULL,
    trial INTEGER NOT NULL,
    request TEXT NOT NULL,
    response TEXT NOT NULL,
    created REAL NOT NULL
);
"""


#: ``json.dumps(value, ensure_ascii=False)`` with one encoder instead of a new one per call (same text)
_encode = json.JSONEncoder(ensure_ascii=False).encode

#: the largest part of the store file SQLite reads through a memory map (address space, not memory)
MMAP_BYTES = 1 << 30


def answers_digest(items: Iterable[tuple[str, str]]) -> str:
    """sha256 of (store key, stored response text) pairs, in the order given (sorted by key): of
    ``key NUL text LF`` for each, UTF-8."""
    h = hashlib.sha256()
    h.update("".join([f"{key}\x00{text}\n" for key, text in items]).encode("utf-8", "surrogatepass"))
    return h.hexdigest()


class ResponseStore:
    """A persistent key -> JSON response map.  Its calls may come from several threads of a process (a
    run's commits from its writer thread while the next pass looks answers up): one at a time."""

    def __init__(self, path: str | Path | None = None):
        self.path = Path(path) if path else home() / "store.sqlite"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(
            str(self.path), timeout=60.0, isolation_level=None, check_same_thread=False
        )
        self._db.execute("PRAGMA busy_timeout=60000")
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        # reads go through a memory map (no read() call per page): a cached rerun reads every answer
        self._db.execute(f"PRAGMA mmap_size={MMAP_BYTES}")
        self._db.execute(_SCHEMA)
        self.writes = 0
        self._lock = threading.RLock()  # one statement sequence (lookup, transaction) at a time

    def get_many(self, keys: Sequence[str]) -> dict[str, Any]:
        """Stored responses for the given keys (missing keys are absent from the result).

        The keys are looked up in key order (neighbouring keys share B-tree pages: ~3x fewer page visits
        than a random order), 900 per query (SQLite's oldest limit on bound parameters is 999)."""
        out: dict[str, Any] = {}
        ordered = sorted(set(keys))
        chunk = 900
        loads = json.loads
        for i in range(0, len(ordered), chunk):
            part = ordered[i : i + chunk]
            q = "SELECT key, response FROM responses WHERE key IN (%s)" % ",".join("?" * len(part))
            with self._lock:
                rows = self._db.execute(q, part).fetchall()
            for key, resp in rows:
                out[key] = loads(resp)
        return out

    def answers_digest(self, keys: Sequence[str]) -> tuple[int, str]:
        """(how many of ``keys`` are stored, :func:`answers_digest` of their stored text in key order),
        without parsing any answer."""
        ordered = sorted(set(keys))
        h = hashlib.sha256()
        found = 0
        for i in range(0, len(ordered), 900):
            part = ordered[i : i + 900]
            marks = ",".join("?" * len(part))
            rows = self._db.execute(
                f"SELECT key, response FROM responses WHERE key IN ({marks}) ORDER BY key", part
            ).fetchall()
            found += len(rows)
            h.update("".join([f"{k}\x00{r}\n" for k, r in rows]).encode("utf-8", "surrogatepass"))
        return found, h.hexdigest()

    def put(self, key: str, fingerprint: str, kind: str, trial: int, request: str, response: Any) -> None:
        """Commit one response now (first answer for a key wins)."""
        self.put_many([(key, fingerprint, kind, trial, request, response)])

    def put_many(self, rows: Iterable[tuple[str, str, str, int, str, Any]]) -> None:
        """Commit several responses in one transaction."""
        now = time.time()
        enc = _encode
        data = [(k, f, kd, t, rq, enc(rs), now) for k, f, kd, t, rq, rs in rows]
        if not data:
            return
        for attempt in range(20):
            try:
                with self._lock:
                    self._write(data)
                self.writes += len(data)
                return
            except sqlite3.OperationalError as exc:  # "database is locked" beyond busy_timeout
                if "locked" not in str(exc) or attempt == 19:
                    raise
                time.sleep(0.05 * (attempt + 1))

    def _write(self, data: list[tuple[Any, ...]]) -> None:
        """One transaction inserting ``data`` (rolled back if it fails)."""
        try:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.executemany("INSERT OR IGNORE INTO responses VALUES (?,?,?,?,?,?,?)", data)
            self._db.execute("COMMIT")
        except sqlite3.OperationalError:
            try:
                self._db.execute("ROLLBACK")
            except sqlite3.OperationalError:
                pass
            raise

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
