"""``$GENDERSCOPE_HOME`` (default ``~/.cache/genderscope``): a leaf module, so that the config file
(:mod:`genderscope.common.config`) and the path display (:mod:`genderscope.core.paths`, which reads the
config's data mirror) both use it without importing each other."""

from __future__ import annotations

import os
from pathlib import Path


def home() -> Path:
    """The user directory holding ``store.sqlite``, ``data/`` and ``models/``."""
    env = os.environ.get("GENDERSCOPE_HOME")
    path = Path(env).expanduser() if env else Path.home() / ".cache" / "genderscope"
    path.mkdir(parents=True, exist_ok=True)
    return path
