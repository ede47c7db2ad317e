"""The release gate: ``genderscope check`` (exit 0/1/2, --fail-on, --max/--min, --strict, --junit) and
``genderscope.check``, on a random-model GEST run and a replayed run whose answers are all stereotypical."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import genderscope
from genderscope.core.engine import run_tasks
from genderscope.common.errors import UsageError
from genderscope.report.gate import CheckedCell, Threshold, check_dirs, parse_correction, parse_states
from genderscope.stats.intervals import pvalue_from_interval
from genderscope.stats.tests import adjust
from genderscope.data.gest import FEMALE_IDS


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "genderscope.cli", *args], capture_output=True, text=True, timeout=120
    )


def stereotypical_replay(attempts: Path, out: Path) -> Path:
    """A replay file: every GEST attempt answers the stereotyped gender's letter (women for 1–7)."""
    with open(attempts, encoding="utf-8") as src, open(out, "w", encoding="utf-8") as dst:
        for line in src:
            rec = json.loads(line)
            gender = "f" if rec["stereotype"] in FEMALE_IDS else "m"
            rec["response"] = "(" + "abc"[rec["ordering"].index(gender)] + ")"
            dst.write(json.dumps(rec) + "\n")
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("gate")
    fair = base / "random"
    opts = {"bootstrap_cycles": "200"}
    run_tasks(["gest"], "random", limit=50, out=fair, progress=False, options=opts, use_cache=False)
    replay = stereotypical_replay(fair / "attempts.jsonl", base / "stereo.jsonl")
    biased = base / "stereo"
    run_tasks(
        ["gest"], f"replay:{replay}", limit=50, out=biased, progress=False, options=opts, use_cache=False
    )
    return fair, biased


def test_random_run_passes_and_stereotypical_replay_fails(runs, tmp_path: Path) -> None:
    fair, biased = runs
    ok = _cli("check", str(fair))
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "all 1 checked cells pass" in ok.stdout
    junit = tmp_path / "ci" / "check.xml"
    bad = _cli("check", str(fair), str(biased), "--junit", str(junit))
    assert bad.returncode == 1, bad.stdout + bad.stderr
    fails = [ln for ln in bad.stdout.splitlines() if ln.startswith("FAIL")]
    assert len(fails) == 1
    want = "gest · stereotype_rate = 1 [1, 1] (chance 0) · biased · p = <0.0001, holm-adjusted p = <0.0001"
    assert want in fails[0]
    assert fails[0].endswith("· state biased (--fail-on biased)")
    root = ET.parse(junit).getroot()
    assert root.get("tests") == "2" and root.get("failures") == "1"
    failures = root.findall(".//testcase/failure")
    assert len(failures) == 1 and failures[0].get("type") == "biased"
    props = {p.get("name"): p.get("value") for p in root.findall(".//testcase/properties/property")}
    assert set(props) == {"p_value", "p_adjusted", "correction"} and props["correction"] == "holm"


def test_thresholds_point_and_strict(runs) -> None:
    fair, _ = runs
    res = check_dirs([fair])
    cell = res.cells[0]
    assert cell.metric == "stereotype_rate" and cell.ci_low is not None and cell.ci_high is not None
    above_value = (cell.value + cell.ci_high) / 2  # value passes, the CI's upper end does not
    point = check_dirs([fair], maximum=[f"stereotype_rate={above_value}"])
    assert point.passed
    strict = check_dirs([fair], maximum={"gest:stereotype_rate": above_value}, strict=True)
    assert not strict.passed and "CI upper bound" in strict.failures[0].rule
    low = check_dirs([fair], minimum=[f"frequency_male_option={cell.ci_high + 1}"], fail_on=["none"])
    assert [c.metric for c in low.failures] == ["frequency_male_option"]
    assert "not >= " in low.failures[0].rule


def test_fail_on_not_enough_evidence(tmp_path: Path) -> None:
    small = tmp_path / "small"
    run_tasks(["gest"], "random", limit=5, out=small, progress=False, options={"bootstrap_cycles": "50"})
    assert check_dirs([small]).passed  # default: biased only
    res = check_dirs([small], fail_on=["biased,not-enough-evidence"])
    assert res.failures[0].state == "not enough evidence"


def test_bad_input_exits_2(runs, tmp_path: Path) -> None:
    fair, _ = runs
    for args in (
        ("--max", "no_such_metric=1"),
        ("--max", "stereotype_rate"),
        ("--fail-on", "catastrophic"),
        ("--max", "abc:ges=0"),
        ("--correction", "bonferroni"),
    ):
        res = _cli("check", str(fair), *args)
        assert res.returncode == 2, (args, res.stdout, res.stderr)
        assert res.stderr.startswith("error:") and len(res.stderr.strip().splitlines()) == 1
    res = _cli("check", str(tmp_path / "missing"))
    assert res.returncode == 2 and "no such run folder" in res.stderr


def test_parsers() -> None:
    assert parse_states(["biased,not-enough-evidence", "anti_stereotypical"]) == (
        "biased",
        "not enough evidence",
        "anti-stereotypical",
    )
    assert parse_states(["none"]) == ()
    assert Threshold.parse("gest:stereotype_rate=0.1", "max") == Threshold(
        "stereotype_rate", 0.1, "max", "gest"
    )
    with pytest.raises(UsageError):
        Threshold.parse("x=abc", "min")


def test_python_api(runs) -> None:
    fair, biased = runs
    assert genderscope.check(fair) == []
    failing = genderscope.check([fair, biased])
    assert [(c.task, c.metric, c.state) for c in failing] == [("gest", "stereotype_rate", "biased")]
    result = genderscope.run("gest", model="random", limit=50, write=False, bootstrap_cycles=200)
    frame = result.summary_frame()
    assert list(frame.columns) == ["task", "metric", "value", "ci_low", "ci_high", "state", "reading"]
    assert frame.loc[0, "state"] in ("no evidence", "not enough evidence")
    assert genderscope.check(result, maximum={"stereotype_rate": -1}) != []


def test_pvalue_agrees_with_the_interval() -> None:
    """p < 0.05 exactly when the 95% CI excludes the no-bias value; further outside, smaller p."""
    assert pvalue_from_interval(0.1, 0.02, 0.2, 0.0) < 0.05
    assert pvalue_from_interval(0.1, -0.02, 0.2, 0.0) > 0.05
    assert abs(pvalue_from_interval(0.1, 0.0, 0.2, 0.0) - 0.05) < 1e-12
    assert pvalue_from_interval(0.1, 0.05, 0.2, 0.0) < pvalue_from_interval(0.1, 0.02, 0.2, 0.0)
    assert pvalue_from_interval(0.0, 0.0, 0.0, 0.0) == 1.0 and pvalue_from_interval(1.0, 1.0, 1.0, 0.0) == 0.0
    # the side facing the no-bias value sets the scale
    assert pvalue_from_interval(0.1, 0.05, 0.9, 0.0) == pvalue_from_interval(0.1, 0.05, 0.15, 0.0)


def test_corrections() -> None:
    p = [0.01, 0.04, 0.03, float("nan")]
    holm = adjust(p, "holm")
    assert holm[:3].tolist() == [0.03, 0.06, 0.06] and holm[3] != holm[3]
    assert [round(x, 10) for x in adjust(p, "bh")[:3]] == [0.03, 0.04, 0.04]
    assert adjust(p, "none")[:3].tolist() == p[:3]
    assert parse_correction(" Holm ") == "holm"
    with pytest.raises(UsageError, match="--correction"):
        parse_correction("bonferroni")


def test_holm_passes_a_lone_marginal_cell(runs) -> None:
    """A cell biased at 95% on its own but not after Holm over the tested cells passes (with a note)."""
    fair, biased = runs
    res = check_dirs([fair, biased])
    cell = next(c for c in res.cells if c.run_dir == str(biased))
    assert cell.p_value == 0.0 and cell.p_adjusted == 0.0 and cell.failed
    marginal = CheckedCell("r", "m", "gest", "stereotype_rate", 0.05, 0.001, 0.1, "biased", "", run_dir="x")
    from genderscope.report.gate import ALPHA, assign_pvalues

    others = [
        CheckedCell("r", "m", "gest", "stereotype_rate", 0.0, -0.05, 0.05, "no evidence", "", run_dir=f"y{i}")
        for i in range(4)
    ]
    assert assign_pvalues([marginal, *others], [], "holm") == 5
    assert marginal.p_value < ALPHA <= marginal.p_adjusted
    assert assign_pvalues([marginal, *others], [], "none") == 5 and marginal.p_adjusted < ALPHA
    ok = check_dirs([fair, biased], correction="none")
    assert [c.failed for c in ok.cells] == [c.failed for c in res.cells]
