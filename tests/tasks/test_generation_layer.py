"""The generation-audit layer (tasks/generation/): sample seeds, --limit by group, the regard judge's parser
and tally, group and paired statistics against hand computations, and a BOLD run end to end on the null
model (counts, results.json, records, report facts, check)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from genderscope.core.engine import run_tasks
from genderscope.tasks.generation.prompts import GenPrompt, limit_by_group, sample_seed
from genderscope.tasks.generation.designs import GroupDesign, PairedDesign
from genderscope.tasks.generation.judge import (
    LABELS,
    UNPARSEABLE,
    RegardTally,
    judge_request,
    parse_verdict,
    rubric,
)
from genderscope.tasks.generation.scoring import ScoreTable
from genderscope.tasks.generation.stats import group_stat, paired_stat
from genderscope.tasks.generation.texts import Generated

from _gen_scorers import WordsScorer  # noqa: E402


@pytest.fixture
def stand_in_scorers(monkeypatch: pytest.MonkeyPatch) -> None:
    """The stand-in scorers of tests/_gen_scorers.py registered as built-ins for this test."""
    from genderscope import catalogue as registry

    monkeypatch.setitem(registry.SCORERS, "words", "_gen_scorers:WordsScorer")
    monkeypatch.setitem(registry.SCORERS, "refusal-standin", "_gen_scorers:RefusalStandIn")


# ---------------------------------------------------------------------------------------------- seeds
def test_sample_seeds_are_stable_in_range_and_shared_by_a_pair() -> None:
    seeds = [sample_seed(123, f"p{i}", k) for i in range(200) for k in range(3)]
    assert all(0 <= s < 2**31 for s in seeds)
    assert len(set(seeds)) == len(seeds), "every (prompt, sample) has its own seed"
    assert sample_seed(123, "p1", 0) == sample_seed(123, "p1", 0)
    assert sample_seed(124, "p1", 0) != sample_seed(123, "p1", 0), "the run seed moves every sample seed"
    a = GenPrompt("x/original", "he", "original", "x", pair="x")
    b = GenPrompt("x/swapped", "she", "swapped", "x", pair="x")
    assert a.seed_unit == b.seed_unit == "x"
    assert GenPrompt("y", "t", "g", "c").seed_unit == "y"


def test_limit_takes_both_groups_in_turn_in_file_order() -> None:
    ps = [GenPrompt(f"a{i}", "t", "A", f"a{i}") for i in range(5)] + [
        GenPrompt(f"b{i}", "t", "B", f"b{i}") for i in range(2)
    ]
    assert [p.prompt_id for p in limit_by_group(ps, 3, ("A", "B"))] == ["a0", "a1", "b0"]
    assert [p.prompt_id for p in limit_by_group(ps, 6, ("A", "B"))] == ["a0", "a1", "a2", "a3", "b0", "b1"]
    assert len(limit_by_group(ps, 100, ("A", "B"))) == 7
    assert limit_by_group(ps, None, ("A", "B")) == ps


# ---------------------------------------------------------------------------------------------- judge
@pytest.mark.parametrize(
    "answer,label",
    [
        ("positive", "positive"),
        ("Negative.", "negative"),
        ("**Neutral**", "neutral"),
        ("  other\n", "other"),
        ("Answer: negative", "negative"),
        ("The regard is positive.", "positive"),
        ("'Neutral'", "neutral"),
        ("not positive", UNPARSEABLE),
        ("positive or negative", UNPARSEABLE),
        ("(a) 3fa9c1", UNPARSEABLE),
        ("", UNPARSEABLE),
        (None, UNPARSEABLE),
        ("I cannot tell.", UNPARSEABLE),
        ("positively", UNPARSEABLE),
    ],
)
def test_verdicts_are_read_never_guessed(answer: str | None, label: str) -> None:
    assert parse_verdict(answer) == label


def test_rubric_orders_swap_the_labels_and_the_request_is_deterministic() -> None:
    a, b = rubric("a"), rubric("b")
    assert a.index("- positive") < a.index("- other") and b.index("- other") < b.index("- positive")
    assert "positive, neutral, negative, other" in a and "other, negative, neutral, positive" in b
    req = judge_request("Ann is kind.", "b")
    assert req.kind == "chat" and req.payload["temperature"] == 0.0
    assert "Ann is kind." in req.payload["messages"][0]["content"]
    assert req.hints["choices"] == ["other", "negative", "neutral", "positive"]


def test_regard_tally_counts_unparseable_apart_and_agreement_over_both_read() -> None:
    tally = RegardTally(consistency=True)
    rows = tally.rows(
        ["positive", "negative", UNPARSEABLE, None, "positive"],
        ["positive", "neutral", "positive", "x", UNPARSEABLE],
    )
    m = tally.metrics(rows.sum(axis=0))
    assert m["positive"] == pytest.approx(2 / 3) and m["negative"] == pytest.approx(1 / 3)
    assert m["unparseable"] == pytest.approx(1 / 4), "3 judged + 1 unparseable; the failed request is neither"
    assert m["agreement"] == pytest.approx(1 / 2), "two texts read in both orders, one agrees"
    assert m["net"] == pytest.approx(1 / 3)
    assert set(LABELS) <= set(m)


# ---------------------------------------------------------------------------------------------- stats
def _gens(
    groups: list[str], clusters: list[str], texts: list[str], pairs: list[str] | None = None, samples=None
) -> list[Generated]:
    out = []
    for j, (g, c, t) in enumerate(zip(groups, clusters, texts)):
        p = GenPrompt(f"p{j}", "prompt", g, c, pair=(pairs[j] if pairs else ""))
        out.append(Generated(p, samples[j] if samples else 0, t, t))
    return out


def test_group_metrics_and_gap_equal_the_hand_computation() -> None:
    texts = ["a b", "a b c d", "bad", "x y z", "bad day", "one"]
    groups = ["F", "F", "F", "M", "M", "M"]
    scorer = WordsScorer()
    table = ScoreTable.of([(scorer, scorer.score(texts))], len(texts))
    got = group_stat(table, np.array(groups), ("F", "M"), ("F", "M"))(np.ones((1, 6)))
    assert got["F.words.mean"][0] == pytest.approx(7 / 3) and got["M.words.mean"][0] == pytest.approx(6 / 3)
    assert got["gap.words.mean"][0] == pytest.approx(1 / 3)
    assert got["gap.words.share_bad"][0] == pytest.approx(1 / 3 - 1 / 3)
    C = np.array([[2.0, 0, 1, 1, 1, 1]])  # text 0 twice, text 1 never
    assert group_stat(table, np.array(groups), ("F", "M"), ("F", "M"))(C)["F.words.mean"][0] == pytest.approx(
        5 / 3
    )


def test_group_design_resamples_whole_clusters_and_clips_shares() -> None:
    class Task:
        class ctx:  # noqa: N801
            class seeds:  # noqa: N801
                bootstrap = 0

        class options:  # noqa: N801
            n_boot = 300

        metric_docs = {}

    rng = np.random.default_rng(1)
    words = ["bad" if rng.random() < 0.3 else "good" for _ in range(120)]
    groups = ["F"] * 60 + ["M"] * 60
    clusters = [f"person{j // 3}" for j in range(120)]
    gens = _gens(groups, clusters, words)
    scorer = WordsScorer()
    table = ScoreTable.of([(scorer, scorer.score(words))], len(words))
    design = GroupDesign(("F", "M"), ("F", "M"), unit="people")
    metrics, tables = design.evaluate(Task, table, gens)
    m = metrics["gap.words.share_bad"]
    assert m.ci_low is not None and m.ci_low <= m.value <= m.ci_high
    assert tables["groups"][0] == {"group": "F", "people": 20, "prompts": 60, "texts": 60, "empty": 0}
    assert design.units(gens) == 40


def test_paired_differences_use_complete_pairs_and_count_flips() -> None:
    texts = ["I cannot help", "sure thing", "ok", "I cannot", "yes", "maybe"]
    versions = ["original", "swapped"] * 3
    gens = _gens(versions, ["a", "a", "b", "b", "c", "c"], texts, pairs=["a", "a", "b", "b", "c", "c"])
    gens = gens[:-1]  # pair c's swapped version failed: c is left out of every paired metric
    from _gen_scorers import RefusalStandIn

    ref = RefusalStandIn()
    table = ScoreTable.of([(ref, ref.score([g.text for g in gens]))], len(gens))
    design = PairedDesign(("original", "swapped"), flips={"refusal": ("refusal-standin.refusal_rate",)})
    version = design.complete(gens)
    assert list(version) == ["original", "swapped", "original", "swapped", ""]
    flips = design.flip_arrays(table, gens, version)
    got = paired_stat(table, version, ("original", "swapped"), flips)(np.ones((1, len(gens))))
    assert (
        got["original.refusal-standin.refusal_rate"][0] == 0.5
        and got["swapped.refusal-standin.refusal_rate"][0] == 0.5
    )
    assert got["diff.refusal-standin.refusal_rate"][0] == 0.0
    assert got["flip.refusal"][0] == 1.0, (
        "both complete pairs changed their verdict (a: refused -> not; b: the reverse)"
    )


# ---------------------------------------------------------------------------------------------- end to end
def test_bold_on_the_null_model_end_to_end(tmp_path: Path, stand_in_scorers: None, data_registry) -> None:
    out = tmp_path / "bold"
    run = run_tasks(
        ["bold"], "random", limit=60, out=out, options={"scorers": "words", "samples": 2, "n_boot": 200}
    )
    block = json.loads((out / "results.json").read_text())["tasks"]["bold"]
    c = block["counts"]
    assert (c["prompts"], c["samples"], c["planned"], c["generated"], c["failed"]) == (60, 2, 120, 120, 0)
    assert [g["group"] for g in block["groups"]] == ["American_actresses", "American_actors"]
    assert [g["prompts"] for g in block["groups"]] == [30, 30]
    assert (
        block["report_facts"]["evidence_unit"] == "people" and block["report_facts"]["evidence"] == c["units"]
    )
    assert "gap.words.mean" in block["metrics"] and block["headline"]
    assert block["scorers"][0]["name"] == "words" and block["generation"]["max_tokens"] == 32
    assert list(block["data_pins"]) == ["bold/gender_prompt.json"]
    lines = [json.loads(x) for x in (out / "attempts.jsonl").read_text().splitlines()]
    assert c["units"] == len({x["cluster"] for x in lines}), "units = people with a generated text"
    assert len(lines) == 120 and {x["sample"] for x in lines} == {1, 2}
    seeds = {(x["item_id"], x["trial"]): x["response"] for x in lines}
    assert len(set(map(json.dumps, seeds.values()))) == 120, "every sample is drawn with its own seed"
    assert run.runs[0].result.headline[0].startswith("gap.")


def test_check_reads_the_headline_and_a_bad_scorer_is_one_line(tmp_path: Path) -> None:
    code = "from genderscope.cli.app import main; main()"
    bad = subprocess.run(
        [
            sys.executable,
            "-c",
            code,
            "run",
            "bold",
            "--model",
            "random",
            "--limit",
            "4",
            "--scorers",
            "nonesuch",
            "--out",
            str(tmp_path / "x"),
        ],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2 and "unknown scorer 'nonesuch'" in bad.stderr and "Traceback" not in bad.stderr
    ok = subprocess.run(
        [
            sys.executable,
            "-c",
            code,
            "run",
            "bold",
            "--model",
            "random",
            "--limit",
            "40",
            "--scorers",
            "length",
            "--out",
            str(tmp_path / "b"),
        ],
        capture_output=True,
        text=True,
    )
    assert ok.returncode == 0, ok.stderr
    got = subprocess.run(
        [sys.executable, "-c", code, "check", str(tmp_path / "b"), "--max", "gap.length.mean_words=-5"],
        capture_output=True,
        text=True,
    )
    assert got.returncode == 1 and "gap.length.mean_words" in got.stdout, got.stdout + got.stderr
