"""The run spec: built once, stored in run.json, ``run --spec`` repeats the run exactly."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from genderscope.common.errors import UsageError
from genderscope.core.seeds import DEFAULT_SEED, derive_seeds
from genderscope.core.runspec import RunSpec, load_spec


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, tmp_path: Path) -> Any:
    """``cli(*args)`` runs ``genderscope ARGS`` in this process (in ``tmp_path``): (exit code, stderr)."""
    from genderscope.cli.app import main

    monkeypatch.chdir(tmp_path)

    def call(*args: str) -> tuple[int, str]:
        monkeypatch.setattr(sys, "argv", ["genderscope", *args])
        try:
            main()
            code = 0
        except SystemExit as exc:
            code = int(exc.code or 0)
        return code, capsys.readouterr().err

    return call


def _metrics(run: Path) -> dict:
    return {t: b["metrics"] for t, b in json.loads((run / "results.json").read_text())["tasks"].items()}


def test_run_spec_repeats_a_run_exactly(tmp_path: Path, cli: Any) -> None:
    code, err = cli(
        "run", "gest", "dawinobias", "--limit", "6", "--seed", "7", "--parser", "robust", "--null-seed", "3",
        "--out", "a", "--no-progress",
    )
    assert code == 0, err
    spec = json.loads((tmp_path / "a" / "run.json").read_text())["spec"]
    assert spec["seed"] == 7 and spec["task_options"]["gest"]["parser"] == "robust"
    assert spec["backend_options"]["null_seed"] == 3
    code, err = cli("run", "--spec", "a/run.json", "--out", "b", "--no-progress")
    assert code == 0, err
    attempts = [(tmp_path / d / "attempts.jsonl").read_bytes() for d in ("a", "b")]
    assert attempts[0] == attempts[1]
    assert _metrics(tmp_path / "a") == _metrics(tmp_path / "b")
    assert json.loads((tmp_path / "b" / "run.json").read_text())["spec"] == spec
    # a different seed gives other attempts: the spec's seed was used, not the default
    code, err = cli(
        "run", "gest", "dawinobias", "--limit", "6", "--parser", "robust", "--null-seed", "3", "--out", "c",
        "--no-progress",
    )
    assert code == 0, err
    assert (tmp_path / "c" / "attempts.jsonl").read_bytes() != attempts[0]


def test_api_repeats_a_run(tmp_path: Path) -> None:
    import genderscope.api as api

    first = api.run("gest", limit=4, seed=11, out=tmp_path / "a")
    again = api.run_spec(tmp_path / "a" / "run.json", write=False)
    assert again.attempts == first.attempts
    assert again.metrics_dict() == first.metrics_dict()


@pytest.mark.parametrize(
    ("edit", "needle"),
    [
        ({"colour": 1}, "unknown field 'colour'"),
        ({"limit": "five"}, "field 'limit' must be a whole number or null"),
        ({"seed": -1}, "--seed"),
        ({"tasks": []}, "field 'tasks' must be a non-empty list"),
        ({"task_options": {"gest": {"parser": "nope"}}}, "--parser"),
        ({"task_options": {"gest": {"nope": 1}}}, "task 'gest' has no option --nope"),
        ({"task_options": {"abc": {}}}, "field 'task_options' names task 'abc'"),
        ({"backend_options": {"null_seed": "x"}}, "--null-seed"),
    ],
)
def test_a_bad_spec_field_is_one_line(tmp_path: Path, edit: dict, needle: str) -> None:
    spec = RunSpec.build(["gest"], "random", limit=2).to_json()
    (tmp_path / "spec.json").write_text(json.dumps({**spec, **edit}))
    with pytest.raises(UsageError, match="spec.json") as exc:
        load_spec(tmp_path / "spec.json")
    assert needle in str(exc.value) and "\n" not in str(exc.value)


def test_cli_bad_spec_exits_2_with_one_line(tmp_path: Path, cli: Any) -> None:
    spec = {**RunSpec.build(["gest"], "random", limit=2).to_json(), "colour": 1}
    (tmp_path / "run.json").write_text(json.dumps({"spec": spec}))
    code, err = cli("run", "--spec", "run.json")
    assert code == 2 and "unknown field 'colour'" in err and len(err.strip().splitlines()) == 1
    code, err = cli("run", "gest", "--spec", "run.json")
    assert code == 2 and "drop TASK" in err and len(err.strip().splitlines()) == 1
    code, err = cli("run", "--spec", "run.json", "--seed", "4")
    assert code == 2 and "drop --seed" in err


def test_a_run_json_without_spec_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "run.json").write_text(json.dumps({"schema_version": 2, "tasks": {"gest": {}}}))
    with pytest.raises(UsageError, match="records no run spec"):
        load_spec(tmp_path)


def test_spec_is_frozen_and_typed() -> None:
    spec = RunSpec.build("gest", "random", options={"bootstrap-cycles": "50"}, limit=3)
    assert spec.task_options["gest"]["bootstrap_cycles"] == 50
    with pytest.raises(AttributeError):
        spec.limit = 4  # type: ignore[misc]
    with pytest.raises(TypeError):
        spec.task_options["gest"]["bootstrap_cycles"] = 1  # type: ignore[index]
    with pytest.raises(UsageError, match="--bootstrap-cycles"):
        RunSpec.build("gest", "random", options={"bootstrap-cycles": "many"})


def test_seed_derivation() -> None:
    s = derive_seeds(DEFAULT_SEED)
    assert (s.items, s.order, s.generation, s.bootstrap) == (123, 123, 123, 123)
    assert RunSpec(("gest",), seed=5).seeds == derive_seeds(5)


_json_scalar = st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=8) | st.floats(
    allow_nan=False, allow_infinity=False
)
_json_value = st.recursive(
    _json_scalar,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
_names = st.text(st.characters(min_codepoint=97, max_codepoint=122), min_size=1, max_size=10)


@settings(max_examples=100, deadline=None)
@given(
    tasks=st.lists(_names, min_size=1, max_size=4),
    model=_names,
    trials=st.none() | st.integers(1, 10_000),
    limit=st.none() | st.integers(1, 10**6),
    seed=st.integers(0, 2**63 - 1),
    temperature=st.none() | st.floats(0, 5, allow_nan=False),
    max_tokens=st.none() | st.integers(1, 10**5),
    use_cache=st.booleans(),
    label=st.none() | st.text(max_size=10),
    task_options=st.dictionaries(_names, st.dictionaries(_names, _json_value, max_size=4), max_size=3),
    backend_options=st.dictionaries(_names, _json_value, max_size=4),
)
def test_spec_round_trips_through_json(**fields: object) -> None:
    spec = RunSpec(**fields)  # type: ignore[arg-type]
    text = json.dumps(spec.to_json())
    back = RunSpec.from_json(json.loads(text))
    assert back == spec
    assert json.dumps(back.to_json()) == text


def test_tasks_read_the_run_seed_through_its_parts() -> None:
    """Every use of the run seed in a task goes through ``ctx.seeds`` (derive_seeds); only the records
    that state the run seed (``"seed": self.ctx.seed``) read it whole."""
    import re

    import genderscope.tasks

    root = Path(genderscope.tasks.__file__).parent
    bare = re.compile(r"ctx\.seed\b(?!s)")
    stated = re.compile(r"""["'](random_)?seed["']: self\.ctx\.seed,""")
    offenders = [
        f"{path.relative_to(root)}:{n}"
        for path in root.rglob("*.py")
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if bare.search(line) and not stated.search(line)
    ]
    assert offenders == []


def test_seed_help_says_what_it_drives() -> None:
    from genderscope.core.seeds import SEED_HELP

    assert "sampling and bootstrap" not in SEED_HELP and "random model" in SEED_HELP
