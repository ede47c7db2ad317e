"""``replay:FILE.jsonl`` — answers recorded earlier.

One JSON object per line: ``{"id": <item id>, "trial": <1-based, default 1>,
"request_sha256": <optional>, "prompt": <optional>, "response": <str>}`` (``item_id`` and ``answer``
are accepted as synonyms, so a run's ``attempts.jsonl`` replays as is).  Lookup is by (id, trial);
lines without an id match by exact prompt text and trial.  Lines that carry an ``error`` are not
answers and are ignored.  A line matched by id that was recorded for another request is a stale
entry: an error unless ``--replay-stale use``.  "Another request": the line's ``request_sha256``
(attempts.jsonl since schema version 2: sha256 of the canonical request, so a changed sampling
setting counts too) differs from the regenerated request's; a line without one (older files, hand
-made files) is compared by ``prompt`` text.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from genderscope.core.backend import Backend, Emit, handles
from genderscope.core.errors import DataError, MissingResponsesError, UsageError
from genderscope.core.options import opt
from genderscope.core.primitives import ALL_KINDS
from genderscope.core.requests import Job, Outcome, request_sha256
from genderscope.core.runlog import read_json_lines
from genderscope.core.runner import SKIP, paused_gc
from genderscope.data.registry import sha256_file


@dataclass
class ReplayOptions:
    replay_missing: str = opt(
        "error", "what to do with attempts the file has no answer for", ("error", "skip")
    )
    replay_stale: str = opt(
        "error",
        "an answer recorded under the same id and trial for a different prompt: "
        "error (stale entry) or use it",
        ("error", "use"),
    )


def load_replay(
    path: Path, recorded: dict[tuple[str, int], tuple[str, str]] | None = None
) -> tuple[dict[tuple[str, int], Any], dict[tuple[str, int], Any]]:
    """Index a replay file: ((id, trial) -> response, (prompt, trial) -> response); ``recorded`` (if given)
    receives (id, trial) -> what the line says was asked: ("sha256", its request_sha256) when it has one,
    else ("prompt", its prompt) when it has a prompt."""
    by_id: dict[tuple[str, int], Any] = {}
    by_prompt: dict[tuple[str, int], Any] = {}
    for lineno, obj in read_json_lines(path):
        if not isinstance(obj, dict):
            raise DataError(f"{path}:{lineno}: expected a JSON object, got {type(obj).__name__}")
        if obj.get("error") is not None or obj.get("skipped"):
            continue
        if "response" in obj:
            resp = obj["response"]
        elif "answer" in obj:
            resp = obj["answer"]
        else:
            raise DataError(f'{path}:{lineno}: no "response" field')
        trial = obj.get("trial", 1)
        if not isinstance(trial, int) or isinstance(trial, bool) or trial < 1:
            raise DataError(f'{path}:{lineno}: "trial" must be an integer >= 1, got {trial!r}')
        item = obj.get("id", obj.get("item_id"))
        if item is not None:
            by_id[(str(item), trial)] = resp
            if recorded is not None:
                asked = _recorded_request(obj)
                if asked is not None:
                    recorded[(str(item), trial)] = asked
        elif isinstance(obj.get("prompt"), str):
            by_prompt[(obj["prompt"], trial)] = resp
        else:
            raise DataError(f'{path}:{lineno}: needs an "id" or a "prompt" to match answers to items')
    return by_id, by_prompt


def _recorded_request(obj: dict[str, Any]) -> tuple[str, str] | None:
    """("sha256", hex) or ("prompt", text) of a replay line, else None (see :func:`load_replay`)."""
    sha = obj.get("request_sha256")
    if isinstance(sha, str):
        return ("sha256", sha)
    prompt = obj.get("prompt")
    return ("prompt", prompt) if isinstance(prompt, str) else None


class ReplayBackend(Backend):
    kind = "replay"
    description = "recorded responses from a JSONL file (replay:FILE.jsonl)"
    Options = ReplayOptions
    cacheable = False

    def __init__(self, target: str, options: ReplayOptions):
        super().__init__(target, options)
        self.path = Path(target)
        if not self.path.is_file():
            raise UsageError(f"replay file {target!r} does not exist")
        self.recorded: dict[tuple[str, int], tuple[str, str]] = {}
        with paused_gc():
            self.by_id, self.by_prompt = load_replay(self.path, self.recorded)
        self._sha = sha256_file(self.path)
        self.missing: list[str] = []

    @property
    def fingerprint(self) -> str:
        return f"replay:{self._sha}"

    def _lookup(self, job: Job) -> tuple[bool, Any]:
        key = (job.item_id, job.trial)
        if key in self.by_id:
            return True, self.by_id[key]
        prompt = job.request.prompt_text
        if prompt is not None and (prompt, job.trial) in self.by_prompt:
            return True, self.by_prompt[(prompt, job.trial)]
        return False, None

    def _stale(self, jobs: Sequence[Job]) -> list[str]:
        """``id#trial`` of jobs whose line was recorded for another request (hash, else prompt text)."""
        out = []
        for j in jobs:
            rec = self.recorded.get((j.item_id, j.trial))
            if rec is None:
                continue
            how, value = rec
            now = request_sha256(j.request) if how == "sha256" else j.request.prompt_text
            if isinstance(now, str) and now != value:
                out.append(f"{j.item_id}#{j.trial}")
        return out

    @handles(*ALL_KINDS)  # whatever was recorded, of every primitive kind
    def _recorded_jobs(self, jobs: list[Job], emit: Emit) -> None:
        if self.recorded and self.options.replay_stale == "error":
            stale = self._stale(jobs)
            if stale:
                raise DataError(
                    f"stale cache entry {stale[0]}: {self.path} recorded an answer to a different request "
                    f"(prompt or settings) for {len(stale)} of {len(jobs)} attempts (first: "
                    f"{', '.join(stale[:5])}); record them again, or pass --replay-stale use"
                )
        found = [self._lookup(j) for j in jobs]
        missing = [f"{j.item_id}#{j.trial}" for j, (ok, _) in zip(jobs, found) if not ok]
        self.missing = missing
        if missing and self.options.replay_missing == "error":
            raise MissingResponsesError(
                f"{self.path} has no answer for {len(missing)} of {len(jobs)} attempts (first: "
                f"{', '.join(missing[:5])}); record them, or pass --replay-missing skip"
            )
        for job, (ok, resp) in zip(jobs, found):
            emit(job, Outcome(response=resp if ok else SKIP))

    def stats(self) -> dict[str, Any]:
        return {
            "replay_file": str(self.path),
            "replay_sha256": self._sha,
            "missing": len(self.missing),
            "missing_first": self.missing[:20],
        }
