"""`compare --paired` for tasks that declare `paired_units` (per-unit scores keyed by unit id + the metrics
as a function of them): winobias-lm, gest-likelihood and the chat probes."""

from __future__ import annotations

import numpy as np
import pytest
from typer.testing import CliRunner

import genderscope
from genderscope.cli.app import app
from genderscope.core.paired import CHANGED_DOWN, CHANGED_UP, UNCHANGED, paired_changes, paired_task


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Two null-model runs (random:1, random:2) of each task, 60 units, the same run seed."""
    tmp = tmp_path_factory.mktemp("paired-units")
    out = {}
    for task in ("winobias-lm", "gest-likelihood", "gest"):
        for tag, model in (("a", "random:1"), ("b", "random:2")):
            genderscope.run(task, model, limit=60, seed=1, no_cache=True, out=tmp / f"{task}-{tag}")
        out[task] = (tmp / f"{task}-a", tmp / f"{task}-b")
    return out


@pytest.mark.parametrize("task", ["winobias-lm", "gest-likelihood", "gest"])
def test_each_change_is_after_minus_before_within_its_interval(runs, task):
    a, b = runs[task]
    changes = paired_task(a, b, task)
    with_ci = [c for c in changes if c.ci_low is not None]
    assert len(with_ci) >= 3
    for c in with_ci:
        assert c.n_items == 60
        assert c.change == pytest.approx(c.after - c.before, abs=1e-9)
        assert c.ci_low <= c.change <= c.ci_high
        assert c.state in (UNCHANGED, CHANGED_UP, CHANGED_DOWN)


def test_winobias_lm_pairs_line_pairs_and_names_conditions(runs):
    changes = {c.metric: c for c in paired_task(*runs["winobias-lm"], "winobias-lm")}
    assert {"none_none/acc_pro", "none_none/acc_anti", "none_none/bias"} <= set(changes)
    assert changes["none_none/bias"].ci_low is not None


def test_gest_likelihood_ranks_have_no_interval_and_say_why(runs):
    from genderscope.tasks.gest_likelihood.task import RANK_NO_CI

    changes = paired_task(*runs["gest-likelihood"], "gest-likelihood")
    ranks = [c for c in changes if "/feminine_rank_" in c.metric]
    assert ranks and all(c.ci_low is None and c.note == RANK_NO_CI for c in ranks)
    assert next(c for c in changes if c.metric == "g_s_mean").ci_low is not None


@pytest.mark.parametrize("task", ["winobias-lm", "gest-likelihood", "gest"])
def test_a_run_against_itself_has_no_change(runs, task):
    a, _ = runs[task]
    for c in paired_task(a, a, task):
        assert c.state == UNCHANGED
        if c.change is not None:
            assert c.change == 0
        if c.ci_low is not None:
            assert c.ci_low == 0 == c.ci_high


def test_chat_probe_items_match_by_content(tmp_path, runs):
    # another --limit keeps another subset of items: only the items both runs asked are paired
    import json

    a, _ = runs["gest"]
    genderscope.run("gest", "random:2", limit=80, seed=1, no_cache=True, out=tmp_path / "b")

    def prompts(run):  # each item's prompts, joined
        by_item: dict[str, list[str]] = {}
        for line in (run / "attempts.jsonl").read_text().split("\n"):
            if line:
                rec = json.loads(line)
                by_item.setdefault(rec["item_id"].rsplit("/", 1)[0], []).append(str(rec["prompt"]))
        return {"|".join(p) for p in by_item.values()}

    common = prompts(a) & prompts(tmp_path / "b")
    assert 0 < len(common) <= 60
    assert paired_task(a, tmp_path / "b", "gest")[0].n_items == len(common)


def test_compare_paired_terminal_and_html_show_the_new_tasks(runs, tmp_path, monkeypatch):
    from genderscope.cli import console as cli_console

    # the console reads COLUMNS once, when first imported (under xdist, by another test)
    monkeypatch.setattr(cli_console.out, "width", 200)
    a, b = runs["winobias-lm"]
    page = tmp_path / "ba.html"
    res = CliRunner().invoke(
        app, ["compare", "--paired", str(a), str(b), "--html", str(page)], env={"COLUMNS": "200"}
    )
    assert res.exit_code == 0, res.output
    flat = "".join(res.output.split()).replace("│", "")
    assert "winobias-lm" in flat and "none_none/bias" in flat and "evidence" in flat
    html = page.read_text()
    assert "none_none/bias" in html and "winobias-lm" in html
    a, b = runs["gest"]  # a chat probe, end to end
    res = CliRunner().invoke(app, ["compare", "--paired", str(a), str(b)], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    flat = "".join(res.output.split()).replace("│", "")
    assert "stereotype_rate" in flat and "notpaired" not in flat


def test_paired_changes_lists_every_shared_task(runs, tmp_path):
    # gest and gest-likelihood of one run folder each: the shared tasks are paired
    a, b = runs["gest"]
    assert {c.task for c in paired_changes(a, b)} == {"gest"}


def test_evaluations_subset_cuts_items_and_per_attempt_fields():
    from dataclasses import dataclass

    from genderscope.tasks.chatprobe.calc import Evaluations

    @dataclass(frozen=True)
    class WithCounts(Evaluations):
        counts: np.ndarray

    base = Evaluations.build([(0, 0, "a"), (3, 0, None), (3, 1, "b"), (5, 0, "b")], ("a", "b"))
    ev = WithCounts(base.item, base.prompt, base.code, base.source, base.categories, np.arange(4.0))
    sub = ev.subset(np.array([2, 1]))  # items 5 and 3, in that order
    assert sub.source.tolist() == [5, 3] and sub.n_items == 2
    assert sub.item.tolist() == [1, 1, 0] and sub.code.tolist() == [-1, 1, 1]
    assert sub.counts.tolist() == [1.0, 2.0, 3.0]


def test_the_all_jackknife_rule_keeps_its_level_on_null_pairs():
    # 400 null pairs of 40 binary units (independent runs): share of changes flagged at 95 % stays near 5 %
    from genderscope.stats.rules import UnitScores, paired_rule, rule_intervals

    rng = np.random.default_rng(5)
    flagged = 0
    for s in range(400):
        a, b = rng.random(40) < 0.3, rng.random(40) < 0.3
        u = UnitScores([str(i) for i in range(40)], np.stack([a, b]).astype(float), lambda x, C: {})
        stat = lambda C, x=u.scores: {"d": (C @ x[1] - C @ x[0]) / C.sum(axis=1)}  # noqa: E731
        _, _, cols = rule_intervals(stat, 40, np.arange(40), 200, s, paired_rule("jackknife-t"))
        lo, hi, _ = cols[0]
        flagged += lo is not None and not lo <= 0 <= hi
    assert flagged / 400 <= 0.08


def test_gest_likelihood_stereotype_means_take_their_rows_as_degrees_of_freedom(runs):
    from genderscope.core.paired import _replayed
    from genderscope.core.reparse import read_manifest

    a, _ = runs["gest-likelihood"]
    task, results = _replayed(a, "gest-likelihood", read_manifest(a))
    u = task.paired_units(results)
    df = u.df(u.scores)
    rows = u.scores[-16:].sum(axis=1)  # the stereotypes, one-hot
    assert df["template_0/mean_score_3"] == rows[2] - 1 and df["template_0/r_16"] == rows[15] - 1
    assert "g_s_mean" not in df


def test_rule_intervals_degrees_of_freedom_widen_the_jackknife_t():
    from genderscope.stats.rules import paired_rule, rule_intervals

    x = np.random.default_rng(1).normal(size=40)
    stat = lambda C: {"m": (C @ x) / C.sum(axis=1)}  # noqa: E731
    wide = rule_intervals(stat, 40, np.arange(40), 100, 0, paired_rule("jackknife-t"), {"m": 4})[2][0]
    plain = rule_intervals(stat, 40, np.arange(40), 100, 0, paired_rule("jackknife-t"))[2][0]
    assert wide[0] < plain[0] < plain[1] < wide[1]


def test_a_metric_moved_by_few_units_gets_no_interval_under_the_paired_rule():
    # a subgroup mean over 3 of 40 units: the jackknife-t would use 39 degrees of freedom
    from genderscope.stats.rules import FEW_SUBGROUP_NO_CI, paired_rule, rule_intervals

    x = np.random.default_rng(2).normal(size=40)
    sub = np.zeros(40, dtype=bool)
    sub[[3, 17, 30]] = True

    def stat(C):
        return {"all": (C @ x) / C.sum(axis=1), "sub": (C @ (x * sub)) / (C @ sub.astype(float))}

    names, _, cols = rule_intervals(stat, 40, np.arange(40), 100, 0, paired_rule("jackknife-t"))
    got = dict(zip(names, cols))
    assert got["sub"] == (None, None, FEW_SUBGROUP_NO_CI)
    assert got["all"][0] is not None


def test_a_nan_interval_is_no_interval_not_a_change():
    from genderscope.core.paired import _change

    c = _change("t", "m", (0.0, 0.5, 0.5), (float("nan"), float("nan"), "undefined"), 30)
    assert (c.ci_low, c.ci_high, c.state, c.note) == (None, None, UNCHANGED, "undefined")
