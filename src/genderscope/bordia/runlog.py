"""run.json and results.json of ``bordia score`` and ``bordia sweep``, through :mod:`genderscope.core.runlog`.

Metrics: ``<context>.mu`` and ``.sigma`` (nats) with their percentile-bootstrap 95 % interval over the
scored words, ``<context>.n_*`` word counts, and in a sweep ``β`` with its OLS t-interval; a number without
an interval says why in ``no_ci``. run.json has no model (corpora are scored; a sweep trains its own
word-level LMs, named in results.json's ``model``), one task entry with the options as given plus the
resolved settings, and the sha256 of every input file.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import time
from pathlib import Path
from typing import Any, Iterable, Mapping

from genderscope.core.runlog import MetricEntry, ResultsFile, TaskManifest, TaskResults, new_manifest
from genderscope.core.runlog import write_run_log as _write

COUNTS = ("n_scored", "n_dropped", "n_eligible", "n_only_male", "n_only_female", "n_no_gender")
NO_CI_COUNT = "an exact count"


def _nan(x: Any) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def interval_entry(value: Any, ci: tuple[float, float], why_not: str) -> MetricEntry:
    """``value`` with interval ``ci``, or with ``no_ci = why_not`` when the interval is NaN."""
    if _nan(ci[0]) or _nan(ci[1]):
        return MetricEntry(value, no_ci=why_not)
    return MetricEntry(value, ci[0], ci[1])


def bootstrap_why_not(summary: Mapping[str, Any]) -> str:
    """Why a bias summary's μ/σ have no bootstrap interval."""
    if summary.get("bootstrap", 0) <= 0:
        return "bootstrap off (bootstrap = 0)"
    return f"fewer than 2 scored words ({summary['n_scored']})"


def score_metrics(scores: Mapping[str, Any]) -> dict[str, MetricEntry]:
    """``<context>.mu``, ``.sigma`` (with bootstrap interval) and the word counts of every context."""
    metrics: dict[str, MetricEntry] = {}
    for ctx, sc in scores.items():
        s = sc.bias.summary
        why = bootstrap_why_not(s)
        metrics[f"{ctx}.mu"] = interval_entry(s["mu"], s["mu_ci"], why)
        metrics[f"{ctx}.sigma"] = interval_entry(s["sigma"], s["sigma_ci"], why)
        for name in COUNTS:
            metrics[f"{ctx}.{name}"] = MetricEntry(s[name], no_ci=NO_CI_COUNT)
    return metrics


def file_sha256(path: str | Path) -> str:
    """sha256 of a file's bytes (hex)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def input_datasets(specs: Iterable[str | Path]) -> dict[str, str]:
    """sha256 of every file of the corpus arguments ``specs``, keyed by the logical data-registry name for
    registry corpora (``corpora/ptb/ptb.valid.txt``) and by the path otherwise."""
    from genderscope.bordia.text import registry_corpus_file, resolve_corpus_paths

    out: dict[str, str] = {}
    for spec in specs:
        paths = resolve_corpus_paths([spec])
        logical = None if Path(spec).exists() else registry_corpus_file(str(spec))
        for path in paths:
            out[logical or str(path)] = file_sha256(path)
    return out


def options_json(options: Any) -> dict[str, Any]:
    """An option dataclass as JSON values (paths as strings, tuples as lists)."""
    return {
        k: str(v) if isinstance(v, Path) else list(v) if isinstance(v, tuple) else v
        for k, v in dataclasses.asdict(options).items()
    }


def write_bordia_log(
    out: Path,
    task: str,
    options: Any,
    resolved: dict[str, Any],
    datasets: dict[str, str],
    results: TaskResults,
    model: str,
    started: float,
) -> None:
    """Write ``out/run.json`` (options, resolved settings, input sha256s, seed, seconds) and
    ``out/results.json`` (``results`` under ``task``, ``model`` = what was scored)."""
    seed = resolved.get("score_options", {}).get("bootstrap_seed")
    manifest = new_manifest(model=None, started=started, seed=seed)
    manifest.tasks[task] = TaskManifest(
        options=options_json(options), datasets=datasets, measurement={"resolved": resolved}
    )
    manifest.seconds = round(time.time() - started, 3)
    _write(out, manifest, ResultsFile(model=model, tasks={task: results}))


def write_results_only(out: Path, task: str, results: TaskResults, model: str) -> None:
    """results.json alone (the per-context sub-folders of a sweep)."""
    _write(out, None, ResultsFile(model=model, tasks={task: results}))
