"""The one finisher every task's result passes through before it is written or shown.

Whatever a task computed, the engine hands its :class:`~genderscope.core.task.TaskResult` here once:

* every interval is clipped to the values its metric can take (``MetricDoc.bounds``): a t-interval over
  few units can reach past them (a correlation's [−2.5, 0.8], a rate's [−0.09, 0.49]); the true value
  lies inside the bounds, so clipping keeps the coverage.  A compat mode that reproduces a reference
  tool's intervals (``Task.reproduces_reference_intervals``: GenderBench's ``--ci-method normal``) keeps
  them as the reference computes them;
* ``attempt_counts``: attempts, answered, failed (an error from the model or a malformed answer),
  skipped (a replay without the answer, ``--replay-missing skip``), for every task alike;
* ``tested_languages``: the languages the run tested (the report and the model card list them);
* the headline: the task's own, else its first six metrics.

The terminal's evidence line is added where results are shown
(:func:`genderscope.core.report_terminal.render_result`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from genderscope.core.metrics import Metric, MetricDoc, doc_for
from genderscope.core.requests import AttemptResult
from genderscope.core.task import Task, TaskResult

#: how many metrics a task without a declared headline shows first
DEFAULT_HEADLINE = 6


def clipped_to_bounds(metrics: Mapping[str, Metric], docs: Mapping[str, MetricDoc]) -> dict[str, Metric]:
    """``metrics`` with each interval clipped to its metric's ``bounds`` (the exact doc entry, else the
    first matching ``prefix*`` pattern); sides without a bound, and metrics without an interval, unchanged."""
    out = {}
    for name, m in metrics.items():
        doc = doc_for(docs, name)
        low, high = doc.bounds if doc is not None and doc.bounds else (None, None)
        lo, hi = m.ci_low, m.ci_high
        if lo is not None and low is not None:
            lo = max(lo, low)
        if hi is not None and high is not None:
            hi = min(hi, high)
        out[name] = m if (lo, hi) == (m.ci_low, m.ci_high) else dataclasses.replace(m, ci_low=lo, ci_high=hi)
    return out


def attempt_counts(results: Sequence[AttemptResult]) -> dict[str, int]:
    """Attempts, answered, failed and skipped among ``results`` (every round of the task)."""
    skipped = sum(1 for r in results if r.skipped)
    failed = sum(1 for r in results if r.error is not None and not r.skipped)
    return {
        "attempts": len(results),
        "answered": len(results) - skipped - failed,
        "failed": failed,
        "skipped": skipped,
    }


def finish_result(task: Task, result: TaskResult, results: Sequence[AttemptResult]) -> TaskResult:
    """``result`` as it is written: intervals inside their bounds, attempt counts, a headline."""
    keep = task.reproduces_reference_intervals()  # a compat mode: the reference's intervals, verbatim
    metrics = result.metrics if keep else clipped_to_bounds(result.metrics, type(task).metric_docs)
    headline = list(result.headline) or list(metrics)[:DEFAULT_HEADLINE]
    extra = {
        **result.extra,
        "attempt_counts": attempt_counts(results),
        "tested_languages": task.tested_languages(),
    }
    return dataclasses.replace(result, metrics=metrics, extra=extra, headline=headline)
