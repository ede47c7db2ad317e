"""The offline demo: every task on built-in models, results under one folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console


def run_demo(out_dir: Path, quick: bool = False, console: Console | None = None) -> dict[str, Any]:
    """Run each demo step; returns {step: output folder}."""
    from genderscope.core.engine import run_tasks

    console = console or Console()
    done: dict[str, Any] = {}
    console.rule("GEST on the random null model (full dataset, 21,390 attempts)")
    output = run_tasks(["gest"], "random", out=out_dir / "gest-random", progress=False)
    for r in output.runs:
        console.print(r.task.render(r.result))
    done["gest-random"] = output.out_dir
    console.print(f"demo results in [bold]{out_dir}[/bold]")
    return done
