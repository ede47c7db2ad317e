"""The data registry.

Every dataset file has a logical name (its path in a mirror, e.g. ``gest/gest.csv``),
an upstream URL pinned to a commit and a sha256 (``datasets.tsv`` in this folder).
:meth:`DataRegistry.path` resolves a name in this order:

1. the mirror directory ``$GENDERSCOPE_DATA_MIRROR`` (laid out like ``shared/data``);
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

from genderscope.core.errors import DataError
from genderscope.core.paths import home


@dataclass(frozen=True)
class DatasetFile:
    """One pinned file: logical name, sha256, size in bytes, upstream URL (or None), licence."""

    name: str
    sha256: str
    bytes: int
    url: str | None
    license: str


def _load_manifest() -> dict[str, DatasetFile]:
    text = resources.files("genderscope.data").joinpath("datasets.tsv").read_text(encoding="utf-8")
    rows = csv.DictReader(text.splitlines(), delimiter="\t")
    return {
        r["name"]: DatasetFile(
            r["name"], r["sha256"], int(r["bytes"]), None if r["url"] == "-" else r["url"], r["license"]
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
        env_mirror = os.environ.get("GENDERSCOPE_DATA_MIRROR")
        self.mirror = Path(mirror) if mirror else (Path(env_mirror) if env_mirror else None)
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
        return path.is_file() and path.stat().st_size == entry.bytes and sha256_file(path) == entry.sha256

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

        target = self.cache / entry.name
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.exists():
            target.unlink()  # a corrupted copy is never used
        try:
            pooch.retrieve(
                entry.url,
                known_hash=f"sha256:{entry.sha256}",
                fname=target.name,
                path=target.parent,
                progressbar=False,
            )
        except Exception as exc:  # network errors, hash mismatch
            raise DataError(
                self._missing_message(entry, bad) + f" (download failed: {type(exc).__name__})"
            ) from None
        self._verified[entry.name] = target
        return target

    def _missing_message(self, entry: DatasetFile, bad: list[str]) -> str:
        where = f"mirror {self.mirror}" if self.mirror else "no mirror set"
        msg = f"dataset file {entry.name!r} is not available ({where}; cache {self.cache})"
        if bad:
            msg += f"; wrong sha256 in {', '.join(bad)} (not used)"
        src = entry.url or "its upstream source"
        return (
            msg + f". Provide it: set GENDERSCOPE_DATA_MIRROR to a folder holding {entry.name}, "
            f"or put the file from {src} (sha256 {entry.sha256[:12]}…) at {self.cache / entry.name}, "
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
