"""Task ``winobias-adjectives`` end to end: null model, replay round trip via the loopback server,
replicate preset fed with synthetic replies (§6.4 counts), reparse, options and failures."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from genderscope.cli.app import app
from genderscope.core.engine import run_tasks
from genderscope.common.errors import DataError, MissingResponsesError, UsageError
from genderscope.core.options import build_options
from genderscope.core.task import RunContext
from genderscope.tasks.winobias_adjectives.parse_strict import gold_word
from genderscope.tasks.winobias_adjectives.options import WinoBiasAdjectivesOptions
from genderscope.tasks.winobias_adjectives.task import WinoBiasAdjectivesTask

TASK = "winobias-adjectives"


def summary(out) -> dict:
    return {r["condition"]: r for r in out.runs[0].result.extra["summary"]}


def run(data_registry, model: str, out: Path, options: dict, **kw):
    """``run_tasks`` on this task alone, quietly, reading the test data registry."""
    return run_tasks([TASK], model, out=out, progress=False, data=data_registry, options=options, **kw)


def make_task(data_registry, trials=5, limit=None, **opts):
    o = build_options(WinoBiasAdjectivesOptions, opts, "task")
    ctx = RunContext(trials=trials, limit=limit, request_kinds=frozenset({"chat"}), data=data_registry)
    return WinoBiasAdjectivesTask(o, ctx)


def test_null_model_shows_no_significant_bias(tmp_path, data_registry):
    out = run(
        data_registry,
        "random",
        tmp_path / "r",
        {"conditions": "dry_bubbly,none_mean,political_none", "bootstrap_samples": "2000"},
    )
    rows = summary(out)
    assert list(rows) == ["none_none", "dry_bubbly", "political_none", "none_mean"]
    for name, r in rows.items():
        assert r["n_items"] == 396 and r["n_trials"] == 5
        assert abs(r["bias"]) < 8  # acc SD per trial ~2.5 points
        assert 40 < r["answers_pro"]["correct"] < 60 and r["answers_pro"]["unsure"] == 0
        assert r["bias_ci95_low"] < r["bias"] < r["bias_ci95_high"]
        if name != "none_none":
            assert r["p_holm"] >= 0.05 and r["significant"] is False
            assert r["ci95_low"] < r["diff"] < r["ci95_high"]
    # null model: the line-level CI (Student's t by default) of the headline bias covers 0; of four 95 %
    # CIs at most one may miss 0 by chance
    assert rows["none_none"]["bias_ci95_low"] < 0 < rows["none_none"]["bias_ci95_high"]
    assert sum(not (r["bias_ci95_low"] < 0 < r["bias_ci95_high"]) for r in rows.values()) <= 1
    res = json.loads((tmp_path / "r" / "results.json").read_text())["tasks"][TASK]
    assert res["metrics"]["diff_dry_bubbly"]["ci_low"] == pytest.approx(rows["dry_bubbly"]["ci95_low"])
    assert res["metrics"]["bias_none_none"]["ci_high"] == pytest.approx(rows["none_none"]["bias_ci95_high"])
    assert res["run"]["n_female_first"] == 40 and res["run"]["robust_parser_version"] == "1"
    first = json.loads((tmp_path / "r" / "attempts.jsonl").open().readline())
    assert first["item_id"] == "winobias-adjectives/head/type1-dev/none_none/pro/1" and first["trial"] == 1
    assert first["strict"]["class"] == first["robust"]["class"] == first["answer_class"]
    assert res["run"]["sampling"]["temperature"] == 1.0 and res["run"]["sampling"]["max_tokens"] == 16
    assert first["response"] == first["strict"]["extraction"] and first["finish_reason"] is None


def test_item_ids_trials_and_placement(data_registry):
    t = make_task(data_registry, trials=3, limit=2, placement="stereotype", conditions="dry_bubbly")
    atts = t.attempts()
    assert len(atts) == 2 * 2 * 2 * 3
    ids = sorted({(a.item_id, a.trial) for a in atts})
    assert ("winobias-adjectives/head/type1-dev/dry_bubbly@stereotype/anti/2", 3) in ids
    assert ("winobias-adjectives/head/type1-dev/none_none/pro/1", 1) in ids
    assert {a.trial for a in atts} == {1, 2, 3}
    req = atts[0].request
    assert req.payload["temperature"] == 1.0 and req.payload["max_tokens"] == 16
    assert req.payload["messages"] == [{"role": "user", "content": req.prompt_text}]
    assert req.hints["choices"] == ["developer", "designer"]
    p = make_task(data_registry, trials=1, limit=1, preset="replicate").attempts()[0]
    assert p.item_id == "winobias-adjectives/2018-03-authors/type1-test/none_none/pro/1"


def test_preset_and_explicit_options(data_registry):
    o = build_options(WinoBiasAdjectivesOptions, {"preset": "replicate"}, "t")
    assert (o.release, o.type, o.split, o.parser, o.stats, o.exclude) == (
        "2018-03-authors",
        1,
        "test",
        "strict",
        "replicate",
        "none",
    )
    o = build_options(WinoBiasAdjectivesOptions, {"preset": "replicate", "parser": "robust"}, "t")
    assert o.parser == "robust" and o.release == "2018-03-authors"
    o = build_options(WinoBiasAdjectivesOptions, {}, "t")
    assert (o.release, o.type, o.split, o.parser, o.stats) == ("head", 1, "dev", "robust", "default")
    with pytest.raises(UsageError, match="unknown flag"):
        make_task(data_registry, exclude="not_a_flag")
    with pytest.raises(UsageError, match="type 1 test"):
        make_task(data_registry, release="2018-03-authors")
    with pytest.raises(UsageError, match="--type must be 1 or 2"):
        build_options(WinoBiasAdjectivesOptions, {"type": "3"}, "t")
    with pytest.raises(UsageError, match="valid: none_none"):
        make_task(data_registry, conditions="nope")


def _synthetic_replay(
    task: WinoBiasAdjectivesTask,
    counts: dict[str, tuple[list[int], list[int]]],
    path: Path,
    style: str = "{w}",
) -> None:
    """Replies such that in trial t exactly counts[cond][label][t] lines are answered correctly."""
    rows = []
    n_lines = len(task.wb().pairs)
    for a in task.attempts():
        info = task._items[a.meta["k"]]
        pro, anti = counts[info["condition"]]
        k = (pro if info["label"] == "pro" else anti)[a.trial - 1]
        # rotate which lines are right so that the trials are not identical line by line
        right = (a.meta["l"] + 7 * a.trial) % n_lines < k
        word = gold_word(info["referent"] if right else info["other"])
        rows.append({"id": a.item_id, "trial": a.trial, "response": style.format(w=word)})
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")


SIX_FOUR = {
    "none_none": ([340, 338, 342, 339, 341], [255, 250, 258, 252, 249]),
    "arrogant_responsive": ([330, 333, 327, 335, 331], [221, 226, 215, 224, 219]),
    "brilliant_busy": ([339, 341, 336, 340, 338], [250, 254, 247, 251, 253]),
}


def test_replicate_preset_through_replay_gives_6_4_values(tmp_path, data_registry):
    opts = {"preset": "replicate", "conditions": "arrogant_responsive,brilliant_busy"}
    task = make_task(data_registry, **opts)
    assert len(task.wb().pairs) == 395
    replay = tmp_path / "synthetic.jsonl"
    _synthetic_replay(task, SIX_FOUR, replay)
    out = run(data_registry, f"replay:{replay}", tmp_path / "rep", opts)
    rows = summary(out)
    base, a, b = rows["none_none"], rows["arrogant_responsive"], rows["brilliant_busy"]
    assert base["acc_pro"] == [86.1, 85.6, 86.6, 85.8, 86.3] and base["acc_anti"] == [
        64.6,
        63.3,
        65.3,
        63.8,
        63.0,
    ]
    assert base["bias_trials"] == [21.5, 22.3, 21.3, 22.0, 23.3] and base["bias"] == 22.1
    assert (a["bias"], a["diff"], b["bias"], b["diff"]) == (27.9, 5.8, 22.2, 0.1)
    assert a["p_replicate"] == pytest.approx(4.647e-07, rel=1e-3) and a["significant"] is True
    assert b["p_replicate"] == pytest.approx(0.40750, abs=5e-5) and b["significant"] is False
    # the default-mode statistics are computed too
    assert a["p_welch"] == pytest.approx(2.3585e-06, rel=1e-4) and a["p_holm"] == pytest.approx(
        4.7171e-06, rel=1e-4
    )
    assert a["answers_pro"]["correct"] == pytest.approx(
        100 * sum(SIX_FOUR["arrogant_responsive"][0]) / (395 * 5)
    )
    assert a["counts_anti"][2] == {"correct": 215, "incorrect": 180, "unsure": 0, "other": 0}
    # the published layout in the terminal
    from rich.console import Console

    con = Console(width=120, record=True)
    con.print(out.runs[0].task.render(out.runs[0].result))
    text = con.export_text()
    assert "arrogant" in text and "27.9" in text and "5.8" in text and "0.000" in text and "0.407*" in text


def test_reparse_switches_parser_offline(tmp_path, data_registry, monkeypatch):
    opts = {"conditions": "dry_bubbly", "bootstrap_samples": "200"}
    task = make_task(data_registry, trials=2, limit=30, **opts)
    replay = tmp_path / "answers.jsonl"
    counts = {c: ([20, 22], [10, 12]) for c in ("none_none", "dry_bubbly")}
    _synthetic_replay(task, counts, replay, style="The {w}.")  # strict: 'The' -> other
    out = run(
        data_registry,
        f"replay:{replay}",
        tmp_path / "run",
        opts,
        trials=2,
        limit=30,
        temperature=0.7,
        max_tokens=40,
    )
    robust = summary(out)
    assert robust["none_none"]["acc_pro"] == pytest.approx([100 * 20 / 30, 100 * 22 / 30])
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(app, ["reparse", str(tmp_path / "run"), "--parser", "strict"])
    assert res.exit_code == 0, res.output
    rep = json.loads((tmp_path / "run-reparsed" / "results.json").read_text())["tasks"][TASK]
    rows = {r["condition"]: r for r in rep["summary"]}
    assert rows["none_none"]["acc_pro"] == [0.0, 0.0] and rows["none_none"]["answers_pro"]["other"] == 100.0
    assert rep["run"]["parse_mode"] == "strict"
    assert rep["run"]["sampling"]["temperature"] == 0.7 and rep["run"]["sampling"]["max_tokens"] == 40
    # the same numbers as a direct strict run on the same answers
    direct = run(
        data_registry,
        f"replay:{replay}",
        tmp_path / "direct",
        {**opts, "parser": "strict"},
        trials=2,
        limit=30,
        temperature=0.7,
        max_tokens=40,
    )
    assert rep["summary"] == json.loads(json.dumps(direct.runs[0].result.to_json()))["summary"]
    recs = [json.loads(x) for x in (tmp_path / "run-reparsed" / "attempts.jsonl").open()]
    assert all(r["answer_class"] == r["strict"]["class"] == "other" for r in recs)


def test_incomplete_replay_reports_missing(tmp_path, data_registry):
    replay = tmp_path / "few.jsonl"
    replay.write_text(
        json.dumps(
            {"id": "winobias-adjectives/head/type1-dev/none_none/pro/1", "trial": 1, "response": "developer"}
        )
        + "\n"
    )
    with pytest.raises(MissingResponsesError):
        run(
            data_registry,
            f"replay:{replay}",
            tmp_path / "x",
            {"conditions": "dry_bubbly"},
            limit=2,
            trials=1,
        )
    out = run(
        data_registry,
        f"replay:{replay}",
        tmp_path / "x",
        {"conditions": "dry_bubbly", "replay_missing": "skip"},
        limit=2,
        trials=1,
    )
    res = out.runs[0].result
    assert res.extra["run"]["incomplete"] is True and res.extra["run"]["missing_attempts"] == 7
    assert res.extra["summary"] == [] and res.metrics == {}


fake_openai = pytest.importorskip("genderscope_dev.fake_openai")


def test_replay_round_trip_against_loopback_server(tmp_path, data_registry, monkeypatch):
    opts = {"conditions": "arrogant_responsive,none_blond", "bootstrap_samples": "300", "concurrency": "16"}
    with fake_openai.FakeOpenAIServer() as srv:
        opts["base_url"] = srv.url
        run(data_registry, "openai:fake-chat", tmp_path / "rec", opts, trials=2, limit=15)
        sent = srv.stats()["requests"]
        assert sent == 3 * 2 * 15 * 2  # every trial its own request
        assert all(n == 2 for n in srv.stats()["by_prompt"].values())  # 2 trials per prompt
        again = run(data_registry, "openai:fake-chat", tmp_path / "again", opts, trials=2, limit=15)
        assert srv.stats()["requests"] == sent and again.runs[0].counts.cache_hits == 180
        more = run(data_registry, "openai:fake-chat", tmp_path / "more", opts, trials=3, limit=15)
        assert srv.stats()["requests"] == sent + 90 and more.runs[0].counts.cache_hits == 180
        replay_opts = {k: v for k, v in opts.items() if k not in ("base_url", "concurrency")}
        rep = run(
            data_registry,
            f"replay:{tmp_path / 'rec' / 'attempts.jsonl'}",
            tmp_path / "rep",
            replay_opts,
            trials=2,
            limit=15,
        )
        assert srv.stats()["requests"] == sent + 90  # replay sends nothing
    assert rep.runs[0].counts.requests == 180 and rep.runs[0].counts.errors == 0
    a = json.loads((tmp_path / "rec" / "results.json").read_text())["tasks"][TASK]
    b = json.loads((tmp_path / "rep" / "results.json").read_text())["tasks"][TASK]
    for x in (a, b):
        for k in ("started", "ended", "model_kind", "model"):
            x["run"].pop(k, None)
    assert a == b
    ra = [json.loads(x)["answer_class"] for x in (tmp_path / "rec" / "attempts.jsonl").open()]
    rb = [json.loads(x)["answer_class"] for x in (tmp_path / "rep" / "attempts.jsonl").open()]
    assert ra == rb and np.mean([c == "other" for c in ra]) == 1.0  # the fake answers "(a)/(b)/(c)"


def test_trials_must_be_positive_and_one_trial_is_untestable(tmp_path, data_registry):
    with pytest.raises(UsageError, match="--trials must be at least 1"):
        make_task(data_registry, trials=0)
    for stats in ("default", "replicate"):
        out = run(
            data_registry,
            "random",
            tmp_path / stats,
            {"conditions": "none_mean", "bootstrap_samples": "100", "stats": stats},
            trials=1,
            limit=10,
        )
        row = summary(out)["none_mean"]
        assert row["p_welch"] is None and row["p_holm"] is None and row["p_replicate"] is None
        assert row["significant"] is None and row["bias_sd"] is None and row["ci95_low"] is not None


def test_stale_replay_entry_fails(tmp_path, data_registry):
    """§8: an answer recorded for (item id, trial) with a different prompt is a stale entry (a line
    written before attempts.jsonl carried request_sha256 is compared by its prompt)."""
    opts = {"conditions": "dry_bubbly", "bootstrap_samples": "0"}
    rec = run(data_registry, "random", tmp_path / "rec", opts, trials=2, limit=3)
    lines = (tmp_path / "rec" / "attempts.jsonl").read_text().splitlines()
    row = json.loads(lines[3])
    del row["request_kind"], row["request_sha256"]
    row["prompt"] = row["prompt"].replace("The ", "A ", 1)
    lines[3] = json.dumps(row)
    stale = tmp_path / "stale.jsonl"
    stale.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError, match=f"stale cache entry {row['item_id']}#{row['trial']}"):
        run(data_registry, f"replay:{stale}", tmp_path / "x", opts, trials=2, limit=3)
    used = run(
        data_registry, f"replay:{stale}", tmp_path / "y", {**opts, "replay_stale": "use"}, trials=2, limit=3
    )
    assert summary(used) == summary(rec)


def test_attempt_lines_equal_plain_json_of_merged_records(tmp_path, data_registry):
    """The pre-encoded fast path writes exactly json.dumps(engine fields | task fields)."""
    out = run(
        data_registry,
        "random",
        tmp_path / "r",
        {"conditions": "none_blond", "bootstrap_samples": "0"},
        trials=2,
        limit=4,
    )
    lines = (tmp_path / "r" / "attempts.jsonl").read_text().splitlines()
    merged = out.attempt_records()
    assert len(lines) == len(merged) == 2 * 2 * 4 * 2
    assert lines == [json.dumps(r, ensure_ascii=False) for r in merged]
    assert list(merged[0])[:6] == ["task", "item_id", "trial", "prompt", "response", "cache_hit"]
    assert merged[0]["answer_class"] in ("correct", "incorrect") and merged[0]["line"] == 1


def test_echo_mapping_is_parsed_per_condition(tmp_path, data_registry):
    """The reply "blond" means entity 2 under none_blond but is a plain echo in the baseline: with
    map_adjective_echo the parse cache must not share one result between conditions."""
    opts = {"conditions": "none_blond", "bootstrap_samples": "0", "map_adjective_echo": "true"}
    task = make_task(data_registry, trials=1, limit=5, **opts)
    replay = tmp_path / "blond.jsonl"
    replay.write_text(
        "".join(
            json.dumps({"id": a.item_id, "trial": a.trial, "response": "Blond"}) + "\n"
            for a in task.attempts()
        )
    )
    out = run(data_registry, f"replay:{replay}", tmp_path / "r", opts, trials=1, limit=5)
    rows = summary(out)
    assert rows["none_none"]["answers_pro"]["other"] == 100.0
    assert rows["none_blond"]["answers_pro"]["other"] == 0.0
    recs = [r for r in out.attempt_records() if r["condition"] == "none_blond"]
    assert all(
        r["robust"]["rule"] == "adjective_echo" and r["robust"]["occupation"] == r["entities"][1]
        for r in recs
    )


def test_star_marks_p_above_alpha():
    from genderscope.tasks.winobias_adjectives.render import _fp

    assert _fp(0.03, False) == "0.030" and _fp(0.03, False, 0.01) == "0.030*"
    assert _fp(0.0004, False) == "0.000"
    assert _fp(0.06, False) == "0.060*" and _fp(None, False) == "n/a" and _fp(0.5, True) == "—"
