"""No point estimate outside its own interval (issue 27, item 3): every task on the random null model at a
small limit; each metric that has both bounds has ``ci_low <= value <= ci_high`` (magnitudes get a folded
interval, maxima none; float noise around zero is written as 0)."""

from __future__ import annotations

import math

import pytest

import genderscope
from genderscope import catalogue as registry


def _outside(task: str, seed: int) -> list[str]:
    res = genderscope.run(task, f"random:{seed}", limit=20, seed=seed, no_cache=True, write=False)
    bad = []
    for name, m in res.metrics[task].items():
        values = (m.value, m.ci_low, m.ci_high)
        if any(x is None or not isinstance(x, (int, float)) or math.isnan(x) for x in values):
            continue
        if not m.ci_low <= m.value <= m.ci_high:
            bad.append(f"{task} seed {seed}: {name} = {m.value!r} [{m.ci_low!r}, {m.ci_high!r}]")
    return bad


#: its bounded least squares per resample take ~10 s at a small limit
SLOW = {"hiring-an"}


@pytest.mark.parametrize(
    "task", [pytest.param(t, marks=pytest.mark.slow) if t in SLOW else t for t in sorted(registry.TASKS)]
)
def test_value_within_its_interval(task: str) -> None:
    from genderscope.core import lookup
    from genderscope.core.suites import task_missing_packages

    missing = task_missing_packages(lookup.task_class(task))
    if missing:
        pytest.skip(f"{task} {missing}")
    assert [line for seed in (1, 2) for line in _outside(task, seed)] == []
