"""The Python API: the same engine as the CLI, for notebooks and scripts.

>>> import genderscope
>>> res = genderscope.run("gest", model="random", limit=50, out="runs/example")
>>> res.metrics["gest"]["stereotype_rate"].value          # doctest: +SKIP
>>> res.summary_frame()        # the report's summary state per test          # doctest: +SKIP
>>> genderscope.check(["runs/example"], maximum={"stereotype_rate": 0.1})   # failing cells  # doctest: +SKIP
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import pandas as pd

from genderscope.core import lookup
from genderscope.core.seeds import DEFAULT_SEED
from genderscope.core.metrics import Metric


@dataclass
class RunResult:
    """Result of :func:`run`: metrics per task, attempts, manifest and the output folder."""

    out_dir: Path | None
    metrics: dict[str, dict[str, Metric]]
    results: dict[str, dict[str, Any]]
    attempts: list[dict[str, Any]]
    manifest: dict[str, Any]

    def metrics_frame(self) -> pd.DataFrame:
        """One row per (task, metric) with ``value``, ``ci_low`` and ``ci_high``."""
        rows = [
            {"task": t, "metric": n, "value": m.value, "ci_low": m.ci_low, "ci_high": m.ci_high}
            for t, ms in self.metrics.items()
            for n, m in ms.items()
        ]
        return pd.DataFrame(rows, columns=["task", "metric", "value", "ci_low", "ci_high"])

    def metrics_dict(self) -> dict[str, dict[str, dict[str, float | None]]]:
        return {t: {n: m.to_json() for n, m in ms.items()} for t, ms in self.metrics.items()}

    def attempts_frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.attempts)

    def run_data(self) -> Any:
        """This run as the report sees it (:class:`~genderscope.report.runs.RunData`, label assigned)."""
        from genderscope.core.results_file import ResultsFile
        from genderscope.core.runlog import RunManifest
        from genderscope.report.labels import assign_labels
        from genderscope.report.runs import RunData

        manifest = RunManifest.from_json(self.manifest)
        results = ResultsFile.from_json(
            {"model": manifest.model.spec if manifest.model else "", "tasks": self.results}
        )
        run = RunData(self.out_dir or Path("."), results, manifest)
        assign_labels([run])
        return run

    def summary_frame(self) -> pd.DataFrame:
        """The report's summary: one row per test with the metric it shows, ``value``, ``ci_low``,
        ``ci_high``, ``state`` (biased, anti-stereotypical, no evidence, not enough evidence, descriptive)
        and ``reading`` (the same cells as the HTML report's first screen)."""
        from genderscope.report.gate import state_cells

        cols = ["task", "metric", "value", "ci_low", "ci_high", "state", "reading"]
        rows = [{k: c.to_dict()[k] for k in cols} for c in state_cells([self.run_data()])]
        return pd.DataFrame(rows, columns=cols)


def run(
    tasks: str | Sequence[str],
    model: str = "random",
    *,
    trials: int | None = None,
    limit: int | None = None,
    seed: int = DEFAULT_SEED,
    out: str | Path | None = None,
    no_cache: bool = False,
    temperature: float | None = None,
    max_tokens: int | None = None,
    write: bool = True,
    progress: bool = False,
    label: str | None = None,
    overwrite: bool = False,
    **options: Any,
) -> RunResult:
    """Run one or more tasks on a model; every CLI option is a keyword argument.

    ``options`` holds task and backend options by name (``parser="robust"``,
    ``base_url="http://127.0.0.1:8000/v1"``, ``concurrency=32``, ...). ``seed``: the run seed
    (:func:`~genderscope.core.runspec.derive_seeds` says what each part of it drives). ``out`` holding a
    run of another spec is refused unless ``overwrite``.
    """
    from genderscope.core.runspec import RunSpec

    spec = RunSpec.build(
        tasks,
        model,
        options=options,
        trials=trials,
        limit=limit,
        seed=seed,
        use_cache=not no_cache,
        temperature=temperature,
        max_tokens=max_tokens,
        label=label,
    )
    return run_spec(spec, out=out, write=write, progress=progress, overwrite=overwrite)


def run_spec(
    spec: Any,
    *,
    out: str | Path | None = None,
    write: bool = True,
    progress: bool = False,
    overwrite: bool = False,
) -> RunResult:
    """Run a :class:`~genderscope.core.runspec.RunSpec`, or repeat the run whose run.json (or run folder,
    or spec file) is ``spec``: the same tasks, options and seed, so the same attempts and metrics."""
    from genderscope.core.engine import run_spec as engine_run_spec
    from genderscope.core.runspec import RunSpec, load_spec

    if not isinstance(spec, RunSpec):
        spec = load_spec(spec)
    output = engine_run_spec(spec, out=out, progress=progress, write=write, overwrite=overwrite)
    return RunResult(
        out_dir=output.out_dir if write else None,
        metrics={r.task.name: r.result.metrics for r in output.runs},
        results=output.results_json()["tasks"],
        attempts=output.attempt_records(),
        manifest=output.manifest.to_json(),
    )


def check(
    runs: str | Path | RunResult | Sequence[str | Path | RunResult],
    *,
    fail_on: str | Sequence[str] = ("biased",),
    maximum: Mapping[str, float] | Sequence[str] | None = None,
    minimum: Mapping[str, float] | Sequence[str] | None = None,
    strict: bool = False,
    correction: str = "holm",
) -> list[Any]:
    """The failing cells (:class:`~genderscope.report.gate.CheckedCell`) of run folders or results, the
    same rules as ``genderscope check``: an empty list means every test passes.

    ``fail_on``: summary states that fail (``"biased,not-enough-evidence"`` or a list); ``maximum`` /
    ``minimum``: ``{"stereotype_rate": 0.1}`` or ``{"gest:stereotype_rate": 0.1}`` (also
    ``["stereotype_rate=0.1"]``); ``strict``: the whole 95% CI must be within the bound; ``correction``:
    ``"holm"`` (family-wise error over the tested cells), ``"bh"`` (false discovery rate) or ``"none"``;
    each cell's ``p_value`` and ``p_adjusted`` are on the returned cells.
    """
    from genderscope.report.gate import check_runs, thresholds
    from genderscope.report.labels import assign_labels
    from genderscope.report.runs import load_run

    items = [runs] if isinstance(runs, (str, Path, RunResult)) else list(runs)
    loaded = [r.run_data() if isinstance(r, RunResult) else load_run(r) for r in items]
    assign_labels(loaded)
    states = [fail_on] if isinstance(fail_on, str) else list(fail_on)
    return check_runs(loaded, states, thresholds(maximum, minimum), strict, correction).failures


def list_tasks() -> dict[str, str]:
    """Task name -> one-line description."""
    return {name: cls.description for name, cls in lookup.task_classes()}


def list_backends() -> dict[str, str]:
    """Model kind -> one-line description."""
    out = {}
    for kind in lookup.BACKENDS:
        try:
            out[kind] = lookup.backend_kind_class(kind).description
        except lookup.PluginError:
            continue
    return out
