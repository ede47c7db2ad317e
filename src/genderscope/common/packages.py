"""Optional packages: which of them are missing, said the one way every part of genderscope says it."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable


def missing_packages(needs: Iterable[tuple[str, str]]) -> str | None:
    """Why something cannot run when an optional package is absent: ``needs`` holds (module, extra) pairs;
    the answer names the absent modules and the extras that install them (None when all are installed)."""
    absent = [(m, extra) for m, extra in needs if importlib.util.find_spec(m) is None]
    if not absent:
        return None
    extras = ",".join(sorted({extra for _, extra in absent}))
    return f"needs {', '.join(m for m, _ in absent)}: pip install 'genderscope[{extras}]'"
