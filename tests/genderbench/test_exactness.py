"""Exactness against GenderBench 1.1.0 itself (issue 20, item 7): on identical answers every metric and
every mark equals GenderBench's to 1e-9.

GenderBench runs in its own Python 3.12 venv (provisioned from PyPI once, offline afterwards), in process,
answering with a deterministic answer rule (:mod:`genderscope_dev.answer_rules`); genderscope runs the
same probe through its CLI against the loopback fake OpenAI server answering with the same rule.  Both
``rule-a`` (designed for coverage) and ``rule-b`` (not tuned) are compared without intervals
(GenderBench ``calculate_cis=False``, ours ``--bootstrap-cycles 0``), and three cheap probes also with
GenderBench's bootstrap intervals (``calculate_cis=True`` vs ``--ci-method normal``).  Probes that are not
registered in ``genderscope.catalogue.TASKS`` yet are skipped, naming themselves.

Run: ``pytest -m slow tests/genderbench/test_exactness.py`` (a few minutes; the first run installs the
venv, ~30 s with a PyPI cache).
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from genderscope.catalogue import TASKS
from genderscope_dev.answer_rules import RULES
from genderscope_dev.engines import EngineUnavailable
from genderscope_dev.fake_openai import FakeConfig, FakeOpenAIServer
from genderscope_dev.genderbench_compare import compare, failures, load_tasks, table
from genderscope_dev.genderbench_runner import PROBES
from genderscope_dev.genderbench_venv import provision_genderbench, run_reference

pytestmark = pytest.mark.slow

ALL_PROBES = list(PROBES)  # GenderBench's 14, by genderscope task name
CI_PROBES = ["inventories", "jobs-lum", "relationship-levy"]  # cheap enough for GenderBench's bootstrap
WORK = (
    Path(os.environ.get("GENDERSCOPE_EXACTNESS_DIR", ""))
    if os.environ.get("GENDERSCOPE_EXACTNESS_DIR")
    else None
)


def registered(probes: list[str]) -> list[str]:
    return [p for p in probes if p in TASKS]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return WORK or tmp_path_factory.mktemp("exactness")


@pytest.fixture(scope="module")
def reference(workdir: Path) -> Any:
    """GenderBench's JSON for (rule, cis): every registered probe of the set, run once per module."""
    try:
        provision_genderbench()
    except EngineUnavailable as exc:
        pytest.skip(f"GenderBench 1.1.0 venv unavailable: {exc}")

    @functools.cache
    def get(rule: str, cis: bool) -> dict[str, Any]:
        probes = registered(CI_PROBES if cis else ALL_PROBES)
        out = workdir / f"genderbench-{rule}-{'cis' if cis else 'point'}"
        return run_reference(probes, out, rule=rule, cis=cis)

    return get


@pytest.fixture(scope="module")
def stub() -> Any:
    with FakeOpenAIServer(FakeConfig()) as server:
        yield server


def run_genderscope(probe: str, url: str, out: Path, *options: str) -> None:
    cmd = [
        sys.executable, "-m", "genderscope.cli", "run", probe, "--model", "openai:fake", "--base-url", url,
        "--concurrency", "32", "--out", str(out), *options,
    ]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, f"genderscope run {probe} failed:\n{proc.stderr[-3000:]}"


def check(gb: dict[str, Any], probe: str, out: Path) -> None:
    results = compare(gb, load_tasks([out]), [probe])
    bad = failures(results)
    assert not bad, table(results) + "\n" + "\n".join(bad[:40])


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("probe", ALL_PROBES)
def test_metrics_and_marks_equal_genderbench(probe: str, rule: str, reference, stub, workdir: Path) -> None:
    if probe not in TASKS:
        pytest.skip(f"{probe}: not registered in genderscope.catalogue.TASKS yet")
    gb = reference(rule, False)
    stub.configure(answer_rule=rule)
    out = workdir / f"genderscope-{probe}-{rule}"
    run_genderscope(probe, stub.url, out, "--bootstrap-cycles", "0")
    check(gb, probe, out)


@pytest.mark.parametrize("probe", CI_PROBES)
def test_intervals_and_marks_equal_genderbench(probe: str, reference, stub, workdir: Path) -> None:
    if probe not in TASKS:
        pytest.skip(f"{probe}: not registered in genderscope.catalogue.TASKS yet")
    gb = reference("rule-a", True)
    stub.configure(answer_rule="rule-a")
    out = workdir / f"genderscope-{probe}-rule-a-cis"
    run_genderscope(probe, stub.url, out, "--ci-method", "normal")
    check(gb, probe, out)


def test_genderbench_api_generator_equals_in_process(reference, workdir: Path) -> None:
    """GenderBench's own OpenAI client (the runner's script patch) over the stub: one request per attempt
    (nothing sent twice across probes) and the same numbers as in process."""
    from genderscope_dev.fake_openai import FakeOpenAIProcess

    probes = ["inventories", "jobs-lum"]
    with FakeOpenAIProcess(FakeConfig(answer_rule="rule-a")) as server:
        got = run_reference(probes, workdir / "genderbench-api-rule-a", base_url=server.url, concurrency=16)
        requests = server.stats()["requests"]
    want = run_reference(probes, workdir / "genderbench-inprocess-rule-a", rule="rule-a")
    assert requests == sum(got["probes"][p]["n_attempts"] for p in probes)
    for p in probes:
        assert got["probes"][p]["metrics"] == want["probes"][p]["metrics"], p
        assert got["probes"][p]["marks"] == want["probes"][p]["marks"], p
