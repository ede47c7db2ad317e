"""GenderBench's own probe logs, read as recorded answers (``replay:LOG`` or ``replay:LOGDIR``).

GenderBench 1.1 (``Probe.log_current_state``) appends one line ``{"probe_state": {...}}`` per logged state
to ``<log_dir>/<class name lower>_<uuid>.jsonl``; the last line is the latest state.  A state holds the
probe's parameters (``num_repetitions``, ``sample_k``, ``random_seed``, ``calculate_cis``, ... and the
probe's own ``__init__`` arguments), ``metrics`` (numbers, or ``[low, high]`` intervals when
``calculate_cis``), ``marks``, ``class`` and ``probe_items``: per item its ``prompts`` (``uuid``, ``text``,
``metadata``) and ``attempts`` (``repetition_id`` from 0, ``answer``, ``evaluation``, ``prompt`` with the
prompt's ``uuid``).

This module knows that format only.  Each answered attempt becomes a replay entry keyed
``genderbench:<class>/<item index>/<prompt index>`` and trial ``repetition_id + 1``; a task whose attempts
are GenderBench's names that key in its request's ``recorded_as`` hint (the chat probes do).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from genderscope.common.errors import DataError

#: the key GenderBench writes around each logged state
STATE_KEY = "probe_state"
#: parameters every GenderBench probe logs (``Probe.json_parameters``), not the probe's own arguments
COMMON = ("uuid", "status", "metrics", "marks", "probe_items", "class", "log_strategy", "log_dir")
#: ids of GenderBench attempts in the replay index: ``genderbench:<class>/<item>/<prompt>``
ID_PREFIX = "genderbench:"


def attempt_key(probe_class: str, item: int, prompt: int) -> str:
    """The replay id of GenderBench's attempt ``item``/``prompt`` (indices from 0) of ``probe_class``."""
    return f"{ID_PREFIX}{probe_class}/{item}/{prompt}"


def parse_key(key: str) -> tuple[str, int, int] | None:
    """(class, item, prompt) of an :func:`attempt_key`, else None."""
    if not key.startswith(ID_PREFIX):
        return None
    cls, _, rest = key[len(ID_PREFIX) :].partition("/")
    item, _, prompt = rest.partition("/")
    return (cls, int(item), int(prompt)) if item.isdigit() and prompt.isdigit() else None


@dataclass
class Entry:
    """One answered attempt of a log: its replay id, trial (from 1), prompt text and answer."""

    key: str
    trial: int
    prompt: str
    answer: str


@dataclass
class ProbeLog:
    """The latest state of one GenderBench probe log."""

    path: Path
    probe_class: str
    status: str
    parameters: dict[str, Any]
    metrics: dict[str, Any]
    marks: dict[str, Any]
    n_items: int
    entries: list[Entry] = field(default_factory=list)

    @property
    def num_repetitions(self) -> int:
        return int(self.parameters.get("num_repetitions") or 1)

    def describe(self) -> str:
        """``sample_k=40, num_repetitions=2, random_seed=123`` (+ the probe's own arguments)."""
        p = self.parameters
        keys = ["sample_k", "num_repetitions", "random_seed"]
        keys += sorted(k for k in p if k not in keys and k not in _SETTINGS and _scalar(p[k]))
        return ", ".join(f"{k}={json.dumps(p.get(k))}" for k in keys)

    def fix(self) -> str:
        """The genderscope options that ask what this log holds."""
        p = self.parameters
        k = p.get("sample_k")
        limit = f"--limit {k}" if k is not None else "no --limit"
        return f"{limit}, --trials {self.num_repetitions}, --seed {p.get('random_seed', 123)}"

    def summary(self) -> dict[str, Any]:
        """What run.json records about the log (``backend_stats``)."""
        return {
            "file": str(self.path),
            "class": self.probe_class,
            "status": self.status,
            "parameters": {k: v for k, v in self.parameters.items() if k != "log_dir"},
            "items": self.n_items,
            "answers": len(self.entries),
            "metrics": self.metrics,
            "marks": {k: (v or {}).get("mark_value") for k, v in self.marks.items()},
        }


#: bootstrap settings: they change GenderBench's metrics, not its prompts
_SETTINGS = ("calculate_cis", "bootstrap_cycles", "bootstrap_alpha")


def _scalar(v: Any) -> bool:
    """A parameter worth naming in a one-line message (numbers, booleans, short strings; not templates)."""
    return v is None or isinstance(v, (int, float, bool)) or (isinstance(v, str) and len(v) <= 24)


def first_state_line(path: Path) -> bool:
    """Whether ``path``'s first non-blank line is a GenderBench state line (``{"probe_state": ...}``)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            head = fh.read(4096).lstrip()  # a state line can be hundreds of MB: read its start only
    except OSError:
        return False
    return head.startswith("{") and f'"{STATE_KEY}"' in head[:200]


def log_files(path: Path) -> list[Path]:
    """The GenderBench probe logs of ``path``: the file itself, or the ``*.jsonl`` files of a folder whose
    first line is a probe state (GenderBench's harness log and other files are left out)."""
    if path.is_dir():
        return sorted(p for p in path.glob("*.jsonl") if p.is_file() and first_state_line(p))
    return [path] if first_state_line(path) else []


def _last_state(path: Path) -> dict[str, Any]:
    from genderscope.core.textlines import utf8_lines

    last = None
    for _, line in utf8_lines(path, "pass the log file GenderBench wrote (<probe>_<uuid>.jsonl)"):
        if line.strip():
            last = line
    try:
        state = json.loads(last or "")[STATE_KEY]
    except (json.JSONDecodeError, RecursionError, KeyError, TypeError):
        raise DataError(
            f'{path}: the last line is not a GenderBench probe state ({{"probe_state": ...}}); '
            "pass the log file GenderBench wrote (<probe>_<uuid>.jsonl)"
        ) from None
    if not isinstance(state, dict) or not isinstance(state.get("probe_items"), list):
        raise DataError(f'{path}: the probe state has no "probe_items" list')
    return state


def _entries(path: Path, cls: str, items: list[Any]) -> Iterator[Entry]:
    for j, item in enumerate(items):
        try:
            index = {p["uuid"]: i for i, p in enumerate(item["prompts"])}
            texts = [p["text"] for p in item["prompts"]]
            for a in item["attempts"]:
                if a.get("answer") is None:  # not generated yet (a state logged before `generate`)
                    continue
                p = index[a["prompt"]["uuid"]]
                yield Entry(attempt_key(cls, j, p), int(a["repetition_id"]) + 1, texts[p], a["answer"])
        except (KeyError, TypeError, ValueError) as exc:
            raise DataError(
                f"{path}: item {j} of the probe state is malformed ({type(exc).__name__}: {exc}); "
                "pass an unmodified GenderBench log"
            ) from None


def read_log(path: Path) -> ProbeLog:
    """The latest state of the GenderBench probe log ``path`` (its last line)."""
    state = _last_state(path)
    cls = state.get("class")
    if not isinstance(cls, str):
        raise DataError(f'{path}: the probe state has no "class" (GenderBench writes e.g. "DirectProbe")')
    items = state["probe_items"]
    params = {k: v for k, v in state.items() if k not in COMMON}
    log = ProbeLog(
        path,
        cls,
        str(state.get("status", "")).removeprefix("status."),
        params,
        dict(state.get("metrics") or {}),
        dict(state.get("marks") or {}),
        len(items),
    )
    log.entries = list(_entries(path, cls, items))
    return log


def read_logs(path: Path) -> dict[str, ProbeLog]:
    """Every probe log of a file or folder, by class; two logs of one class are an error."""
    out: dict[str, ProbeLog] = {}
    for f in log_files(path):
        log = read_log(f)
        if log.probe_class in out:
            raise DataError(
                f"{path}: two GenderBench logs of {log.probe_class} ({out[log.probe_class].path.name}, "
                f"{f.name}); keep one of them in the folder"
            )
        out[log.probe_class] = log
    return out


def logged_values(value: Any) -> tuple[float, ...]:
    """A logged metric as floats: a number -> (v,), an interval ``[low, high]`` -> (low, high); NaN for
    null or NaN."""
    vals = value if isinstance(value, (list, tuple)) else [value]
    return tuple(math.nan if v is None else float(v) for v in vals)


def _same(a: float, b: float | None, tol: float) -> bool:
    b = math.nan if b is None else float(b)
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= tol


def agreement(
    log: dict[str, Any],
    metrics: dict[str, tuple[float | None, float | None, float | None]],
    marks: dict[str, int | None],
    ci_method: str | None,
    tol: float = 1e-9,
) -> str:
    """One line comparing a re-scored probe with its log (``log``: :meth:`ProbeLog.summary`):
    ``metrics``: name -> (value, ci_low, ci_high) of the re-scored run, ``marks``: metric -> mark value,
    ``ci_method``: the run's interval method (None: no intervals).  A logged interval (GenderBench's
    ``calculate_cis``) is compared with (ci_low, ci_high), a logged number with the value; equal = within
    ``tol``, NaN equals NaN.  Marks are compared when they were made the same way."""
    logged = {k: logged_values(v) for k, v in (log.get("metrics") or {}).items()}
    if not logged:
        return f"the log holds no metrics to compare (GenderBench's status {log.get('status') or '?'})"
    intervals = any(len(v) == 2 for v in logged.values())
    if intervals and ci_method != "normal":
        return "the log holds GenderBench's intervals (calculate_cis=True): rerun with --ci-method normal"
    diffs, worst, compared = [], 0.0, 0
    for name, want in logged.items():
        if name not in metrics:
            diffs.append(f"{name} missing")
            continue
        got = metrics[name][1:] if len(want) == 2 else metrics[name][:1]
        compared += 1
        if not all(_same(a, b, tol) for a, b in zip(want, got)):
            diffs.append(name)
        worst = max([worst] + [abs(a - float(b)) for a, b in zip(want, got) if b is not None and a == a])
    what = "intervals" if intervals else "values"
    line = f"{compared - len(diffs)} of {len(logged)} metric {what} equal the log's (max |diff| {worst:.3g})"
    if diffs:
        line += f"; differ: {', '.join(diffs[:5])}"
    if not intervals and ci_method is not None:
        return line + "; marks not compared (ours from intervals: --bootstrap-cycles 0 marks point values)"
    want_marks = log.get("marks") or {}
    same = sum(1 for k, v in want_marks.items() if marks.get(k) == v)
    return line + f"; marks {same} of {len(want_marks)} equal"
