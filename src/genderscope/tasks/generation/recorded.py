"""Judge mode: the generations of an earlier run of the same task, read from its attempts.jsonl.

``--generations RUN_DIR`` (what ``genderscope judge`` sets): the task asks the same generation attempts as
the recorded run, but each is a ``given`` request holding the recorded answer (answered by the runner, no
model), so the run's model only judges.  A recorded line must be for the same request (its
``request_sha256``): the judge run repeats the recorded run's task options, seed, limit and sampling
settings (``genderscope judge`` copies them from RUN_DIR/run.json).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from genderscope.common.errors import DataError, UsageError

ATTEMPTS = "attempts.jsonl"


@dataclass(frozen=True)
class Recorded:
    """One recorded generation attempt: its answer, or why it has none."""

    response: Any
    error: str | None
    request_sha256: str | None


@dataclass(frozen=True)
class RecordedRun:
    """The recorded generation attempts of task ``task`` in ``folder``: (item id, trial) -> Recorded."""

    folder: Path
    task: str
    lines: dict[tuple[str, int], Recorded]
    sha256: str

    @classmethod
    def read(cls, folder: str | Path, task: str) -> RecordedRun:
        """Read RUN_DIR/attempts.jsonl (lines of ``task``, round 0: lines without a ``verdict``); one line
        naming file and line for a malformed line, a folder without the file, or no line of ``task``."""
        folder = Path(folder)
        path = folder / ATTEMPTS
        if not path.is_file():
            raise UsageError(
                f"--generations {folder}: not a run folder (no {ATTEMPTS}); give the folder of a "
                f"`genderscope run {task}`"
            )
        raw = path.read_bytes()
        lines: dict[tuple[str, int], Recorded] = {}
        for n, text in enumerate(raw.decode("utf-8", errors="replace").splitlines(), 1):
            if not text.strip():
                continue
            try:
                rec = json.loads(text)
                key = (str(rec["item_id"]), int(rec["trial"]))
            except (json.JSONDecodeError, KeyError, TypeError, ValueError):
                raise DataError(
                    f"{path}:{n}: not an attempts.jsonl line (JSON with item_id and trial)"
                ) from None
            if rec.get("task") != task or "verdict" in rec:
                continue
            err = rec.get("error") or ("skipped" if rec.get("skipped") else None)
            lines[key] = Recorded(rec.get("response"), err, rec.get("request_sha256"))
        if not lines:
            raise UsageError(f"--generations {folder}: {path.name} holds no generation of task {task}")
        return cls(folder, task, lines, hashlib.sha256(raw).hexdigest())

    def describe(self) -> dict[str, Any]:
        """What results.json records of the judged run."""
        return {"folder": str(self.folder), "attempts_sha256": self.sha256, "generations": len(self.lines)}
