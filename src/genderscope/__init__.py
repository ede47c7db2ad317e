"""genderscope: measure (and help reduce) gender bias in language models.

Quick start (Python)::

    import genderscope
    result = genderscope.run("gest", model="random", limit=100)
    result.metrics_frame()          # pandas DataFrame with value, ci_low, ci_high
    result.summary_frame()          # the report's state per test (biased, no evidence, ...)
    genderscope.check([result], maximum={"stereotype_rate": 0.1})   # failing cells ([] = pass)

The same engine backs the ``genderscope`` command-line tool.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from genderscope._version import __version__

__all__ = ["RunResult", "__version__", "check", "list_backends", "list_tasks", "run"]

if TYPE_CHECKING:
    from genderscope.api import RunResult, check, list_backends, list_tasks, run


def __getattr__(name: str) -> Any:
    """Load the API (and pandas) on first use, so that the CLI starts fast."""
    if name in ("run", "RunResult", "check", "list_tasks", "list_backends"):
        from genderscope import api

        return getattr(api, name)
    raise AttributeError(f"module 'genderscope' has no attribute {name!r}")
