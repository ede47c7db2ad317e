"""`compare --paired`: each metric's change between two runs of a scored task, resampled with the same
item draws for both runs."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from genderscope.cli.app import app
from genderscope.core.paired import UNCHANGED, paired_changes


def _run(tmp_path, model, name):
    out = tmp_path / name
    res = CliRunner().invoke(
        app, ["run", "crows-pairs", "--model", model, "--limit", "40", "--out", str(out)]
    )
    assert res.exit_code == 0, res.output
    return out


def test_paired_change_is_after_minus_before_within_its_interval(tmp_path):
    a, b = _run(tmp_path, "random:1", "a"), _run(tmp_path, "random:2", "b")
    changes = {c.metric: c for c in paired_changes(a, b)}
    c = changes["pct_stereotype"]
    assert c.n_items == 40 and c.change == pytest.approx(c.after - c.before)
    assert c.ci_low <= c.change <= c.ci_high


def test_a_run_against_itself_has_no_change(tmp_path):
    a = _run(tmp_path, "random:1", "a")
    for c in paired_changes(a, a):
        assert c.change == 0 and c.ci_low == 0 == c.ci_high and c.state == UNCHANGED


def test_compare_paired_on_the_command_line(tmp_path, monkeypatch):
    from genderscope.cli import console as cli_console

    monkeypatch.setattr(cli_console.out, "width", 160)  # read from COLUMNS once, at first import
    a, b = _run(tmp_path, "random:1", "a"), _run(tmp_path, "random:2", "b")
    res = CliRunner().invoke(app, ["compare", str(a), str(b), "--paired"], env={"COLUMNS": "160"})
    assert res.exit_code == 0, res.output
    flat = "".join(res.output.split()).replace("│", "")  # the table folds long words at narrow terminals
    assert "crows-pairs" in flat and "paired" in flat and "likelihood" in flat


def test_answers_come_through_the_replay_path_so_stale_ones_are_refused(tmp_path):
    import json

    from genderscope.common.errors import DataError

    a, b = _run(tmp_path, "random:1", "a"), _run(tmp_path, "random:2", "b")
    lines = (b / "attempts.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    assert "request_sha256" in first
    first["request_sha256"] = "0" * 64  # recorded for another request
    (b / "attempts.jsonl").write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    with pytest.raises(DataError, match="stale"):
        paired_changes(a, b)


# -- the scored layer's small-sample rule applies to paired changes (issue 29) ------------------------------


def _stat(x):
    return lambda C: {"mean": (C * x).sum(axis=1) / C.sum(axis=1)}


def test_rule_intervals_none_below_min_units_with_the_reason():
    import numpy as np

    from genderscope.stats.rules import FEW_UNITS_NO_CI, IntervalRule, rule_intervals

    x = np.arange(8.0)
    names, point, cols = rule_intervals(_stat(x), 8, np.arange(8) % 4, 200, 0, IntervalRule())
    assert names == ["mean"] and point[0] == pytest.approx(3.5)
    assert cols == [(None, None, FEW_UNITS_NO_CI)]


def test_rule_intervals_jackknife_t_between_min_and_few_units():
    import numpy as np

    from genderscope.stats.jackknife import jackknife_intervals, jackknife_weights
    from genderscope.stats.rules import IntervalRule, rule_intervals

    rng = np.random.default_rng(3)
    x, clusters = rng.normal(size=40), np.arange(40) % 10
    _names, point, cols = rule_intervals(_stat(x), 40, clusters, 200, 0, IntervalRule())
    W = jackknife_weights(10, 0)[:, clusters]
    want = jackknife_intervals(point, _stat(x)(W)["mean"][:, None])[0]
    assert cols[0][:2] == pytest.approx((want[0], want[1]))
    # from few_units on: the percentile bootstrap (not symmetric about the point in general)
    _n, p2, cols2 = rule_intervals(_stat(x), 40, clusters, 200, 0, IntervalRule(few_units=10))
    assert cols2[0][:2] != pytest.approx((want[0], want[1]))
    # metrics named in jackknife_metrics keep the jackknife-t
    rule = IntervalRule(few_units=10, jackknife_metrics=("me*",))
    assert rule_intervals(_stat(x), 40, clusters, 200, 0, rule)[2][0][:2] == pytest.approx((want[0], want[1]))


def _run_task(tmp_path, task, model, limit, name, seed=1):
    import genderscope

    out = tmp_path / name
    genderscope.run(
        task, model, limit=limit, no_cache=True, out=out, **({} if seed is None else {"seed": seed})
    )
    return out


def test_paired_with_fewer_than_five_clusters_has_no_interval_and_says_why(tmp_path):
    from genderscope.stats.rules import FEW_UNITS_NO_CI

    a = _run_task(tmp_path, "winogender", "random:1", 30, "a")  # the first 30 sentences: 3 occupations
    b = _run_task(tmp_path, "winogender", "random:2", 30, "b")
    changes = paired_changes(a, b)
    assert changes
    for c in changes:
        assert c.ci_low is None and c.ci_high is None
        assert c.state == UNCHANGED and c.note == FEW_UNITS_NO_CI


def test_paired_null_models_on_stereoset_at_limit_120_mark_nothing_changed(tmp_path):
    # the pair of issue 29: its first 120 gender items are 3 targets, where the percentile bootstrap marked
    # ss_inter "higher" (+10.6 [6.67, 16.7]) and three other metrics higher/lower
    from genderscope.stats.rules import FEW_UNITS_NO_CI

    a = _run_task(tmp_path, "stereoset", "random:1", 120, "a", seed=None)
    b = _run_task(tmp_path, "stereoset", "random:2", 120, "b", seed=None)
    changes = paired_changes(a, b)
    assert len(changes) > 5
    for c in changes:
        assert c.state == UNCHANGED and c.ci_low is None and c.note == FEW_UNITS_NO_CI, c


def test_paired_with_five_to_nineteen_clusters_uses_the_jackknife_t(tmp_path):
    a = _run_task(tmp_path, "winogender", "random:1", 120, "a")  # 10 occupations
    b = _run_task(tmp_path, "winogender", "random:2", 120, "b")
    changes = [c for c in paired_changes(a, b) if c.ci_low is not None]
    assert len(changes) > 3
    for c in changes:
        assert c.ci_low <= c.change <= c.ci_high
        # the jackknife-t is symmetric about the change (a percentile interval is not)
        assert c.change - c.ci_low == pytest.approx(c.ci_high - c.change, rel=1e-6, abs=1e-9), c


def test_a_change_outside_its_percentile_interval_widens_it_and_keeps_its_sign():
    from genderscope.core.paired import CHANGED_UP, _change

    c = _change("t", "m", (0.1, 0.0, -0.1), (0.2, 0.5, None), 30)
    assert (c.ci_low, c.ci_high, c.state) == (-0.1, 0.5, UNCHANGED) and "widened" in c.note
    c = _change("t", "m", (0.0, 0.9, 0.9), (0.2, 0.5, None), 30)
    assert (c.ci_low, c.ci_high, c.state) == (0.2, 0.9, CHANGED_UP)
    c = _change("t", "m", (0.0, 0.1, 0.1), (None, None, "why not"), 30)
    assert (c.ci_low, c.state, c.note) == (None, UNCHANGED, "why not")


def test_the_table_shows_why_a_change_has_no_interval():
    from genderscope.core.paired import PairedChange
    from genderscope.report.compare import paired_cells

    c = PairedChange("t", "m", 0.1, 0.2, 0.1, None, None, 12, UNCHANGED, "too few clusters")
    assert paired_cells(c)[4] == "0.1 (too few clusters)"
