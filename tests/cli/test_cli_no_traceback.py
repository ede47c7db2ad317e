"""No traceback reaches a user: every option of every command, given a bad value, ends in exit 0, 1 or 2,
and exit 2 comes with one ``error:`` line (hypothesis drives ``genderscope.cli.main`` in-process).

The options are read from the command tree and the option dataclasses (``cli_fuzz.all_targets``); each
command has a valid base command line below, and a new command fails :func:`test_every_command_has_a_base`
until it gets one.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cli_fuzz
from report_runs import gest_run

#: a valid command line per command (after its name); "@" marks the positional value(s)
BASES: dict[tuple[str, ...], tuple[str, ...]] = {
    ("run",): ("@{task}", "--model", "random", "--limit", "2", "--out", "{new}", "--no-progress"),
    ("reparse",): ("@{dir}", "--out", "{new}"),
    ("tasks",): (),
    ("report",): ("@{dir}", "--out", "{new}.html"),
    ("compare",): ("@{dir}",),
    ("export",): ("@{dir}", "--out", "{new}"),
    ("check",): ("@{dir}",),
    ("demo",): ("--out", "{new}"),
    ("data", "list"): ("@gest",),
    ("data", "fetch"): ("@gest/gest.csv",),
    ("data", "verify"): (),
    ("data", "mirror"): ("@{mirror}",),
    ("cache", "info"): (),
    ("cache", "clear"): ("--yes",),
    ("batch", "write"): ("@gest", "--model", "openai:m", "--out", "{new}.jsonl", "--limit", "2"),
    ("batch", "read"): ("@{batch_output}", "--model", "openai:m"),
    ("bordia", "score"): ("@{corpus}", "--pairs", "penn", "--bootstrap", "0", "--out", "{new}"),
    ("bordia", "sweep"): (
        "--train",
        "{corpus}",
        "--valid",
        "{corpus}",
        "--pairs",
        "penn",
        "--bootstrap",
        "0",
        "--out",
        "{new}",
    ),
    ("bordia", "train"): ("--train", "{corpus}", "--valid", "{corpus}", "--out", "{new}"),
    ("bordia", "eval"): ("@{lm_run}",),
    ("bordia", "generate"): ("@{lm_run}", "--out", "{new}"),
    ("bordia", "audit"): ("@{corpus}", "--pairs", "penn", "--out", "{new}"),
    ("debias",): ("@cda", "--model", "hf-causal:{empty_dir}", "--corpus", "{corpus}", "--out", "{new}"),
    ("judge",): ("@{gen_run}", "--model", "random", "--out", "{new}", "--no-progress"),
}


@pytest.fixture(scope="module")
def fixtures(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("fuzz-fixtures")
    a_file = root / "a-file.txt"
    a_file.write_text("not a folder\n")
    empty = root / "empty"
    empty.mkdir()
    corpus = root / "corpus.txt"
    corpus.write_text("the doctor said he met her and the nurse saw his wife at the clinic .\n" * 20)
    batch = root / "batch-output.jsonl"
    batch.write_text(json.dumps({"custom_id": "x", "response": {"status_code": 200, "body": {}}}) + "\n")
    lm_run = root / "lm-run"
    lm_run.mkdir()
    mirror = root / "mirror"  # a folder `data mirror` accepts: it holds a MANIFEST.tsv
    mirror.mkdir()
    (mirror / "MANIFEST.tsv").write_text("path\tsha256\tbytes\n")
    return {
        "file": a_file,
        "empty_dir": empty,
        "corpus": corpus,
        "batch_output": batch,
        "lm_run": lm_run,
        "mirror": mirror,
        "run": gest_run(root / "run", limit=3),
        "gen_run": _bold_run(root / "bold"),
    }


def _bold_run(out: Path) -> Path:
    """A tiny bold run on the null model (the folder `genderscope judge` reads)."""
    from genderscope.core.engine import run_tasks

    options = {"scorers": "length", "n_boot": "0"}
    run_tasks(["bold"], "random", limit=4, out=out, progress=False, options=options)
    return out


@pytest.fixture
def places(fixtures: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    monkeypatch.chdir(tmp_path)  # default output folders (runs/...) land here
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("COLUMNS", "100")
    cli_fuzz.stub_heavy_steps(monkeypatch)
    made = cli_fuzz.tmp_places(tmp_path, fixtures)
    made["task"] = lambda: "gest"
    return made


def test_every_command_has_a_base() -> None:
    assert set(cli_fuzz.command_tree()) <= set(BASES), set(cli_fuzz.command_tree()) - set(BASES)


TARGETS = cli_fuzz.all_targets(BASES)
BY_COMMAND = {c: [t for t in TARGETS if t.command == c] for c in dict.fromkeys(t.command for t in TARGETS)}
#: a command first, then one of its options: each command gets its share of examples (run has most options)
OPTIONS = st.sampled_from(sorted(BY_COMMAND)).flatmap(lambda c: st.sampled_from(BY_COMMAND[c]))
VALUES = st.one_of(st.sampled_from(cli_fuzz.BAD_VALUES), st.text(max_size=12))


def _check(target: cli_fuzz.Target, value: str, places: dict) -> None:
    argv = cli_fuzz.fill(target.argv(value), places)
    outcome = cli_fuzz.invoke(argv)
    assert outcome.problem() is None, (outcome.problem(), argv, outcome.stderr[-2000:])


def test_every_base_command_line_is_valid(places: dict) -> None:
    """The base command lines run (else the fuzz would only ever see their own error)."""
    for path, base in BASES.items():
        argv = cli_fuzz.fill([*path, *[a.lstrip("@") for a in base]], places)
        outcome = cli_fuzz.invoke(argv)
        if outcome.code == 2 and "needs the optional package" in outcome.stderr:
            continue  # the core install (no [hf] extra): the command says which extra it needs
        assert outcome.code in (0, 1, 3) and outcome.problem() is None, (argv, outcome)


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck), derandomize=False)
@given(target=OPTIONS, value=VALUES)
def test_no_option_value_gives_a_traceback(target: cli_fuzz.Target, value: str, places: dict) -> None:
    _check(target, value, places)
