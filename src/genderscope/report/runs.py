"""Reading run folders (results.json, run.json, attempts.jsonl) for reports, comparison and export."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from genderscope.core.errors import DataError, UsageError

#: attempt keys written by the engine for every task; everything else is the task's parsed fields
BASE_ATTEMPT_KEYS = ("task", "item_id", "trial", "prompt", "response", "cache_hit", "error", "skipped")


@dataclass
class RunData:
    """One run folder: its results, manifest (``run.json``, may be empty) and where its attempts are."""

    path: Path
    results: dict[str, Any]
    manifest: dict[str, Any] = field(default_factory=dict)
    label: str = ""

    @property
    def model(self) -> str:
        m = (
            self.results.get("model")
            or (self.manifest.get("model") or {}).get("spec")
            or f"({self.path.name})"
        )
        return m if isinstance(m, str) else json.dumps(m)

    @property
    def tasks(self) -> dict[str, dict[str, Any]]:
        return self.results.get("tasks") or {}

    @property
    def attempts_path(self) -> Path:
        return self.path / "attempts.jsonl"

    def iter_attempts(self) -> Iterator[dict[str, Any]]:
        """Attempt records in file order (nothing if the run has no attempts.jsonl)."""
        if not self.attempts_path.exists():
            return
        with open(self.attempts_path, encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise DataError(f"{self.attempts_path}:{n}: not a JSON line ({exc.msg})") from None
                if isinstance(rec, dict):
                    yield rec

    def attempt_sample(self, per_task: int = 20) -> dict[str, list[dict[str, Any]]]:
        """The first ``per_task`` attempts of each task (stops reading once every task has enough)."""
        out: dict[str, list[dict[str, Any]]] = {t: [] for t in self.tasks}
        if per_task <= 0:
            return out
        for rec in self.iter_attempts():
            bucket = out.setdefault(str(rec.get("task", "?")), [])
            if len(bucket) < per_task:
                bucket.append(rec)
            if out and all(len(v) >= per_task for v in out.values()):
                break
        return out


def load_run(path: str | Path) -> RunData:
    """Read a run folder (or a results.json path); clear error when it is not one."""
    p = Path(path)
    if p.is_file() and p.name == "results.json":
        p = p.parent
    res_file = p / "results.json"
    if not p.exists():
        raise UsageError(f"{p}: no such run folder")
    if not res_file.exists():
        raise UsageError(
            f"{p}: not a run folder (no results.json); pass the --out folder of "
            "`genderscope run` or of a bordia command"
        )
    try:
        results = json.loads(res_file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DataError(f"{res_file}:{exc.lineno}: invalid JSON ({exc.msg})") from None
    if not isinstance(results, dict) or not isinstance(results.get("tasks"), dict):
        raise DataError(f"{res_file}: expected {{'model', 'tasks': {{...}}}} (see docs/architecture.md)")
    manifest: dict[str, Any] = {}
    man_file = p / "run.json"
    if man_file.exists():
        try:
            manifest = json.loads(man_file.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise DataError(f"{man_file}:{exc.lineno}: invalid JSON ({exc.msg})") from None
    return RunData(p, results, manifest)


def load_runs(paths: list[str | Path]) -> list[RunData]:
    """Load several runs and give each a short unique label (model spec, plus folder name if needed)."""
    if not paths:
        raise UsageError("name at least one run folder")
    runs = [load_run(p) for p in paths]
    models = [r.model for r in runs]
    for r in runs:
        r.label = r.model if models.count(r.model) == 1 else f"{r.model} ({r.path.name})"
    labels = [r.label for r in runs]
    for i, r in enumerate(runs):  # same model and same folder name: number them
        if labels.count(r.label) > 1:
            r.label = f"{r.label} #{i + 1}"
    return runs


def metric_value(entry: dict[str, Any], name: str) -> dict[str, Any] | None:
    """``entry['metrics'][name]`` as {value, ci_low, ci_high} (bare numbers are accepted too)."""
    m = (entry.get("metrics") or {}).get(name)
    if m is None:
        return None
    if isinstance(m, dict):
        return m
    return {"value": m}


def headline(entry: dict[str, Any], limit: int = 8) -> list[str]:
    """The task's headline metric names (``headline`` entry), else the first ``limit`` metrics."""
    metrics = entry.get("metrics") or {}
    names = [n for n in entry.get("headline") or [] if n in metrics]
    if names:
        return names
    with_ci = [n for n, m in metrics.items() if isinstance(m, dict) and m.get("ci_low") is not None]
    return (with_ci + [n for n in metrics if n not in with_ci])[:limit]


def list_tables(entry: dict[str, Any], prefix: str = "", depth: int = 2) -> dict[str, list[dict[str, Any]]]:
    """Every list of dicts inside a task entry (nested dicts searched ``depth`` levels), by dotted key."""
    out: dict[str, list[dict[str, Any]]] = {}
    for key, val in entry.items():
        name = f"{prefix}{key}"
        if key == "metrics":
            continue
        if isinstance(val, list) and val and all(isinstance(v, dict) for v in val):
            out[name] = val
        elif isinstance(val, dict) and depth > 1:
            out.update(list_tables(val, f"{name}.", depth - 1))
    return out
