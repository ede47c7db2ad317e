"""Content pins of dataset files: sha256 (the default) or a git blob id.

A ``datasets.tsv`` row pins a file by its sha256 hex, or, for files known only by their upstream git
blob id (too large for the mirror, e.g. the PTB and WikiText-2 training splits), by
``git-blob-sha1:<40 hex>``: the id git gives the file, sha1(``b"blob <size>\\0"`` + bytes). The size
column may then be ``-`` (the blob id pins the size too).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

BLOB_PREFIX = "git-blob-sha1:"


def git_blob_sha1(path: str | Path) -> str:
    """The git blob id of a file's bytes: sha1 of ``blob <size>\\0`` followed by the bytes (hex)."""
    path = Path(path)
    h = hashlib.sha1(b"blob %d\0" % path.stat().st_size)
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def is_blob_pin(pin: str) -> bool:
    return pin.startswith(BLOB_PREFIX)


def matches_pin(path: str | Path, pin: str, size: int | None) -> bool:
    """Whether the file at ``path`` has the pinned content (size checked first when known)."""
    from genderscope.data.registry import sha256_file

    path = Path(path)
    if not path.is_file() or (size is not None and path.stat().st_size != size):
        return False
    if is_blob_pin(pin):
        return git_blob_sha1(path) == pin[len(BLOB_PREFIX) :]
    return sha256_file(path) == pin


def describe_pin(pin: str) -> str:
    """``sha256 0e1839e6358d…`` or ``git blob 04d78dc94771…`` for messages."""
    if is_blob_pin(pin):
        return f"git blob {pin[len(BLOB_PREFIX) :][:12]}…"
    return f"sha256 {pin[:12]}…"
