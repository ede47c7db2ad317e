"""Where genderscope keeps its files: ``$GENDERSCOPE_HOME`` (default ``~/.cache/genderscope``)."""

from __future__ import annotations

import os
from pathlib import Path


def home() -> Path:
    """The user directory holding ``store.sqlite``, ``data/`` and ``models/``."""
    env = os.environ.get("GENDERSCOPE_HOME")
    path = Path(env).expanduser() if env else Path.home() / ".cache" / "genderscope"
    path.mkdir(parents=True, exist_ok=True)
    return path
