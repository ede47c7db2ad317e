"""Intervals of the scored benchmarks stay inside the values their metric can take (``MetricDoc.bounds``):
a jackknife-t over a few units reaches past them otherwise."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from genderscope.cli.app import app
from genderscope.core.metrics import Metric, MetricDoc
from genderscope.core.finish import clipped_to_bounds


def test_clipped_to_bounds_uses_exact_then_pattern_entries_and_leaves_unbounded_sides() -> None:
    docs = {
        "r": MetricDoc("r", "", "", "Pearson r", bounds=(-1.0, 1.0)),
        "p_*": MetricDoc("p_*", "", "", "probability", bounds=(0.0, 1.0)),
        "diff": MetricDoc("diff", "", "", "nats", bounds=(0.0, None)),
    }
    got = clipped_to_bounds(
        {
            "r": Metric(-0.85, -2.49, 0.79),
            "p_x": Metric(0.9, 0.7, 1.2),
            "diff": Metric(2.7, -1.1, 6.4),
            "free": Metric(0.1, -9.0, 9.0),
            "none": Metric(None, None, None, "no interval"),
        },
        docs,
    )
    assert (got["r"].ci_low, got["r"].ci_high) == (-1.0, 0.79)
    assert (got["p_x"].ci_low, got["p_x"].ci_high) == (0.7, 1.0)
    assert (got["diff"].ci_low, got["diff"].ci_high) == (0.0, 6.4)
    assert (got["free"].ci_low, got["free"].ci_high) == (-9.0, 9.0)
    assert got["none"].no_ci == "no interval"


#: task -> a --limit with few resampling units, but enough for intervals
LIMITS = {"winogenerated": 5, "crows-pairs": 5, "stereoset": 300, "winogender": 120, "bbq-likelihood": 40}


@pytest.mark.parametrize("task", sorted(LIMITS))
def test_few_items_give_intervals_inside_the_metric_range(task: str, tmp_path: Path, data_registry) -> None:
    from genderscope.core import lookup

    args = ["run", task, "--model", "random", "--limit", str(LIMITS[task]), "--out", str(tmp_path)]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    metrics = json.loads((tmp_path / "results.json").read_text())["tasks"][task]["metrics"]
    docs = lookup.task_class(task).metric_docs
    checked = 0
    for name, m in metrics.items():
        bounded = clipped_to_bounds({name: Metric(0.0, float("-inf"), float("inf"))}, docs)[name]
        if m.get("ci_low") is None or (bounded.ci_low, bounded.ci_high) == (float("-inf"), float("inf")):
            continue
        assert bounded.ci_low <= m["ci_low"] <= m["value"] <= m["ci_high"] <= bounded.ci_high, (name, m)
        checked += 1
    assert checked > 0
