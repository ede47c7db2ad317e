"""Regard by a judge: ``genderscope judge RUN --model SPEC`` is a second run over the first run's
generations (none asked again), its requests through the store; nonsense verdicts are counted as
unparseable; the judged run reparses without any model; the consistency check reports agreement."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from genderscope.commands.judge.run import judge_run
from genderscope.core.engine import run_tasks
from genderscope.common.errors import UsageError
from genderscope.core.reparse import reparse_run

FAST = {"scorers": "length", "n_boot": 100}


def _block(out: Path, task: str) -> dict:
    return json.loads((out / "results.json").read_text())["tasks"][task]


def test_random_judge_on_bold_regard_shares_gap_and_agreement(tmp_path: Path) -> None:
    run_tasks(
        ["bold"], "random", limit=40, out=tmp_path / "gen", options={**FAST, "samples": 2}, progress=False
    )
    out = judge_run(tmp_path / "gen", "random", out=tmp_path / "judged", progress=False)
    b = _block(tmp_path / "judged", "bold")
    j = b["counts"]["judge"]
    assert j["judged"] == 80 and j["unparseable"] == 0 and j["failed"] == 0 and j["both_orders_read"] == 80
    assert 0.0 < j["agreement"] < 0.6, "the null judge's two orders agree by chance (~1/4)"
    for k in ("gap.regard.negative", "American_actresses.regard.positive", "gap.regard.agreement"):
        assert k in b["metrics"]
    assert "gap.length.mean_words" in b["metrics"], "the judged run keeps every scorer"
    assert (
        b["metrics"]["gap.length.mean_words"]
        == _block(tmp_path / "gen", "bold")["metrics"]["gap.length.mean_words"]
    )
    regard = next(s for s in b["scorers"] if s["name"] == "regard")
    assert regard["consistency_check"] is True and len(regard["rubric_sha256"]) == 64
    assert b["judged_run"]["generations"] == 80
    c = out.runs[0].counts
    assert c.attempts == 80 + 160, "80 recorded generations given, 2 x 80 judge requests"
    lines = [json.loads(x) for x in (tmp_path / "judged" / "attempts.jsonl").read_text().splitlines()]
    assert {x["request_kind"] for x in lines[:80]} == {"given"} and {x["order"] for x in lines[80:]} == {
        "a",
        "b",
    }
    run_manifest = json.loads((tmp_path / "judged" / "run.json").read_text())
    assert run_manifest["tasks"]["bold"]["options"]["generations"] == str(tmp_path / "gen")
    (again,) = reparse_run(tmp_path / "judged", {"scorers": "length,refusal"}, tmp_path / "re")
    re_block = _block(tmp_path / "re", "bold")
    assert re_block["metrics"]["gap.regard.negative"] == b["metrics"]["gap.regard.negative"]
    assert "gap.refusal.share_refusal" in re_block["metrics"]
    assert (
        run_manifest["tasks"]["bold"]["options"]["generations_sha256"] == b["judged_run"]["attempts_sha256"]
    )
    with open(tmp_path / "gen" / "attempts.jsonl", "a") as fh:  # the judged run's generations change
        fh.write("\n")
    with pytest.raises(UsageError, match="changed since it was judged"):
        reparse_run(tmp_path / "judged", {}, tmp_path / "re2")


def test_nonsense_verdicts_are_unparseable_and_a_rerun_sends_nothing(tmp_path: Path) -> None:
    from genderscope_dev.fake_openai import FakeConfig, FakeOpenAIServer

    run_tasks(
        ["counterfactual"],
        "random",
        limit=6,
        out=tmp_path / "gen",
        options={**FAST, "form": "generate"},
        progress=False,
    )
    with FakeOpenAIServer(FakeConfig()) as srv:  # answers "(a) <ref>": no label
        judge_run(
            tmp_path / "gen",
            "openai:fake",
            out=tmp_path / "j1",
            consistency=False,
            options={"base_url": srv.url},
            progress=False,
        )
        sent = srv.stats()["requests"]
        b = _block(tmp_path / "j1", "counterfactual")
        n = b["counts"]["generated"]
        assert sent == n and b["counts"]["judge"] == {
            "judged": 0,
            "unparseable": n,
            "failed": 0,
            "unparseable_share": 1.0,
        }
        assert (
            b["counts"]["unreadable_share"] == 1.0
            and b["metrics"]["original.regard.unparseable"]["value"] == 1.0
        )
        assert b["metrics"]["diff.regard.negative"]["value"] is None, (
            "no verdict read: no share, never a guess"
        )
        judge_run(
            tmp_path / "gen",
            "openai:fake",
            out=tmp_path / "j2",
            consistency=False,
            options={"base_url": srv.url},
            progress=False,
        )
        assert srv.stats()["requests"] == sent, "a rerun of the judge sends nothing"


def test_judge_refuses_what_it_cannot_judge(tmp_path: Path) -> None:
    run_tasks(["gest"], "random", limit=3, out=tmp_path / "gest", progress=False)
    with pytest.raises(UsageError, match="no generation task to judge"):
        judge_run(tmp_path / "gest", "random", out=tmp_path / "x")
    run_tasks(["bold"], "random", limit=4, out=tmp_path / "b", options=FAST, progress=False)
    with pytest.raises(UsageError, match="must answer chat"):
        judge_run(tmp_path / "b", "word-lm:/nonexistent", out=tmp_path / "y")
    with pytest.raises(UsageError, match="another request"):
        run_tasks(
            ["bold"],
            "random",
            limit=4,
            out=tmp_path / "z",
            progress=False,
            max_tokens=5,
            options={**FAST, "generations": str(tmp_path / "b"), "form": "generate"},
        )


def test_judge_command_line(tmp_path: Path) -> None:
    run_tasks(["bold"], "random", limit=10, out=tmp_path / "b", options=FAST, progress=False)
    code = "from genderscope.cli.app import main; main()"
    got = subprocess.run(
        [
            sys.executable,
            "-c",
            code,
            "judge",
            str(tmp_path / "b"),
            "--model",
            "random",
            "--no-consistency",
            "--no-progress",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert got.returncode == 0, got.stderr
    assert "20 sent to the judge" not in got.stdout and "10 sent to the judge" in got.stdout.replace(
        "\n", " "
    )
    assert (tmp_path / "b-judged" / "results.json").is_file()
    bad = subprocess.run(
        [sys.executable, "-c", code, "judge", str(tmp_path / "nope"), "--model", "random"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert bad.returncode == 2 and "not a run folder" in bad.stderr and "Traceback" not in bad.stderr


def test_a_failed_recorded_generation_is_counted_not_judged(tmp_path: Path) -> None:
    run_tasks(["bold"], "random", limit=10, out=tmp_path / "gen", options=FAST, progress=False)
    path = tmp_path / "gen" / "attempts.jsonl"
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    lines[3]["error"], lines[3]["response"] = "HTTP 500 after 3 retries", None
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    judge_run(tmp_path / "gen", "random", out=tmp_path / "j", consistency=False, progress=False)
    b = _block(tmp_path / "j", "bold")
    assert (b["counts"]["generated"], b["counts"]["failed"], b["counts"]["judge"]["judged"]) == (9, 1, 9)
    assert "HTTP 500" in b["counts"]["failed_items"][0]
