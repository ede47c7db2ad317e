"""The consoles every ``genderscope`` CLI module prints to (``out`` = stdout, ``err`` = stderr), table and
help-screen cosmetics.

Width: rich takes it from ``COLUMNS``, else from the terminal (stdin, stdout or stderr), else 80 columns.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console

out = Console()
err = Console(stderr=True)


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
