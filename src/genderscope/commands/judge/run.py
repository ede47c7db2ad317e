"""Judge the generations of a recorded run with a chat model: a second run over the first run's texts.

A genderscope run holds one model (the engine has one backend, its fingerprint keys the response store),
so the judge is a run of its own: the same generation tasks with the options, seed, limit and sampling
settings recorded in RUN_DIR/run.json, plus ``--generations RUN_DIR``.  In that mode a task's first round
replays the recorded generations (``given`` answers: no model call) and its second round asks the judge,
through the response store like every request: a rerun sends nothing, a killed judge run resumes, and
``genderscope reparse`` of the judged run re-scores it without either model.  The judged run's
results.json holds every scorer's metrics and the regard shares, gaps and flips.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Mapping

from genderscope.common.errors import UsageError
from genderscope.core import lookup

#: the option a generation task reads its recorded generations from (judge mode)
GENERATIONS = "generations"


def judgeable_tasks(manifest: Any, run_dir: Path) -> list[str]:
    """The tasks of a run that can be judged (their Options have ``generations``), in run order."""
    names = [t for t in manifest.tasks if t in lookup.TASKS]
    found = [
        t for t in names if GENERATIONS in {f.name for f in dataclasses.fields(lookup.task_class(t).Options)}
    ]
    if not found:
        raise UsageError(
            f"{run_dir}: no generation task to judge (tasks: {', '.join(manifest.tasks) or 'none'}); "
            "judge a run of bold or counterfactual"
        )
    return found


def judge_run(
    run_dir: str | Path,
    model: str,
    *,
    out: str | Path | None = None,
    consistency: bool = True,
    options: Mapping[str, Any] | None = None,
    use_cache: bool = True,
    progress: bool | None = None,
    store_path: str | Path | None = None,
) -> Any:
    """Judge ``run_dir``'s generations with chat model ``model`` into ``out`` (default ``RUN_DIR-judged``);
    ``options``: further ``--name value`` pairs (the judge backend's, e.g. ``--base-url``, or task options
    such as ``--scorers``, which override the recorded ones).  Returns the engine's RunOutput."""
    from genderscope.core.engine import run_spec
    from genderscope.core.options import field_for
    from genderscope.core.reparse import read_manifest
    from genderscope.core.runspec import RunSpec

    run_dir = Path(run_dir)
    manifest = read_manifest(run_dir)
    tasks = judgeable_tasks(manifest, run_dir)
    extra = {**(options or {}), GENERATIONS: str(run_dir), "judge_consistency": consistency}
    gen = manifest.generation or {}
    spec = RunSpec.build(
        tasks,
        model,
        options=extra,
        seed=manifest.seed,
        limit=manifest.limit,
        temperature=gen.get("temperature"),
        max_tokens=gen.get("max_tokens"),
        use_cache=use_cache,
        label=manifest.label,
    )
    task_options = {}
    for t in tasks:
        given = {f[0] for k in extra if (f := field_for(lookup.task_class(t).Options, k)) is not None}
        recorded = dict(manifest.tasks[t].options)
        fresh = {"generations_sha256": ""}  # filled in by the task from RUN_DIR's attempts.jsonl
        task_options[t] = {
            **recorded,
            **fresh,
            **{k: v for k, v in spec.task_options[t].items() if k in given},
        }
    spec = dataclasses.replace(spec, task_options=task_options)
    target = Path(out) if out else Path(str(run_dir).rstrip("/") + "-judged")
    return run_spec(spec, out=target, progress=progress, store_path=store_path)
