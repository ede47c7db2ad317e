"""genderscope: measure (and help reduce) gender bias in language models.

Quick start (Python)::

    import genderscope
    result = genderscope.run("gest", model="random", limit=100)
    result.metrics_frame()          # pandas DataFrame with value, ci_low, ci_high

The same engine backs the ``genderscope`` command-line tool.
"""

from __future__ import annotations

__version__ = "0.1.0"

from genderscope.api import RunResult, list_backends, list_tasks, run  # noqa: E402

__all__ = ["__version__", "run", "RunResult", "list_tasks", "list_backends"]
