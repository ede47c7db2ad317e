"""``replay:FILE.jsonl`` — answers recorded earlier (also GenderBench's own probe logs).

One JSON object per line: ``{"id": <item id>, "trial": <1-based, default 1>,
"request_sha256": <optional>, "prompt": <optional>, "response": <str>}`` (``item_id`` and ``answer``
are accepted as synonyms, so a run's ``attempts.jsonl`` replays as is).  Lookup is by (id, trial);
lines without an id match by exact prompt text and trial.  Lines that carry an ``error`` are not
answers and are ignored.  A line matched by id that was recorded for another request is a stale
entry: an error unless ``--replay-stale use``.  "Another request": the line's ``request_sha256``
(attempts.jsonl since schema version 2: sha256 of the canonical request, so a changed sampling
setting counts too) differs from the regenerated request's; a line without one (older files, hand
-made files) is compared by ``prompt`` text.

``replay:LOG`` / ``replay:LOGDIR``: GenderBench's probe logs (a file whose first line is
``{"probe_state": ...}``, or a folder of them; :mod:`genderscope.backends.genderbench_log`).  An attempt
whose request names ``recorded_as`` (a hint, e.g. ``genderbench:DirectProbe/3/0``) is answered by that
entry; the log's prompt text must equal the request's and the run must ask exactly the log's items and
repetitions, else one line names the log, what differs and the options that ask what it holds.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from genderscope.backends import genderbench_log as gblog
from genderscope.core.backend import Backend, Emit, handles
from genderscope.common.errors import DataError, MissingResponsesError, UsageError
from genderscope.core.options import opt
from genderscope.core.primitives import ALL_KINDS
from genderscope.core.requests import Job, Outcome, request_sha256
from genderscope.core.runlog import read_json_lines
from genderscope.core.runner import SKIP, paused_gc
from genderscope.data.pins import sha256_file


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
    description = (
        "recorded responses from a JSONL file (replay:FILE.jsonl), or GenderBench's probe logs "
        "(replay:LOG.jsonl, replay:LOGDIR)"
    )
    Options = ReplayOptions
    cacheable = False

    def __init__(self, target: str, options: ReplayOptions):
        super().__init__(target, options)
        self.path = Path(target)
        if not (self.path.is_file() or self.path.is_dir()):
            raise UsageError(f"replay file {target!r} does not exist")
        self.recorded: dict[tuple[str, int], tuple[str, str]] = {}
        self.logs: dict[str, gblog.ProbeLog] = {}
        with paused_gc():
            if self.path.is_dir() or gblog.first_state_line(self.path):
                self.by_id, self.by_prompt, files = self._load_genderbench()
            else:
                self.by_id, self.by_prompt = load_replay(self.path, self.recorded)
                files = [self.path]
        self._sha = _combined_sha(files)
        self.missing: list[str] = []

    def _load_genderbench(self) -> tuple[dict[tuple[str, int], Any], dict[tuple[str, int], Any], list[Path]]:
        """Index GenderBench's probe logs: (``genderbench:<class>/<item>/<prompt>``, trial) -> answer."""
        self.logs = gblog.read_logs(self.path)
        if not self.logs:
            raise UsageError(
                f"{self.path}: no GenderBench probe log (a .jsonl file whose lines are "
                '{"probe_state": ...}) and not a replay file; pass a GenderBench log folder or file'
            )
        by_id: dict[tuple[str, int], Any] = {}
        for log in self.logs.values():
            for e in log.entries:
                by_id[(e.key, e.trial)] = e.answer
                self.recorded[(e.key, e.trial)] = ("prompt", e.prompt)
        return by_id, {}, [log.path for log in self.logs.values()]

    @property
    def fingerprint(self) -> str:
        return f"replay:{self._sha}"

    @staticmethod
    def _key(job: Job) -> tuple[str, int]:
        """(id, trial) the recording holds this job under: the request's ``recorded_as`` hint, else its id."""
        alias = job.request.hints.get("recorded_as")
        return (alias if isinstance(alias, str) else job.item_id, job.trial)

    def _lookup(self, job: Job) -> tuple[bool, Any]:
        for key in ((job.item_id, job.trial), self._key(job)):
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
            rec = self.recorded.get((j.item_id, j.trial)) or self.recorded.get(self._key(j))
            if rec is None:
                continue
            how, value = rec
            now = request_sha256(j.request) if how == "sha256" else j.request.prompt_text
            if isinstance(now, str) and now != value:
                out.append(f"{j.item_id}#{j.trial}")
        return out

    @handles(*ALL_KINDS)  # whatever was recorded, of every primitive kind
    def _recorded_jobs(self, jobs: list[Job], emit: Emit) -> None:
        if self.logs and self.options.replay_stale == "error":
            problem = self._genderbench_mismatch(jobs)
            if problem:
                raise DataError(problem)
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
                f"{', '.join(missing[:5])}); record them, or pass --replay-missing skip",
                answered=len(jobs) - len(missing),
            )
        for job, (ok, resp) in zip(jobs, found):
            emit(job, Outcome(response=resp if ok else SKIP))

    def _genderbench_mismatch(self, jobs: Sequence[Job]) -> str | None:
        """One line naming the GenderBench log whose items, repetitions or prompts differ from what the
        jobs ask (and the options that ask what it holds), else None."""
        asked: dict[str, list[tuple[int, int, int, Job]]] = {}
        for j in jobs:
            parsed = gblog.parse_key(self._key(j)[0])
            if parsed and parsed[0] in self.logs:
                asked.setdefault(parsed[0], []).append((parsed[1], parsed[2], j.trial, j))
        for cls, rows in asked.items():
            log = self.logs[cls]
            why = _log_difference(log, rows, self.recorded)
            if why:
                return (
                    f"{log.path}: this run does not ask what GenderBench's {cls} log holds ({why}); the log "
                    f"was made with {log.describe()}: run with {log.fix()}, or pass --replay-stale use"
                )
        return None

    def stats(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "replay_file": str(self.path),
            "replay_sha256": self._sha,
            "missing": len(self.missing),
            "missing_first": self.missing[:20],
        }
        if self.logs:
            out["genderbench_logs"] = {cls: log.summary() for cls, log in self.logs.items()}
        return out


def _log_difference(
    log: gblog.ProbeLog,
    rows: list[tuple[int, int, int, Job]],
    recorded: dict[tuple[str, int], tuple[str, str]],
) -> str | None:
    """What differs between a log and the (item, prompt, trial, job) rows a run asks of it, or None."""
    items = max(r[0] for r in rows) + 1
    if items != log.n_items:
        return f"the run asks {items} items, the log holds {log.n_items}"
    trials = max(r[2] for r in rows)
    if trials != log.num_repetitions:
        return f"the run asks {trials} repetition(s) per prompt, the log holds {log.num_repetitions}"
    for item, prompt, trial, job in rows:
        rec = recorded.get((gblog.attempt_key(log.probe_class, item, prompt), trial))
        if rec is None:
            return f"the log has no answer for item {item}, prompt {prompt}, repetition {trial - 1}"
        if rec[1] != job.request.prompt_text:
            return f"item {item}, prompt {prompt} has another prompt text in the log"
    return None


def _combined_sha(files: Sequence[Path]) -> str:
    """sha256 of one file, else of the files' names and sha256s (a folder of logs)."""
    if len(files) == 1:
        return sha256_file(files[0])
    h = hashlib.sha256()
    for f in sorted(files):
        h.update(f"{f.name}\0{sha256_file(f)}\n".encode())
    return h.hexdigest()
