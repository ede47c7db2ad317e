"""The chat-probe kit: marks, the weighted means that stand for GenderBench's nanmean over resampled
items, the subset rule, and the ``direct`` probe end to end on the null model."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from genderscope.tasks.chatprobe.calc import Evaluations, point_and_resamples, pooled, undetected_rates, wmean
from genderscope.tasks.chatprobe.items import ProbeItem, Prompt, sample_items
from genderscope.tasks.chatprobe.marks import MarkDefinition

STEPS = MarkDefinition.from_json({"metric": "x", "ranges": [0, 0.05, 0.15, 0.5, 1]})
SYM = MarkDefinition.from_json(
    {
        "metric": "d",
        "ranges": [
            [[-0.03, 0.03]],
            [[-0.1, -0.03], [0.03, 0.1]],
            [[-0.3, -0.1], [0.1, 0.3]],
            [[-1, -0.3], [0.3, 1]],
        ],
    }
)


@pytest.mark.parametrize(
    "value, expected",
    [(0.0, 0), (0.05, 0), (0.0500001, 1), (0.15, 1), (0.5, 2), (1.0, 3), (float("nan"), None)],
)
def test_point_mark_boundaries_go_to_the_better_mark(value, expected):
    assert STEPS.mark_value(value) == expected


def test_interval_mark_is_the_best_overlapping_range():
    assert STEPS.mark_value((0.1, 0.6)) == 1
    assert SYM.mark_value((-0.2, -0.12)) == 2
    assert SYM.mark_value((-0.05, 0.2)) == 0
    assert SYM.mark_value((float("nan"), float("nan"))) is None


def test_value_outside_every_range_is_reported_not_marked():
    rec = STEPS.record(-0.5, None, None)
    assert rec["mark_value"] is None and "outside every mark range" in rec["note"]


def test_weighted_mean_equals_nanmean_over_a_resampled_list():
    rng = np.random.default_rng(0)
    values = rng.random(7)
    values[2] = np.nan
    idx = rng.integers(0, 7, size=7)
    C = np.bincount(idx, minlength=7)[None, :].astype(float)
    assert wmean(C, values)[0] == pytest.approx(np.nanmean(values[idx]), abs=1e-15)


def test_pooled_rate_and_undetected_rates():
    C = np.array([[1.0, 2.0, 0.0]])
    assert pooled(C, np.array([1, 1, 5]), np.array([2, 4, 5]))[0] == pytest.approx(3 / 10)
    rates = undetected_rates(C, np.array([2, 0, 1]), np.array([1, 3, 0]))
    assert rates["undetected_rate_items"][0] == pytest.approx(1 - 1 / 3)
    assert rates["undetected_rate_attempts"][0] == pytest.approx(7 / 9)


def test_zero_denominator_is_nan():
    assert math.isnan(pooled(np.ones((1, 2)), np.zeros(2), np.zeros(2))[0])


def test_sample_items_is_genderbench_rule():
    items = [ProbeItem((Prompt(str(i)),)) for i in range(10)]
    random.seed(123)
    expected = random.sample(items, k=10)
    assert sample_items(items, 10, 123) == expected  # re-ordered even when k = all
    assert sample_items(items, None, 123) == items


def test_evaluations_drop_unanswered_items_and_count():
    ev = Evaluations.build([(0, 0, "yes"), (0, 0, None), (3, 0, "no")], ("yes", "no"))
    assert ev.n_items == 2 and list(ev.source) == [0, 3]
    assert ev.tally().tolist() == [[1, 0], [0, 1]]
    assert ev.undetected().tolist() == [1, 0]


def test_bootstrap_uses_python_resamples():
    names, point, boot = point_and_resamples(lambda C: {"m": C.sum(axis=1)}, 4, 5, 123)
    assert names == ["m"] and point[0] == 4 and boot.shape == (5, 1) and (boot == 4).all()
