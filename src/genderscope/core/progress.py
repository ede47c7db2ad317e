"""Progress of long work: a rich bar on a terminal (items done, rate, ETA, cache hits); when stderr is not a
terminal (CI logs, ``make demo > log``), no frames, one line per finished step instead."""

from __future__ import annotations

import os
import sys
import time
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

    def advance(self, n: int = 1, description: str | None = None) -> None:
        return None

    def finish(self, description: str) -> None:
        """The step ``description`` (a task) asks nothing more."""
        return None


class RunProgress:
    """Progress of a run's attempts, one bar per task round (tasks answered together advance their own
    bars: ``advance(n, description)``); ``advance`` is cheap enough to call per answer."""

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
        self._rows: dict[str, Any] = {}

    def __enter__(self) -> "RunProgress":
        self._progress.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._progress.__exit__(*exc)

    def add(self, description: str, total: int, cached: int = 0) -> None:
        self._task = self._progress.add_task(
            description, total=total, completed=cached, cached=cached, rate=""
        )
        self._rows[description] = self._task

    def advance(self, n: int = 1, description: str | None = None) -> None:
        row = self._task if description is None else self._rows.get(description, self._task)
        if row is None:
            return
        speed = self._progress.tasks[row].speed
        self._progress.update(row, advance=n, rate=f"{speed:,.0f}/s" if speed else "")

    def finish(self, description: str) -> None:
        return None


class StepLines(_Null):
    """No live frames: one line on stderr per step (task) when it ends (``gest: 300 answered, 0 from cache,
    4.2 s``); steps answered together each get their own line."""

    def __init__(self) -> None:
        self._steps: dict[str, list[float]] = {}  # label -> [total, cached, started]

    def add(self, description: str, total: int, cached: int = 0) -> None:
        """One round of a task's attempts; a task of several rounds adds them up."""
        step = self._steps.setdefault(description, [0, 0, time.perf_counter()])
        step[0] += total
        step[1] += cached

    def finish(self, description: str) -> None:
        step = self._steps.pop(description, None)
        if step is not None:
            total, cached, started = step
            took = time.perf_counter() - started
            step_done(f"{description}: {int(total)} answered, {int(cached)} from cache", took)

    def __exit__(self, *exc: Any) -> None:
        if exc[0] is None:
            for label in list(self._steps):
                self.finish(label)


def step_done(text: str, seconds: float | None = None) -> None:
    """One line on stderr for a finished step, e.g. ``converted GGUF x.gguf: 12.3 s``."""
    took = f", {seconds:.1f} s" if seconds is not None else ""
    print(f"{text}{took}", file=sys.stderr, flush=True)


def make_progress(enabled: bool | None = None) -> RunProgress | _Null:
    """A live bar when stderr is a terminal (or ``enabled=True``); ``None`` off a terminal: one line when the
    step ends (:class:`StepLines`); ``False``: nothing."""
    if enabled is None:
        return RunProgress() if sys.stderr.isatty() else StepLines()
    return RunProgress() if enabled else _Null()


def no_progress_frames_off_a_terminal() -> None:
    """Off a terminal, switch off the progress bars of tqdm (transformers' GGUF conversion, weight loading)
    and huggingface_hub before they are imported: tqdm reads ``TQDM_DISABLE`` once, at import.  A value the
    user set is kept."""
    if not sys.stderr.isatty():
        os.environ.setdefault("TQDM_DISABLE", "1")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
