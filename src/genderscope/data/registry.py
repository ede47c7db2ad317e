"""The data registry.

Every dataset file has a logical name (its path in a mirror, e.g. ``gest/gest.csv``),
an upstream URL pinned to a commit and a sha256 (``datasets.tsv`` in this folder).
:meth:`DataRegistry.path` resolves a name in this order:

1. the mirror directory (laid out like ``shared/data``): ``$GENDERSCOPE_DATA_MIRROR``, else the one saved by
   ``genderscope data mirror PATH``, else ``$GENDERSCOPE_HOME/mirror`` (:mod:`genderscope.core.config`);
2. the user cache ``$GENDERSCOPE_HOME/data``;
3. a download of the pinned URL with pooch, sha256-checked, into the cache
   (skipped when ``GENDERSCOPE_OFFLINE=1``).

A file whose sha256 does not match is never used.
"""

from __future__ import annotations

import csv
import hashlib
import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from genderscope.core.config import data_mirror
from genderscope.core.errors import DataError
from genderscope.core.paths import home


@dataclass(frozen=True)
class DatasetFile:
    """One pinned file: logical name, sha256, size in bytes, upstream URL (or None), licence."""

    name: str
    sha256: str  # or git-blob-sha1:<hex> (genderscope.data.pins)
    bytes: int | None  # None: unknown (a git blob pin fixes the size)
    url: str | None
    license: str


def _load_manifest() -> dict[str, DatasetFile]:
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


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class DataRegistry:
    """Resolves logical dataset names to verified local files."""

    def __init__(
        self, mirror: str | Path | None = None, cache: str | Path | None = None, offline: bool | None = None
    ):
        self.files = _load_manifest()
        self.mirror = Path(mirror) if mirror else data_mirror()
        self.cache = Path(cache) if cache else home() / "data"
        self.offline = (
            offline if offline is not None else os.environ.get("GENDERSCOPE_OFFLINE", "") not in ("", "0")
        )
        self._verified: dict[str, Path] = {}

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
        import pooch

        from genderscope.data.pins import is_blob_pin

        target = self.cache / entry.name
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.exists():
            target.unlink()  # a corrupted copy is never used
        blob = is_blob_pin(entry.sha256)
        try:
            pooch.retrieve(
                entry.url,
                known_hash=None if blob else f"sha256:{entry.sha256}",
                fname=target.name,
                path=target.parent,
                progressbar=False,
            )
        except Exception as exc:  # network errors, hash mismatch
            raise DataError(
                self._missing_message(entry, bad) + f" (download failed: {type(exc).__name__})"
            ) from None
        if blob and not self._check(entry, target):  # pooch cannot check a git blob id: check here
            target.unlink()
            why = " (download failed: content differs from the pin)"
            raise DataError(self._missing_message(entry, bad) + why)
        self._verified[entry.name] = target
        return target

    def _missing_message(self, entry: DatasetFile, bad: list[str]) -> str:
        from genderscope.data.pins import describe_pin

        where = f"mirror {self.mirror}" if self.mirror else "no mirror set"
        msg = f"dataset file {entry.name!r} is not available ({where}; cache {self.cache})"
        if bad:
            kind = "git blob id" if entry.sha256.startswith("git-blob-sha1:") else "sha256"
            msg += f"; wrong {kind} in {', '.join(bad)} (not used)"
        src = entry.url or "its upstream source"
        return (
            msg + f". Provide it: `genderscope data mirror PATH` (or GENDERSCOPE_DATA_MIRROR=PATH), PATH a "
            f"folder holding {entry.name}, "
            f"or put the file from {src} ({describe_pin(entry.sha256)}) at {self.cache / entry.name}, "
            "or run `genderscope data fetch` with network access"
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
