"""Run folders as report, compare and export see them: the typed run log plus the attempts file.

results.json and run.json are read only through :func:`genderscope.core.runlog.read_run_log`;
attempts.jsonl is streamed line by line (it can be large).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from genderscope.common.errors import UsageError
from genderscope.core.runlog import (
    ATTEMPT_ENGINE_KEYS,
    RunManifest,
    read_json_lines,
    read_run_log,
    run_folder,
)
from genderscope.core.results_file import ResultsFile, TaskResults

#: attempt keys written by the engine for every task; everything else is the task's parsed fields
BASE_ATTEMPT_KEYS = ATTEMPT_ENGINE_KEYS


@dataclass
class RunData:
    """One run folder: its results, its manifest (None without run.json) and where its attempts are."""

    path: Path
    results: ResultsFile
    manifest: RunManifest | None = None
    #: unique among the runs of a report (see genderscope.report.labels)
    label: str = ""
    #: the summary row: model name + distinguishing options (runs of one model, no task in common, share it)
    row_label: str = ""

    @property
    def model(self) -> str:
        """results.json's model, else run.json's model spec, else the folder name in parentheses."""
        spec = self.manifest.model.spec if self.manifest and self.manifest.model else ""
        return self.results.model or spec or f"({self.path.name})"

    @property
    def tasks(self) -> dict[str, TaskResults]:
        return self.results.tasks

    @property
    def attempts_path(self) -> Path:
        return self.path / "attempts.jsonl"

    def iter_attempts(self) -> Iterator[dict[str, Any]]:
        """Attempt records in file order (nothing if the run has no attempts.jsonl)."""
        if not self.attempts_path.exists():
            return
        for _, rec in read_json_lines(self.attempts_path, "not a JSON line"):
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
    """Read a run folder (or its results.json); clear one-line error when it is not one."""
    manifest, results = read_run_log(path)
    return RunData(run_folder(path), results, manifest)


def load_runs(paths: list[str | Path]) -> list[RunData]:
    """Load several runs and give each a unique label (:func:`~genderscope.report.labels.assign_labels`)."""
    from genderscope.report.labels import assign_labels

    if not paths:
        raise UsageError("name at least one run folder")
    runs = [load_run(p) for p in paths]
    assign_labels(runs)
    return runs
