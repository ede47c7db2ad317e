"""A rich progress bar for long work: items done, rate, ETA and cache hits."""

from __future__ import annotations

import sys
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)


class _Null:
    def __enter__(self) -> "_Null":
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    def add(self, description: str, total: int, cached: int = 0) -> None:
        return None

    def advance(self, n: int = 1) -> None:
        return None


class RunProgress:
    """Progress of one task's attempts; ``advance`` is cheap enough to call per answer."""

    def __init__(self, console: Console | None = None):
        self.console = console or Console(stderr=True)
        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TaskProgressColumn(),
            TextColumn("{task.fields[rate]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            TextColumn("cache hits {task.fields[cached]}"),
            console=self.console,
            transient=False,
        )
        self._task: Any = None

    def __enter__(self) -> "RunProgress":
        self._progress.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._progress.__exit__(*exc)

    def add(self, description: str, total: int, cached: int = 0) -> None:
        self._task = self._progress.add_task(
            description, total=total, completed=cached, cached=cached, rate=""
        )

    def advance(self, n: int = 1) -> None:
        task = self._progress.tasks[self._task] if self._task is not None else None
        if task is None:
            return
        speed = task.speed
        self._progress.update(self._task, advance=n, rate=f"{speed:,.0f}/s" if speed else "")


def make_progress(enabled: bool | None = None) -> RunProgress | _Null:
    """A live bar when stderr is a terminal (or ``enabled=True``), otherwise a no-op."""
    if enabled is None:
        enabled = sys.stderr.isatty()
    return RunProgress() if enabled else _Null()
