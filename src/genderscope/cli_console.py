"""The consoles every ``genderscope`` CLI module prints to (``out`` = stdout, ``err`` = stderr), table and
help-screen cosmetics.

Width: rich takes it from ``COLUMNS``, else from the terminal (stdin, stdout or stderr), else 80 columns.
Both write through :class:`NoMachinePaths`: no absolute path under site-packages, the cwd or the home
folder reaches the terminal (:func:`genderscope.core.paths.scrub_paths`).
"""

from __future__ import annotations

import sys
from typing import Any

from rich.console import Console



class NoMachinePaths:
    """A text stream with machine paths shortened (:func:`~genderscope.core.paths.scrub_paths`): writes
    go to ``stream``, or to ``sys.<name>`` as it is at each write (pytest and typer's test runner swap
    it); everything else (isatty, fileno, encoding, flush) is the target stream's."""

    def __init__(self, name: str = "", stream: Any = None) -> None:
        self.name, self._stream = name, stream

    @property
    def stream(self) -> Any:
        return self._stream if self._stream is not None else getattr(sys, self.name)

    def write(self, text: str) -> int:
        from genderscope.core.paths import scrub_paths

        self.stream.write(scrub_paths(text))
        return len(text)

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.stream, attr)


def scrub_standard_streams() -> None:
    """Route ``sys.stdout`` and ``sys.stderr`` through :class:`NoMachinePaths` (the ``genderscope``
    command: plain prints and library warnings show no machine path either)."""
    for name in ("stdout", "stderr"):
        current = getattr(sys, name)
        if current is not None and not isinstance(current, NoMachinePaths):
            setattr(sys, name, NoMachinePaths(stream=current))


out = Console(file=NoMachinePaths("stdout"))
err = Console(file=NoMachinePaths("stderr"), stderr=True)


def fold_table(table: Any) -> Any:
    """Let every column of a rich Table fold long words onto the next line instead of cutting them with
    an ellipsis (narrow terminals); a wide terminal shows them whole.  Returns the table."""
    for column in getattr(table, "columns", []):
        if not column.no_wrap:
            column.overflow = "fold"
    return table


def quiet_flag_types() -> None:
    """Help screens: no type column (``<bool>``) for on/off flags such as ``--no-cache`` and ``--help``.

    Recent typer versions print a type for every option; for a flag it is noise.  A typer without
    ``TyperOption.display_type_rich`` is left as it is.
    """
    try:
        from typer.core import TyperOption
    except ImportError:  # pragma: no cover - an older or newer typer layout
        return
    shown = getattr(TyperOption, "display_type_rich", None)
    if shown is None or getattr(shown, "_genderscope_quiet", False):
        return

    def display_type_rich(self: Any, ctx: Any) -> str | None:
        if getattr(self, "is_flag", False) and not getattr(self, "count", False):
            return None
        return shown(self, ctx)

    display_type_rich._genderscope_quiet = True  # type: ignore[attr-defined]
    TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign]
