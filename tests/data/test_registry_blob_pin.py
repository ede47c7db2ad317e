"""Git-blob pins of the data registry (the PTB and WikiText-2 training splits)."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest

from genderscope.common.errors import DataError
from genderscope.data.pins import git_blob_sha1, matches_pin
from genderscope.data.registry import DataRegistry, DatasetFile

TRAIN = {
    "corpora/ptb/ptb.train.txt": "04d78dc94771b5c04adc40b3be08bd8c82942e7f",
    "corpora/wikitext-2/train.txt": "2d84b35af79e411d73ea7cae83c73964c6ac83b4",
}


def test_blob_id_is_gits(tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_bytes(b"hello world\n")
    # `git hash-object` of "hello world\n"
    assert git_blob_sha1(f) == "3b18e512dba79e4c8300dd08aeb37f8e728b8dad"
    assert git_blob_sha1(f) == hashlib.sha1(b"blob 12\0hello world\n").hexdigest()
    try:
        got = subprocess.run(["git", "hash-object", str(f)], capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return
    assert got.stdout.strip() == git_blob_sha1(f)


def test_upstream_blob_ids_of_the_mirrored_splits(data_registry: DataRegistry) -> None:
    # the same upstream trees list ptb.valid.txt / wikitext-2 valid.txt with these blob ids
    assert (
        git_blob_sha1(data_registry.path("corpora/ptb/ptb.valid.txt"))
        == "7b3d9d9fd705825715695328b2de872ffbc14a84"
    )
    assert (
        git_blob_sha1(data_registry.path("corpora/wikitext-2/valid.txt"))
        == "eec944eb2d9e46061cd34a6913528797db6842fc"
    )


def test_training_splits_are_pinned_by_blob(data_registry: DataRegistry) -> None:
    for name, blob in TRAIN.items():
        e = data_registry.entry(name)
        assert e.sha256 == "git-blob-sha1:" + blob and e.bytes is None
        valid = data_registry.entry(name.replace("train", "valid"))
        assert e.url.rsplit("/", 1)[0] == valid.url.rsplit("/", 1)[0]  # same upstream commit and folder


def _registry_with(tmp_path: Path, content: bytes, pinned: bytes) -> DataRegistry:
    reg = DataRegistry(mirror=tmp_path / "mirror", cache=tmp_path / "cache", offline=True)
    pin = "git-blob-sha1:" + hashlib.sha1(b"blob %d\0" % len(pinned) + pinned).hexdigest()
    reg.files["corpora/x/train.txt"] = DatasetFile(
        "corpora/x/train.txt", pin, None, "https://example.org/x", "-"
    )
    f = tmp_path / "mirror" / "corpora/x/train.txt"
    f.parent.mkdir(parents=True)
    f.write_bytes(content)
    return reg


def test_blob_pinned_file_is_used_when_it_matches(tmp_path: Path) -> None:
    reg = _registry_with(tmp_path, b"a b c\n", b"a b c\n")
    assert reg.path("corpora/x/train.txt").read_bytes() == b"a b c\n"
    assert reg.status("corpora/x/train.txt") == "mirror"


def test_blob_pinned_file_with_other_content_is_never_used(tmp_path: Path) -> None:
    reg = _registry_with(tmp_path, b"a b d\n", b"a b c\n")
    assert reg.status("corpora/x/train.txt") == "corrupt"
    with pytest.raises(DataError, match="wrong git blob id"):
        reg.path("corpora/x/train.txt")
    assert not matches_pin(
        tmp_path / "mirror/corpora/x/train.txt", reg.files["corpora/x/train.txt"].sha256, 5
    )


def test_offline_training_split_error_says_how_to_provide_it(tmp_path: Path) -> None:
    from genderscope.bordia.text import resolve_corpus_paths

    with pytest.raises(DataError) as exc:
        resolve_corpus_paths(["ptb:train"])
    msg = str(exc.value)
    assert "ptb.train.txt" in msg and "git blob 04d78dc94771" in msg
    assert "data mirror PATH" in msg and "pass a copy's path" in msg
