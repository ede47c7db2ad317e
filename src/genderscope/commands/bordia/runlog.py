"""The run log of ``bordia score`` and ``bordia sweep``: their metrics and run.json entry, written by
:func:`genderscope.core.runlog.write_run_log` like every run.

Metrics: ``<context>.mu`` and ``.sigma`` (nats) with their percentile-bootstrap 95 % interval over the
scored words, ``<context>.n_*`` word counts, and in a sweep ``β`` with its OLS t-interval; a number without
an interval says why in ``no_ci``. run.json has no model (corpora are scored; a sweep trains its own
word-level LMs, named in results.json's ``model``), one entry with the options as given plus the
resolved settings, and the sha256 of every input file.
"""

from __future__ import annotations

import dataclasses
import math
import time
from pathlib import Path
from typing import Any, Mapping

from genderscope.bordia.bias import bootstrap_why_not
from genderscope.core.metrics import MetricEntry
from genderscope.core.runlog import RunManifest, TaskManifest, new_manifest

COUNTS = ("n_scored", "n_dropped", "n_eligible", "n_only_male", "n_only_female", "n_no_gender")
NO_CI_COUNT = "an exact count"


def _nan(x: Any) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def interval_entry(value: Any, ci: tuple[float, float], why_not: str) -> MetricEntry:
    """``value`` with interval ``ci``, or with ``no_ci = why_not`` when the interval is NaN."""
    if _nan(ci[0]) or _nan(ci[1]):
        return MetricEntry(value, no_ci=why_not)
    return MetricEntry(value, ci[0], ci[1])


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


def options_json(options: Any) -> dict[str, Any]:
    """An option dataclass as JSON values (paths as strings, tuples as lists)."""
    return {
        k: str(v) if isinstance(v, Path) else list(v) if isinstance(v, tuple) else v
        for k, v in dataclasses.asdict(options).items()
    }


def _input_licences(datasets: Mapping[str, str]) -> dict[str, str]:
    """Licence of each recorded input: a registry file's, the authors' pair files' (``pairs:penn``) too."""
    from genderscope.bordia.pairs import PAIR_FILES
    from genderscope.data.licences import registry_licences

    def registry_name(name: str) -> str:
        kind, _, short = name.partition(":")
        return PAIR_FILES.get(short, name) if kind == "pairs" else name

    known = registry_licences(registry_name(n) for n in datasets)
    return {n: known[registry_name(n)] for n in datasets}


def command_manifest(
    name: str, options: Any, resolved: dict[str, Any], datasets: dict[str, str], started: float
) -> RunManifest:
    """run.json of a command: no model, entry ``name`` with the options as given, the ``resolved``
    settings and the input sha256s; seed = the bootstrap seed; seconds since ``started``."""
    seed = resolved.get("score_options", {}).get("bootstrap_seed")
    manifest = new_manifest(model=None, started=started, seed=seed)
    manifest.tasks[name] = TaskManifest(
        options=options_json(options),
        datasets=datasets,
        measurement={"resolved": resolved},
        licences=_input_licences(datasets),
    )
    manifest.seconds = round(time.time() - started, 3)
    return manifest
