"""`compare --paired`: each metric's change between two runs of a scored task, resampled with the same
item draws for both runs."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from genderscope.cli import app
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


def test_compare_paired_on_the_command_line(tmp_path):
    a, b = _run(tmp_path, "random:1", "a"), _run(tmp_path, "random:2", "b")
    res = CliRunner().invoke(app, ["compare", str(a), str(b), "--paired"], env={"COLUMNS": "160"})
    assert res.exit_code == 0, res.output
    flat = "".join(res.output.split()).replace("│", "")  # the table folds long words at narrow terminals
    assert "crows-pairs" in flat and "paired" in flat and "likelihood" in flat


def test_answers_come_through_the_replay_path_so_stale_ones_are_refused(tmp_path):
    import json

    from genderscope.core.errors import DataError

    a, b = _run(tmp_path, "random:1", "a"), _run(tmp_path, "random:2", "b")
    lines = (b / "attempts.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    assert "request_sha256" in first
    first["request_sha256"] = "0" * 64  # recorded for another request
    (b / "attempts.jsonl").write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    with pytest.raises(DataError, match="stale"):
        paired_changes(a, b)
