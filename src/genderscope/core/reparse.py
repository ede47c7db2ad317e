"""Re-score a recorded run from its answers, with changed task options, without calling any model.

The run's ``attempts.jsonl`` is replayed (``replay:`` answers every primitive kind by item id and
trial) through the same tasks with the options recorded in ``run.json`` (resolved, never ``auto``,
so the task asks exactly the questions it asked before), updated by ``changes``.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from genderscope.core import lookup
from genderscope.common.errors import UsageError
from genderscope.core.seeds import DEFAULT_SEED


def reparse_run(
    run_dir: str | Path,
    changes: dict[str, Any] | None = None,
    out: str | Path | None = None,
    progress: bool | None = False,
) -> list[Any]:
    """Reparse ``run_dir`` into ``out`` (default ``RUN_DIR-reparsed``; one subfolder per task when the
    run had several); returns the :class:`~genderscope.core.engine.RunOutput` of each task."""
    run_dir = Path(run_dir)
    manifest = read_manifest(run_dir)
    if not manifest.tasks:
        raise UsageError(f"{run_dir / 'run.json'} records no task run")
    commands = [t for t in manifest.tasks if t in lookup.COMMANDS]
    if commands:
        raise UsageError(
            f"{run_dir / 'run.json'} was written by command {commands[0]!r}, not by `genderscope run`: "
            "it records no answers to reparse"
        )
    changes = {k.lstrip("-").replace("-", "_"): v for k, v in (changes or {}).items()}
    target = Path(out) if out else Path(str(run_dir).rstrip("/") + "-reparsed")
    names = list(manifest.tasks)
    known = {f.name for t in names for f in dataclasses.fields(lookup.task_class(t).Options)}
    unknown = sorted(set(changes) - known)
    if unknown:
        raise UsageError(
            f"no task of this run ({', '.join(names)}) has the option "
            f"--{unknown[0].replace('_', '-')}; see `genderscope tasks --options`"
        )
    outputs = []
    for task in names:
        fields = {f.name for f in dataclasses.fields(lookup.task_class(task).Options)}
        opts = {**manifest.tasks[task].options, **{k: v for k, v in changes.items() if k in fields}}
        dest = target if len(names) == 1 else target / task
        outputs.append(replay_task(run_dir, manifest, task, opts, out=dest, progress=progress))
    return outputs


def read_manifest(run_dir: str | Path) -> Any:
    """run.json of a run folder that also holds attempts.jsonl, typed (a RunManifest); else one line."""
    from genderscope.core.runlog import RunManifest, _load_json

    run_dir = Path(run_dir)
    if not (run_dir / "run.json").is_file() or not (run_dir / "attempts.jsonl").is_file():
        raise UsageError(f"{run_dir} is not a run folder: it needs run.json and attempts.jsonl")
    return RunManifest.from_json(_load_json(run_dir / "run.json"), str(run_dir / "run.json"))


def replay_task(
    run_dir: Path,
    manifest: Any,
    task: str,
    options: dict[str, Any],
    out: Path | None = None,
    progress: bool | None = False,
) -> Any:
    """Run ``task`` again on ``run_dir``'s recorded answers (``replay:``, unanswered attempts skipped,
    answers recorded for another request refused as stale) with the run's trials, limit, seed and
    sampling settings and ``options``; written to ``out`` when given.  Returns the RunOutput."""
    from genderscope.core.engine import run_tasks

    gen = manifest.generation or {}  # so the reparsed run records the same sampling parameters
    return run_tasks(
        [task],
        f"replay:{Path(run_dir) / 'attempts.jsonl'}",
        trials=manifest.trials,
        limit=manifest.limit,
        seed=manifest.seed if manifest.seed is not None else DEFAULT_SEED,
        temperature=gen.get("temperature"),
        max_tokens=gen.get("max_tokens"),
        out=out,
        use_cache=False,
        options={**options, "replay_missing": "skip"},
        progress=progress,
        label=manifest.label,
        write=out is not None,
    )
