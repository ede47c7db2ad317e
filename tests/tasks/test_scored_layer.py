"""The scored-benchmark layer (tasks/scored): items to requests, answers to scores, metrics over weight
matrices, --limit = the first N items, failed items counted, clusters resampled whole; crows-pairs
(lm-eval mode) end to end on the null model."""

from __future__ import annotations

import json
import numpy as np
import pytest

from genderscope.core.requests import AttemptResult
from genderscope.core.task import RunContext
from genderscope.tasks.scored.items import Choice, ScoredItem
from genderscope.tasks.scored.benchmark import ScoredBenchmark, ScoredOptions
from genderscope.tasks.scored.weights import wmean, wshare


class Toy(ScoredBenchmark):
    name = "toy"
    description = "two candidates; share of items preferring the first"
    # three clusters: the bootstrap and jackknife paths under test, not the small-sample rules
    min_units, few_units = 2, 0

    def load_items(self):
        return [
            ScoredItem(f"toy/{i}", Choice("ctx ", ("a", "b")), {"g": i % 2}, cluster=f"c{i // 2}")
            for i in range(6)
        ]

    def compute(self, s, C):
        return {"first": wshare(C, s.ll[:, 0] > s.ll[:, 1]), "diff": wmean(C, s.ll[:, 0] - s.ll[:, 1])}


def _ctx(limit=None, kinds=frozenset({"loglikelihood"})):
    return RunContext(limit=limit, request_kinds=kinds)


def _answer(att, lls):
    return AttemptResult(att, {"logprobs": lls, "n_tokens": [1] * len(lls), "greedy": []})


def test_one_loglikelihood_request_per_item_with_its_context():
    t = Toy(ScoredOptions(), _ctx())
    atts = t.attempts()
    assert [a.request.kind for a in atts] == ["loglikelihood"] * 6
    assert atts[0].request.payload == {"context": "ctx ", "continuations": ["a", "b"]}


def test_limit_takes_the_first_items_in_file_order():
    assert [a.item_id for a in Toy(ScoredOptions(), _ctx(limit=2)).attempts()] == ["toy/0", "toy/1"]


def test_masked_lms_get_one_pll_request_per_candidate_text():
    t = Toy(ScoredOptions(), _ctx(kinds=frozenset({"masked_logprobs"})))
    assert t.options.scoring == "pll"
    atts = t.attempts()
    assert len(atts) == 12 and atts[1].request.payload == {"text": "ctx b", "mask": "each"}


def test_exact_values_failed_items_and_clusters():
    t = Toy(ScoredOptions(n_boot=200), _ctx())
    atts = t.attempts()
    lls = [[-1, -2], [-3, -1], [-1, -1.5], [-2, -1], [-1, -4], [-5, -1]]
    res = [_answer(a, ll) for a, ll in zip(atts, lls)]
    res[5] = AttemptResult(atts[5], None, error="boom")
    out = t.score(res)
    assert out.metrics["first"].value == pytest.approx(3 / 5)
    assert out.metrics["diff"].value == pytest.approx(np.mean([1, -2, 0.5, -1, 3]))
    assert out.extra["counts"]["failed"] == 1 and out.extra["counts"]["failed_items"] == ["toy/5"]
    m = out.metrics["first"]
    assert m.ci_low <= m.value <= m.ci_high
    # clusters: items 0/1, 2/3 and 4 (5 failed) are drawn together
    s, _failed, _ll = t.scores(res)
    assert t.clusters(s).tolist() == [0, 0, 1, 1, 2]


class ToyJackknife(Toy):
    jackknife_metrics = ("dif*",)


def test_jackknife_metrics_get_the_cluster_jackknife_t_and_keep_their_values():
    from genderscope.stats.jackknife import jackknife_intervals

    lls = [[-1, -2], [-3, -1], [-1, -1.5], [-2, -1], [-1, -4], [-5, -1]]
    outs = []
    for cls in (Toy, ToyJackknife):
        t = cls(ScoredOptions(n_boot=200), _ctx())
        outs.append(t.score([_answer(a, ll) for a, ll in zip(t.attempts(), lls)]).metrics)
    boot, jk = outs
    assert jk["first"] == boot["first"] and jk["diff"].value == boot["diff"].value
    # three clusters (pairs of items): the delete-one-cluster replicates of the mean difference
    d = np.array([ll[0] - ll[1] for ll in lls])
    reps = [np.mean(np.delete(d, [2 * g, 2 * g + 1])) for g in range(3)]
    lo, hi, _ = jackknife_intervals(np.array([d.mean()]), np.array(reps)[:, None])[0]
    assert (jk["diff"].ci_low, jk["diff"].ci_high) == pytest.approx((lo, hi))
    assert (jk["diff"].ci_low, jk["diff"].ci_high) != (boot["diff"].ci_low, boot["diff"].ci_high)


def test_few_clusters_get_no_interval_then_the_jackknife_t():
    """3 clusters (< 5): no interval, with the reason; 3 clusters under a few-units threshold of 20: every
    metric's interval is the cluster jackknife-t."""
    from genderscope.stats.jackknife import jackknife_intervals
    from genderscope.stats.rules import FEW_UNITS, FEW_UNITS_NO_CI, MIN_UNITS

    class Few(Toy):
        min_units, few_units = MIN_UNITS, FEW_UNITS

    class Jk(Toy):
        min_units, few_units = 2, FEW_UNITS

    lls = [[-1, -2], [-3, -1], [-1, -1.5], [-2, -1], [-1, -4], [-5, -1]]
    few = Few(ScoredOptions(n_boot=200), _ctx())
    m = few.score([_answer(a, ll) for a, ll in zip(few.attempts(), lls)]).metrics
    assert m["diff"].ci_low is None and m["diff"].no_ci == FEW_UNITS_NO_CI and m["diff"].value is not None
    jk = Jk(ScoredOptions(n_boot=200), _ctx())
    m = jk.score([_answer(a, ll) for a, ll in zip(jk.attempts(), lls)]).metrics
    d = np.array([ll[0] - ll[1] for ll in lls])
    reps = [np.mean(np.delete(d, [2 * g, 2 * g + 1])) for g in range(3)]
    lo, hi, _ = jackknife_intervals(np.array([d.mean()]), np.array(reps)[:, None])[0]
    assert (m["diff"].ci_low, m["diff"].ci_high) == pytest.approx((lo, hi))


def test_a_statistic_without_spread_over_replicates_unlike_its_value_gets_no_interval():
    """Replicates that agree with each other but not with the point value (a correlation over two points
    is always ±1): no interval, not a zero-width one."""
    from genderscope.stats.jackknife import jackknife_intervals

    iv = jackknife_intervals(np.array([0.97, 0.5]), np.array([[1.0, 0.5], [1.0, 0.5], [1.0, 0.5]]))
    assert np.isnan(iv[0, 0]) and np.isnan(iv[0, 1])
    assert (iv[1, 0], iv[1, 1]) == (0.5, 0.5)


def test_no_bootstrap_says_why():
    t = Toy(ScoredOptions(n_boot=0), _ctx())
    res = [_answer(a, [-1.0, -2.0]) for a in t.attempts()]
    assert t.score(res).metrics["first"].no_ci == "n_boot = 0"


@pytest.mark.parametrize("bad", [-1])
def test_negative_resamples_are_refused(bad):
    with pytest.raises(ValueError, match="--n-boot"):
        ScoredOptions(n_boot=bad)


def test_crows_pairs_lm_eval_mode_on_the_null_model(tmp_path):
    from typer.testing import CliRunner

    from genderscope.cli.app import app

    out = tmp_path / "cp"
    res = CliRunner().invoke(app, ["run", "crows-pairs", "--model", "random", "--out", str(out)])
    assert res.exit_code == 0, res.output
    res = json.loads((out / "results.json").read_text())["tasks"]["crows-pairs"]
    pct = res["metrics"]["pct_stereotype"]
    assert res["counts"]["items"] == 262 and res["counts"]["failed"] == 0
    assert pct["ci_low"] <= 0.5 <= pct["ci_high"]
    lines = [json.loads(x) for x in (out / "attempts.jsonl").read_text().splitlines()]
    assert lines[0]["request_kind"] == "loglikelihood" and len(lines) == 262


def test_items_a_replay_skipped_are_neither_scored_nor_unreadable(tmp_path, data_registry) -> None:
    """``--replay-missing skip``: the items without a recorded answer are counted as skipped, and the
    evidence state names the few items scored, not a share of unreadable answers."""
    import json

    from typer.testing import CliRunner

    from genderscope.cli.app import app

    first, again = tmp_path / "five", tmp_path / "replayed"
    run = CliRunner().invoke(app, ["run", "crows-pairs", "--limit", "5", "--out", str(first)])
    assert run.exit_code == 0, run.output
    spec = f"replay:{first / 'attempts.jsonl'}"
    args = ["run", "crows-pairs", "-m", spec, "--replay-missing", "skip", "--out", str(again)]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    block = json.loads((again / "results.json").read_text())["tasks"]["crows-pairs"]
    assert block["counts"]["skipped"] == 257 and block["counts"]["failed"] == 0
    assert block["counts"]["scored"] == 5 and block["report_facts"]["unreadable"] == 0.0
    assert "unreadable" not in res.output
