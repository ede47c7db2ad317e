"""The task x model-kind matrix: derived from declarations, printed by the CLI, mirrored in docs/usage.md,
and a clear early error for combinations that make no sense."""

from __future__ import annotations

from repo_paths import ROOT
import os
import re
import subprocess
import sys

import pytest

from genderscope.core.engine import run_tasks
from genderscope.common.errors import UsageError
from genderscope.core.matrix import matrix_markdown, matrix_rows, require_kinds, working_model_kinds



def _cells(task: str) -> dict:
    return next(r["cells"] for r in matrix_rows() if r["task"] == task)


def test_cells_follow_declarations() -> None:
    gl = _cells("gest-likelihood")
    assert gl["openai"] is None and "log10" in gl["hf-mlm"] and "log10" in gl["hf-causal"]
    assert gl["random"] == "null model" and gl["replay"] == "recorded answers"
    gest = _cells("gest")
    assert gest["hf-mlm"] is None and gest["openai"] and gest["hf-causal"]  # local chat generation
    wl = _cells("winobias-lm")
    assert wl["openai"] is None and wl["hf-mlm"] and wl["hf-causal"]


@pytest.mark.parametrize("width", [80, 200])
def test_cli_prints_matrix_whole_at_any_width(width: int) -> None:
    from genderscope import catalogue as registry

    env = {**os.environ, "COLUMNS": str(width)}
    res = subprocess.run(
        [sys.executable, "-m", "genderscope.cli", "tasks", "--matrix"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert max(len(ln) for ln in lines) <= width
    assert "…" not in res.stdout  # nothing cut
    for name in [*registry.TASKS, *registry.BACKENDS]:
        assert re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", res.stdout), name
    for row in matrix_rows():  # every measurement text is there, word for word
        for text in filter(None, row["cells"].values()):
            assert all(w in res.stdout for w in text.split())
    kinds_as_columns = re.search(r"┃ openai-completions +┃", res.stdout) is not None
    assert kinds_as_columns == (width == 200)


def test_usage_doc_has_the_current_table() -> None:
    usage = (ROOT / "docs" / "usage.md").read_text()
    assert "## Which task runs on which model" in usage
    missing = [ln for ln in matrix_markdown().splitlines() if ln not in usage]
    assert not missing, f"docs/usage.md table out of date (run python -m genderscope.core.matrix): {missing}"


@pytest.mark.parametrize(
    "task,model,works",
    [
        ("abc", "openai:gpt-4o-mini", "random, replay, openai-completions, hf-mlm, hf-causal"),
        ("gest-likelihood", "openai:gpt-4o-mini", "random, replay, openai-completions, hf-mlm, hf-causal"),
        ("winobias-lm", "openai:gpt-4o-mini", "random, replay, openai-completions, hf-mlm, hf-causal"),
        ("dawinobias", "openai:gpt-4o-mini", "random, replay, openai-completions, hf-mlm, hf-causal"),
    ],
)
def test_nonsense_combination_fails_before_the_model_loads(tmp_path, task, model, works) -> None:
    with pytest.raises(UsageError) as exc:  # no server runs: the check happens before the backend exists
        run_tasks([task], model, out=tmp_path / "o", progress=False)
    msg = str(exc.value)
    assert "cannot run on openai" in msg and f"model kinds that work: {works}" in msg


def test_chat_task_on_masked_lm_fails_early(tmp_path) -> None:
    with pytest.raises(UsageError, match="gest"):
        run_tasks(
            ["gest"], f"hf-mlm:{tmp_path}", out=tmp_path / "o", progress=False
        )  # dir need not be a model


def test_require_kinds_returns_first_declared_kind() -> None:
    from genderscope.core.task import RunContext
    from genderscope.tasks.gest_likelihood.task import GestLikelihoodOptions, GestLikelihoodTask

    t = GestLikelihoodTask(
        GestLikelihoodOptions(),
        RunContext(
            request_kinds=frozenset({"token_logprobs", "tokenize", "masked_logprobs"}), model_kind="x"
        ),
    )
    assert require_kinds(t) == "masked"
    assert working_model_kinds(GestLikelihoodTask) == [
        "random",
        "replay",
        "openai-completions",
        "hf-mlm",
        "hf-causal",
        "self-debias",
    ]


@pytest.mark.parametrize("task", ["gest", "winobias-adjectives"])
def test_chat_tasks_name_every_chat_model_kind_from_the_registry(tmp_path, task) -> None:
    """The message is derived from the backends' request kinds, so a new chat backend shows up in it."""
    with pytest.raises(UsageError) as exc:
        run_tasks([task], f"hf-mlm:{tmp_path}", out=tmp_path / "o", progress=False)
    works = str(exc.value).split("model kinds that work: ")[1]
    for kind in ("random", "replay", "openai", "openai-completions", "hf-causal"):
        assert kind in works
    assert "hf-mlm" not in works


def test_auto_resolution_lives_on_the_task_base_class() -> None:
    """``auto`` and option groups resolve from ``measurements`` in order; an option value admitting one
    measurement is kept even when the model cannot make it (check_model then says why)."""
    from genderscope.core.task import RunContext
    from genderscope.tasks.abc.task import ABCOptions, ABCTask
    from genderscope.tasks.dawinobias.task import DaWinoBiasOptions, DaWinoBiasTask

    mlm = RunContext(
        request_kinds=frozenset({"fill_mask", "masked_logprobs", "tokenize"}), model_kind="hf-mlm"
    )
    causal = RunContext(
        request_kinds=frozenset({"token_logprobs", "tokenize", "chat"}), model_kind="hf-causal"
    )
    assert DaWinoBiasTask(DaWinoBiasOptions(), mlm).options.scoring == "top1"
    assert DaWinoBiasTask(DaWinoBiasOptions(), causal).options.scoring == "loglik"
    assert DaWinoBiasTask(DaWinoBiasOptions(scoring="candidates"), mlm).options.scoring == "pll"
    assert ABCTask(ABCOptions(), mlm).options.scoring == "pll"
    assert ABCTask(ABCOptions(), causal).options.scoring == "loglik"
    compat = ABCTask(ABCOptions(mode="genda-lens"), causal)
    assert compat.options.scoring == "cross-entropy"
    with pytest.raises(UsageError, match="needs a masked LM"):
        compat.check_model()


def test_long_table_puts_not_meaningful_kinds_in_the_model_kind_column() -> None:
    """Issue 27: the narrow layout's "not meaningful" row had the verdict under "model kind" and the kinds
    under "how it measures"; each task's rows now name every model kind in the model-kind column."""
    from rich.text import Text

    from genderscope.core.matrix import backend_request_kinds, matrix_table

    table = matrix_table(width=60)
    assert [c.header for c in table.columns] == ["task", "model kind", "how it measures"]
    kinds = set(backend_request_kinds())

    def plain(cell: object) -> str:
        return Text.from_markup(cell).plain if isinstance(cell, str) else str(cell)

    tasks, kind_cells, how_cells = (list(map(plain, c._cells)) for c in table.columns)
    for i, how in enumerate(how_cells):
        assert not set(how.replace(",", " ").split()) & kinds - {"random", "replay"}, (tasks[i], how)
        assert set(kind_cells[i].splitlines()) <= kinds, (tasks[i], kind_cells[i])
    per_task: dict[str, set[str]] = {}
    current = ""
    for task, kind in zip(tasks, kind_cells):
        current = task or current
        per_task.setdefault(current, set()).update(kind.splitlines())
    assert all(found == kinds for found in per_task.values()), per_task
    verdicts = [i for i, how in enumerate(how_cells) if "not meaningful" in how]
    assert verdicts and all(kind_cells[i] for i in verdicts)
