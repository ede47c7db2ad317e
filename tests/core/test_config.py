"""The user config file and the data-mirror lookup: environment, then `genderscope data mirror PATH`, then
$GENDERSCOPE_HOME/mirror; `data verify` fails when files are missing; a plain shell finds the mirror."""

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
from genderscope.data.registry import DataRegistry

MIRROR = ROOT.parent / "shared" / "data"


@pytest.fixture
def no_env_mirror(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(config.MIRROR_ENV, raising=False)
    monkeypatch.setattr(config, "mirror_beside_checkout", lambda: None)  # not the checkout's ../shared/data


def test_settings_round_trip_and_keep_other_keys(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    config.write_setting("data_mirror", 'C:\\data "mirror"', path)
    config.write_setting("other", "x", path)
    assert config.read_config(path) == {"data_mirror": 'C:\\data "mirror"', "other": "x"}
    config.write_setting("other", None, path)
    assert config.read_config(path) == {"data_mirror": 'C:\\data "mirror"'}


def test_malformed_config_is_one_line_error(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("# comment\n\ndata_mirror = /no/quotes\n")
    with pytest.raises(UsageError, match=r"config.toml:3: expected key = \"value\""):
        config.read_config(path)


def test_lookup_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_env_mirror: None) -> None:
    assert config.mirror_setting() == config.MirrorSetting(None, "none")
    default = config.home() / "mirror"
    default.mkdir()
    assert config.mirror_setting() == config.MirrorSetting(default, "default")
    saved = tmp_path / "saved"
    saved.mkdir()
    (saved / "MANIFEST.tsv").write_text("path\n")
    config.save_mirror(saved)
    assert config.mirror_setting() == config.MirrorSetting(saved.resolve(), "config")
    monkeypatch.setenv(config.MIRROR_ENV, str(tmp_path / "env"))
    assert config.mirror_setting() == config.MirrorSetting(tmp_path / "env", "environment")
    monkeypatch.setenv(config.MIRROR_ENV, "")  # set but empty: no mirror, the saved one is not used
    assert config.data_mirror() is None
    with pytest.raises(UsageError, match="no such folder"):
        config.save_mirror(tmp_path / "absent")


def test_data_mirror_command_saves_and_registry_uses_it(no_env_mirror: None) -> None:
    if not (MIRROR / "MANIFEST.tsv").is_file():
        pytest.skip("dataset mirror ../shared/data not present")
    runner = CliRunner()
    res = runner.invoke(app, ["data", "mirror"])
    assert res.exit_code == 0 and "none set" in res.output
    res = runner.invoke(app, ["data", "verify"])
    assert res.exit_code == 1 and "missing" in res.output
    res = runner.invoke(app, ["data", "mirror", str(MIRROR)])
    assert res.exit_code == 0, res.output
    assert "saved setting" in res.output and str(MIRROR.resolve()) in res.output
    assert config.read_config() == {"data_mirror": str(MIRROR.resolve())}
    assert DataRegistry().mirror == MIRROR.resolve()
    res = runner.invoke(app, ["data", "verify"])
    assert res.exit_code == 0 and "all" in res.output and "missing" not in res.output
    res = runner.invoke(app, ["data", "mirror", "--unset"])
    assert res.exit_code == 0 and config.read_config() == {}


def test_verify_fails_on_a_corrupted_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mirror = tmp_path / "mirror"
    (mirror / "gest").mkdir(parents=True)
    (mirror / "gest" / "gest.csv").write_text("not the real file")
    monkeypatch.setenv(config.MIRROR_ENV, str(mirror))
    res = CliRunner().invoke(app, ["data", "verify"])
    assert res.exit_code == 2 and "corrupt" in res.output


def test_plain_shell_run_finds_the_saved_mirror(tmp_path: Path) -> None:
    """A subprocess with no GENDERSCOPE_DATA_MIRROR: the mirror comes from the saved setting (an empty
    variable in the first run: no mirror at all, so the run fails naming the fix)."""
    if not (MIRROR / "MANIFEST.tsv").is_file():
        pytest.skip("dataset mirror ../shared/data not present")
    env = {k: v for k, v in os.environ.items() if k != config.MIRROR_ENV}
    env["GENDERSCOPE_HOME"] = str(tmp_path / "home")
    cli = [sys.executable, "-m", "genderscope.cli"]
    out = tmp_path / "run"
    res = subprocess.run(
        [*cli, "run", "gest", "--limit", "5", "--out", str(out)],
        env={**env, config.MIRROR_ENV: ""},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 2 and "genderscope data mirror PATH" in res.stderr
    subprocess.run(
        [*cli, "data", "mirror", str(MIRROR)], env=env, check=True, capture_output=True, timeout=60
    )
    res = subprocess.run(
        [*cli, "run", "gest", "--limit", "5", "--out", str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0, res.stderr
    assert (out / "results.json").is_file()
