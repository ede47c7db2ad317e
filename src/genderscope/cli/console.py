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
    """Help screens: readable metavars (``RUN_DIR...``, ``PATH``, ``N``) instead of typer's types
    (``<list[Path]>``, ``<int>``), and no type at all for on/off flags such as ``--no-cache``.

    An option shows its ``metavar`` when it has one, else one derived from its type: ``N`` (whole
    number), ``NUMBER``, ``PATH``, ``a|b`` (choices) or its own name in capitals (``--model MODEL``);
    an argument shows its metavar in the name column (``...`` when it takes several values) and no type.
    A typer without this layout (``TyperOption.display_type_rich``) is left as it is.
    """
    try:
        from typer.core import TyperArgument, TyperOption
    except ImportError:  # pragma: no cover - an older or newer typer layout
        return
    shown = getattr(TyperOption, "display_type_rich", None)
    if shown is None or getattr(shown, "_genderscope_quiet", False):
        return

    def option_type(self: Any, ctx: Any) -> str | None:
        if getattr(self, "is_flag", False) and not getattr(self, "count", False):
            return None
        if self.metavar is not None:
            return self.metavar
        return readable_metavar(self)

    def argument_name(self: Any) -> str:
        name = self.metavar or (self.name or "").upper()
        return f"{name}..." if self.nargs != 1 and not name.endswith("...") else name

    def argument_usage(self: Any) -> str:
        name = argument_name(self)
        return name if self.required else f"[{name}]"

    option_type._genderscope_quiet = True  # type: ignore[attr-defined]
    TyperOption.display_type_rich = option_type  # type: ignore[method-assign]
    TyperArgument.display_type_rich = lambda self, ctx: None  # type: ignore[method-assign]
    TyperArgument.display_name_raw = property(argument_name)  # type: ignore[assignment, method-assign]
    TyperArgument._usage_display_name = argument_usage  # type: ignore[method-assign]


def readable_metavar(param: Any) -> str:
    """``N``, ``NUMBER``, ``PATH``, ``a|b`` or the option's name in capitals, from typer's description
    of the option's type."""
    import typing
    from pathlib import Path

    desc = getattr(param, "type_descriptor", None)
    annotation = getattr(desc, "annotation", None)
    if typing.get_origin(annotation) in (list, tuple):
        annotation = (typing.get_args(annotation) or (str,))[0]
    if getattr(desc, "is_choice", False):
        return "|".join(str(c) for c in getattr(desc, "choices", None) or ())
    if annotation is int:
        return "N"
    if annotation is float:
        return "NUMBER"
    if getattr(desc, "is_path", False) or annotation is Path:
        return "PATH"
    longest = max(getattr(param, "opts", None) or [param.name or "value"], key=len)
    return longest.lstrip("-").replace("-", "_").upper()
