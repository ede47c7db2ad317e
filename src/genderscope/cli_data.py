"""``genderscope data`` (dataset files: list, fetch, verify) and ``genderscope cache`` (the response
store: info, clear) sub-commands."""

from __future__ import annotations

from typing import List, Optional

import typer
from rich.table import Table

from genderscope.cli_console import err, out
from genderscope.core.errors import GenderscopeError, UsageError

data_app = typer.Typer(no_args_is_help=True, help="Dataset files: list, fetch, verify.")
cache_app = typer.Typer(no_args_is_help=True, help="The response store: info, clear.")


@data_app.command("list")
def data_list() -> None:
    """List every pinned dataset file and where it is found (mirror, cache, missing, corrupt)."""
    from genderscope.data.registry import DataRegistry

    reg = DataRegistry()
    table = Table(title=f"dataset files (mirror: {reg.mirror or 'not set'})")
    for col in ("name", "bytes", "status", "sha256", "license"):
        table.add_column(col)
    for name, e in reg.files.items():
        table.add_row(name, str(e.bytes), reg.status(name), e.sha256[:12], e.license)
    out.print(table)


@data_app.command("fetch")
def data_fetch(names: List[str] = typer.Argument(None, help="files or folders (default: all)")) -> None:
    """Make dataset files available in the cache (from the mirror or by download, sha256-checked).

    Example: `genderscope data fetch gest/gest.csv`
    """
    import shutil

    from genderscope.data.registry import DataRegistry

    reg = DataRegistry()
    chosen = [
        n for n in reg.files if not names or any(n == x or n.startswith(x.rstrip("/") + "/") for x in names)
    ]
    if names and not chosen:
        raise UsageError(f"no dataset file matches {' '.join(names)} (see `genderscope data list`)")
    failed = 0
    for name in chosen:
        try:
            path = reg.path(name)
            target = reg.cache / name
            if path != target:
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, target)
            out.print(f"[green]ok[/green] {name}")
        except GenderscopeError as exc:
            failed += 1
            err.print(f"[red]missing[/red] {exc}")
    if failed:
        raise typer.Exit(2)


@data_app.command("verify")
def data_verify() -> None:
    """Check the sha256 of every dataset file found in the mirror and the cache."""
    from genderscope.data.registry import DataRegistry

    reg = DataRegistry()
    bad = 0
    for name in reg.files:
        status = reg.status(name)
        colour = {"mirror": "green", "cache": "green", "missing": "yellow", "corrupt": "red"}[status]
        out.print(f"[{colour}]{status:8}[/{colour}] {name}")
        bad += status == "corrupt"
    if bad:
        err.print(f"{bad} corrupted file(s): delete them and run `genderscope data fetch`")
        raise typer.Exit(2)


@cache_app.command("info")
def cache_info() -> None:
    """Show the response store's path, size and responses per model."""
    from genderscope.core.store import ResponseStore

    store = ResponseStore()
    info = store.info()
    out.print(f"store: {info['path']} ({info['bytes'] / 1e6:.1f} MB, {info['responses']} responses)")
    table = Table()
    for col in ("model fingerprint", "kind", "responses"):
        table.add_column(col)
    for row in info["by_model"]:
        table.add_row(row["fingerprint"], row["kind"], str(row["responses"]))
    out.print(table)


@cache_app.command("clear")
def cache_clear(
    model: Optional[str] = typer.Option(None, help="only responses whose fingerprint starts with this"),
    yes: bool = typer.Option(False, "--yes", "-y", help="do not ask"),
) -> None:
    """Delete stored responses (all, or one model's).

    Example: `genderscope cache clear --model openai:gpt-4o-mini --yes`
    """
    from genderscope.core.store import ResponseStore

    if not yes and not typer.confirm("delete stored responses?"):
        raise typer.Exit(1)
    n = ResponseStore().clear(model)
    out.print(f"deleted {n} responses")
