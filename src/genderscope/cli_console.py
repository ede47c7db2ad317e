"""The consoles every ``genderscope`` CLI module prints to: ``out`` (stdout) and ``err`` (stderr)."""

from __future__ import annotations

from rich.console import Console

out = Console()
err = Console(stderr=True)
