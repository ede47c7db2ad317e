"""Task memos: a finished task's outputs, reused by a rerun whose inputs and answers are all unchanged.

A cached rerun of a suite asks nothing, but would still build every attempt, hash every request, read
and parse every stored answer, score and bootstrap again.  After a run that answered every attempt of a
task (from the store or freshly, no error, nothing skipped), the engine keeps that task's outputs in
``$GENDERSCOPE_HOME/cache/task-runs/<key>.pickle``: its :class:`~genderscope.core.task.TaskResult`
(without the per-attempt records), its ``attempts.jsonl`` lines as a rerun from the store writes them,
its number of rounds, the request kinds it used, the store keys of its answers and a digest of those
answers.

``key`` is the sha256 of everything the task's outputs are computed from, except the answers: this
module's format version, genderscope's code (every file of the package, the task's own module if it lies
outside, Python's and the scoring libraries' versions), the task's name, class, version and resolved
options, the run context (seed, trials, limit, the request kinds and model the backend answers,
generation overrides), the backend's fingerprint and the pinned sha256 of every dataset the task reads
(a file whose sha256 differs from its pin is never read).  The answers are checked on every use: the
memo is taken only if the store still holds every key and the sha256 of their stored text equals the
memo's digest.  Anything else (no memo, another key, a missing or changed answer, an unreadable file)
runs the task as usual.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import pickle
import sys
import zlib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Sequence

from genderscope.core.options import as_dict
from genderscope.common.home import home
from genderscope.core.store import answers_digest

#: the folder under $GENDERSCOPE_HOME
MEMO_DIR = "cache/task-runs"
#: raise when the memo's contents or meaning change
MEMO_FORMAT = 1
#: libraries whose versions can change a task's numbers (NLTK: the word tokens GenderBench's parsers read)
_LIBRARIES = ("numpy", "scipy", "pandas", "statsmodels", "nltk")


@dataclass
class TaskMemo:
    """One task's outputs (module docstring)."""

    result: Any  # TaskResult, records left out
    lines: bytes  # zlib of the task's attempts.jsonl lines (UTF-8), cache_hit as a rerun writes it
    keys: bytes  # the store keys of its answers: sorted, unique, 32 bytes each
    digest: str  # answers_digest of those keys' answers
    attempts: int
    from_store: int  # attempts answered from the store in a rerun (all but ``given`` ones)
    rounds: int
    request_kinds: list[str]

    def data(self) -> bytes:
        """The task's ``attempts.jsonl`` lines, UTF-8."""
        return zlib.decompress(self.lines)

    def text(self) -> str:
        """The task's ``attempts.jsonl`` lines."""
        return self.data().decode("utf-8")

    def key_list(self) -> list[str]:
        k = self.keys
        return [k[i : i + 32].hex() for i in range(0, len(k), 32)]


@functools.lru_cache(maxsize=None)
def _package_digest(root: str) -> str:
    """sha256 of every file under genderscope's package folder (paths and contents)."""
    h = hashlib.sha256()
    base = Path(root)
    files = sorted(p for p in base.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    for p in files:
        h.update(p.relative_to(base).as_posix().encode())
        h.update(b"\x00")
        h.update(p.read_bytes())
        h.update(b"\x00")
    return h.hexdigest()


@functools.lru_cache(maxsize=None)
def _library_versions() -> tuple[str, ...]:
    from importlib import metadata

    out = [sys.version]
    for name in _LIBRARIES:
        try:
            out.append(f"{name}={metadata.version(name)}")
        except metadata.PackageNotFoundError:
            out.append(f"{name}=-")
    return tuple(out)


def code_identity(task_cls: type) -> str:
    """sha256 of the code a task's outputs depend on: the package, the task's module if it lies outside
    (a plugin), Python's and the scoring libraries' versions."""
    root = str(Path(__file__).resolve().parents[1])  # the genderscope package folder
    parts = [_package_digest(root), *_library_versions()]
    module = sys.modules.get(task_cls.__module__)
    path = getattr(module, "__file__", None)
    if path and not str(Path(path).resolve()).startswith(root + os.sep):
        parts.append(hashlib.sha256(Path(path).read_bytes()).hexdigest())
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def memo_key(task: Any, fingerprint: str, data: Any) -> str:
    """The sha256 of every input of ``task``'s outputs but the answers (module docstring)."""
    ctx = task.ctx
    cls = type(task)
    inputs = {
        "format": MEMO_FORMAT,
        "code": code_identity(cls),
        "task": task.name,
        "class": f"{cls.__module__}.{cls.__qualname__}",
        "version": str(getattr(task, "version", "1")),
        "options": as_dict(task.options),
        "seed": ctx.seed,
        "trials": ctx.trials,
        "limit": ctx.limit,
        "request_kinds": sorted(ctx.request_kinds),
        "model": [ctx.model_kind, ctx.model_target],
        "generation": ctx.generation,
        "fingerprint": fingerprint,
        "datasets": {n: data.sha256(n) for n in task.datasets()},
    }
    text = json.dumps(inputs, sort_keys=True, default=repr, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def memo_path(key: str) -> Path:
    return home() / MEMO_DIR / f"{key}.pickle"


def load_memo(key: str, store: Any) -> TaskMemo | None:
    """The memo of ``key`` if its answers are all in ``store`` unchanged, else None."""
    try:
        memo = pickle.loads(memo_path(key).read_bytes())
    except FileNotFoundError:
        return None
    except Exception:  # an unreadable memo (torn write, old classes) is not used
        return None
    if not isinstance(memo, TaskMemo):
        return None
    keys = memo.key_list()
    found, digest = store.answers_digest(keys)
    if found != len(keys) or digest != memo.digest:
        return None
    return memo


def save_memo(key: str, memo: TaskMemo) -> None:
    """Write ``memo`` (atomically: a reader sees the old file or the new one)."""
    path = memo_path(key)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_bytes(pickle.dumps(memo, protocol=pickle.HIGHEST_PROTOCOL))
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def build_memo(
    result: Any,
    keyed: Sequence[tuple[str, Any]],
    lines: Sequence[str],
    attempts: int,
    rounds: int,
    request_kinds: list[str],
) -> TaskMemo:
    """A memo from a finished task: ``keyed`` = (store key, response) of every attempt answered through
    the store, ``lines`` its attempts.jsonl lines as a rerun writes them."""
    answers = dict(keyed)
    order = sorted(answers)
    dumps = json.dumps
    digest = answers_digest((k, dumps(answers[k], ensure_ascii=False)) for k in order)
    text = "".join(line + "\n" for line in lines).encode("utf-8")
    return TaskMemo(
        result=replace(result, records=[]),
        lines=zlib.compress(text, 1),
        keys=b"".join(bytes.fromhex(k) for k in order),
        digest=digest,
        attempts=attempts,
        from_store=len(keyed),
        rounds=rounds,
        request_kinds=request_kinds,
    )
