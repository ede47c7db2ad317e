"""The data mirror a newcomer meets: `data mirror PATH` refuses a folder that is not a mirror, shows the
saved path, a fresh checkout beside ../shared/data finds it itself (saying so once), the demo keeps the
mirror `make` gave it, and messages shorten only dataset files in the mirror, no other path under it."""

from __future__ import annotations

from repo_paths import ROOT
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from genderscope.cli.app import app
from genderscope.common import config
from genderscope.common.errors import UsageError
from genderscope.core.paths import scrub_paths

MIRROR = ROOT.parent / "shared" / "data"
needs_mirror = pytest.mark.skipif(
    not (MIRROR / "MANIFEST.tsv").is_file(), reason="dataset mirror ../shared/data not present"
)


@pytest.fixture
def no_env_mirror(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(config.MIRROR_ENV, raising=False)
    monkeypatch.setattr(config, "mirror_beside_checkout", lambda: None)


def test_mirror_without_manifest_is_refused_in_one_line(tmp_path: Path, no_env_mirror: None) -> None:
    res = CliRunner().invoke(app, ["data", "mirror", str(tmp_path)])
    assert isinstance(res.exception, UsageError)  # main() prints it as one line, exit 2 (next test)
    assert "not a dataset mirror" in str(res.exception) and "MANIFEST.tsv" in str(res.exception)
    assert config.read_config() == {}


def test_cli_refusal_is_exit_2_and_one_line(tmp_path: Path) -> None:
    env = {**os.environ, "GENDERSCOPE_HOME": str(tmp_path / "home"), "PYTHONPATH": str(ROOT / "src")}
    res = subprocess.run(
        [sys.executable, "-m", "genderscope.cli", "data", "mirror", str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 2, res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.stderr


def test_saved_mirror_is_shown_as_its_path(tmp_path: Path, no_env_mirror: None) -> None:
    mirror = tmp_path / "somewhere" / "data"
    mirror.mkdir(parents=True)
    (mirror / "MANIFEST.tsv").write_text("path\tsha256\n")
    res = CliRunner().invoke(app, ["data", "mirror", str(mirror)])
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(app, ["data", "mirror"])
    assert res.exit_code == 0
    assert "(data mirror)" not in res.output
    assert f"mirror: {mirror}" in " ".join(res.output.split()), res.output


def test_only_dataset_files_in_the_mirror_are_shortened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(config.MIRROR_ENV, str(tmp_path))
    monkeypatch.chdir("/")
    report = f"report in {tmp_path}/runs/first/report.html"
    assert scrub_paths(report) == report
    assert scrub_paths(f"{tmp_path}/gest/gest.csv") == "(data mirror)/gest/gest.csv"
    assert scrub_paths(f"mirror: {tmp_path}") == f"mirror: {tmp_path}"
    assert scrub_paths(f"{tmp_path}/gestures/x") == f"{tmp_path}/gestures/x"


@needs_mirror
def test_fresh_checkout_finds_the_mirror_beside_it_and_says_so_once(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != config.MIRROR_ENV}
    env.update(GENDERSCOPE_HOME=str(tmp_path / "home"), GENDERSCOPE_OFFLINE="1", PYTHONPATH=str(ROOT / "src"))
    cli = [sys.executable, "-m", "genderscope.cli", "run", "gest", "--limit", "5", "--no-progress"]
    first = subprocess.run(
        [*cli, "--out", str(tmp_path / "a")], env=env, capture_output=True, text=True, timeout=300
    )
    assert first.returncode == 0, first.stderr
    assert first.stderr.count("found beside this checkout") == 1
    assert config.read_config(tmp_path / "home" / "config.toml") == {"data_mirror": str(MIRROR.resolve())}
    again = subprocess.run(
        [*cli, "--out", str(tmp_path / "b")], env=env, capture_output=True, text=True, timeout=300
    )
    assert again.returncode == 0 and "found beside" not in again.stderr


def test_beside_checkout_needs_a_manifest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    found = config.mirror_beside_checkout()
    expected = ROOT.parent / "shared" / "data"
    assert found == (expected if (expected / "MANIFEST.tsv").is_file() else None)


def test_demo_keeps_the_mirror_make_gave_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mirror = tmp_path / "data"
    mirror.mkdir()
    monkeypatch.setenv(config.MIRROR_ENV, str(mirror))
    assert config.keep_environment_mirror() is None  # no MANIFEST.tsv: not a mirror, nothing saved
    (mirror / "MANIFEST.tsv").write_text("path\n")
    assert config.keep_environment_mirror() == mirror.resolve()
    assert config.read_config() == {"data_mirror": str(mirror.resolve())}
    assert config.keep_environment_mirror() is None  # a saved setting is never replaced
