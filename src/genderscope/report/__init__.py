"""Reports people read: the self-contained HTML report, run comparison and table export."""

from __future__ import annotations

from genderscope.report.runs import RunData, load_run, load_runs

__all__ = ["RunData", "load_run", "load_runs", "write_report"]


def write_report(run_dirs, out, title: str = "genderscope report"):
    """Write the HTML report over ``run_dirs`` to ``out`` (see :mod:`genderscope.report.html`)."""
    from genderscope.report.html import write_report as _write

    return _write(run_dirs, out, title)
