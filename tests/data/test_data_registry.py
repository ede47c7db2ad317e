"""Data registry: mirror, cache, corrupted files, offline errors."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from genderscope.common.errors import DataError
from genderscope.data.pins import archive_member
from genderscope.data.registry import DataRegistry
from genderscope.data.pins import sha256_file

NAME = "bordia_bowman/penn-gender-pairs"


def test_every_manifest_entry_is_pinned(data_registry: DataRegistry) -> None:
    for name, entry in data_registry.files.items():
        blob = entry.sha256.startswith("git-blob-sha1:")  # large training splits: pinned, not mirrored
        assert len(entry.sha256) == (14 + 40 if blob else 64)
        if entry.url:
            assert entry.url.startswith("https://") and "/" in entry.url
            if archive_member(entry.url):  # a member of an archive pinned by its sha256 (a wheel on PyPI)
                continue
            # pinned to a 40-hex commit
            assert any(
                len(part) == 40 and all(c in "0123456789abcdef" for c in part)
                for part in entry.url.split("/")
            )
        assert data_registry.status(name) == ("missing" if blob else "mirror")


def test_mirror_file_verified(data_registry: DataRegistry) -> None:
    p = data_registry.path(NAME)
    assert sha256_file(p) == data_registry.sha256(NAME)


def test_corrupted_mirror_file_is_never_used(tmp_path: Path, data_registry: DataRegistry) -> None:
    mirror = tmp_path / "mirror"
    (mirror / "bordia_bowman").mkdir(parents=True)
    good = data_registry.path(NAME).read_bytes()
    (mirror / NAME).write_bytes(good[:-1] + b"X")
    reg = DataRegistry(mirror=mirror, cache=tmp_path / "cache", offline=True)
    assert reg.status(NAME) == "corrupt"
    with pytest.raises(DataError, match="wrong sha256"):
        reg.path(NAME)


def test_cache_used_when_no_mirror(tmp_path: Path, data_registry: DataRegistry) -> None:
    cache = tmp_path / "cache"
    (cache / "bordia_bowman").mkdir(parents=True)
    shutil.copyfile(data_registry.path(NAME), cache / NAME)
    reg = DataRegistry(mirror=tmp_path / "nothing", cache=cache, offline=True)
    assert reg.path(NAME) == cache / NAME
    assert reg.status(NAME) == "cache"


def test_offline_missing_file_message_names_file_and_fix(tmp_path: Path) -> None:
    reg = DataRegistry(mirror=tmp_path / "none", cache=tmp_path / "cache", offline=True)
    with pytest.raises(DataError) as err:
        reg.path("gest/gest.csv")
    msg = str(err.value)
    assert "gest/gest.csv" in msg and "GENDERSCOPE_DATA_MIRROR" in msg and "\n" not in msg


def test_unknown_name() -> None:
    with pytest.raises(DataError, match="unknown dataset"):
        DataRegistry().entry("nope/nothing.txt")
