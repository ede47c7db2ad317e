"""``genderscope report``, ``compare`` and ``export``: commands over finished run folders.

Plain functions; ``genderscope.cli.app`` registers them on the app.
"""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from genderscope.cli.console import fold_table, out


def report(
    run_dirs: List[Path] = typer.Argument(
        ..., metavar="RUN_DIR", help="run folders (each with results.json)"
    ),
    output: Path = typer.Option(
        Path("report.html"), "--out", "-o", metavar="FILE", help="HTML file to write"
    ),
    title: str = typer.Option("genderscope report", help="page title"),
) -> None:
    """Write one self-contained HTML report (figures, tables, manifest, comparison) over RUN_DIR...

    Example: `genderscope report runs/gest-a runs/gest-b -o report.html`
    """
    from genderscope.report.genderbench import genderbench_section, rich_section
    from genderscope.report.html import write_report
    from genderscope.core.validate import writable_path
    from genderscope.report.runs import load_runs

    writable_path("--out", output, folder=False)
    path = write_report(list(run_dirs), output, title)
    section = genderbench_section(load_runs(list(run_dirs)))
    if section is not None:
        out.print(rich_section(section))
    out.print(f"report in [bold]{path}[/bold] (open it in a browser; it needs no network)")


def compare(
    run_dirs: List[Path] = typer.Argument(
        ..., metavar="RUN_DIR", help="run folders (each with results.json)"
    ),
    all_metrics: bool = typer.Option(False, "--all", help="every metric, not only the headline ones"),
    task: Optional[List[str]] = typer.Option(None, "--task", help="only these tasks"),
    paired: bool = typer.Option(
        False, "--paired", help="two runs (before, after): each metric's change with a paired 95% CI"
    ),
    html: Optional[Path] = typer.Option(
        None, "--html", metavar="FILE", help="with --paired: also write the HTML before/after view to FILE"
    ),
) -> None:
    """Headline metrics of several runs side by side (rows = metrics, columns = runs); with `--paired`,
    two runs of the same tasks (e.g. a model before and after `genderscope debias`): each metric's
    change after − before over the items both scored, with a paired bootstrap interval and its state.

    Examples: `genderscope compare runs/gest-a runs/gest-b`,
    `genderscope compare --paired runs/smol-cda/audit/before runs/smol-cda/audit/after --html cda.html`
    """
    from genderscope.report.compare import rich_table
    from genderscope.report.runs import load_runs

    if paired:
        from genderscope.common.errors import UsageError
        from genderscope.core.paired import paired_changes
        from genderscope.report.compare import paired_table

        if len(run_dirs) != 2:
            raise UsageError(f"--paired compares two runs (before, after), got {len(run_dirs)}")
        if html is not None:
            from genderscope.core.validate import writable_path

            writable_path("--html", html, folder=False)
        changes = paired_changes(run_dirs[0], run_dirs[1])
        out.print(fold_table(paired_table(changes)))
        if html is not None:
            from genderscope.core.paths import display_path
            from genderscope.report.before_after import write_before_after

            page = write_before_after(run_dirs[0], run_dirs[1], html, changes)
            out.print(f"before/after view in [bold]{display_path(page)}[/bold]")
        return
    if html is not None:
        from genderscope.common.errors import UsageError

        raise UsageError("--html writes the before/after view of --paired (several runs: genderscope report)")

    # the table takes the terminal's width (COLUMNS, else the terminal); long labels fold, never cut
    out.print(fold_table(rich_table(load_runs(list(run_dirs)), all_metrics, task or None)))


def export(
    run_dirs: List[Path] = typer.Argument(..., metavar="RUN_DIR", help="run folders"),
    fmt: str = typer.Option(
        "csv", "--format", "-f", metavar="csv|parquet|model-card", help="csv, parquet or model-card"
    ),
    out_dir: Optional[Path] = typer.Option(
        None, "--out", "-o", metavar="DIR", help="folder (default RUN_DIR/export, RUN_DIR/model-card)"
    ),
    no_attempts: bool = typer.Option(False, "--no-attempts", help="leave out attempts.jsonl"),
) -> None:
    """Export every table of a run (metrics, task tables, attempts) to CSV or Parquet files, or write
    a model card section (`bias.md`) and the Hugging Face `model-index` YAML over RUN_DIR...

    With several runs, tables go to one subfolder per run and model cards to one subfolder per model.

    Examples: `genderscope export runs/x --format parquet -o runs/x/tables`,
    `genderscope export runs/gest runs/winobias --format model-card -o card`
    """
    from genderscope.common.errors import UsageError
    from genderscope.core.validate import writable_path
    from genderscope.report.export import FORMATS, export_run

    if out_dir is not None:
        writable_path("--out", out_dir, folder=True)
    if fmt == "model-card":
        from genderscope.report.model_card import export_model_cards

        if out_dir is None and len(run_dirs) > 1:
            raise UsageError("--format model-card over several runs needs --out DIR")
        files = export_model_cards(list(run_dirs), out_dir or run_dirs[0] / "model-card")
    elif fmt not in FORMATS:
        raise UsageError(f"--format must be one of {', '.join(FORMATS)}, model-card, not {fmt!r}")
    else:
        files = []
        for run_dir in run_dirs:
            target = out_dir / run_dir.name if out_dir is not None and len(run_dirs) > 1 else out_dir
            files += export_run(run_dir, fmt, target, attempts=not no_attempts)
    for f in files:
        out.print(f"wrote {f}")


def check(
    run_dirs: List[Path] = typer.Argument(
        ..., metavar="RUN_DIR", help="run folders (each with results.json)"
    ),
    fail_on: List[str] = typer.Option(
        ["biased"],
        "--fail-on",
        metavar="STATES",
        help="summary states that fail a test, comma-separated: biased, anti-stereotypical, "
        "not-enough-evidence, no-evidence, descriptive (none = no state rule)",
    ),
    maximum: List[str] = typer.Option(
        [], "--max", metavar="METRIC=VALUE", help="fail when METRIC (or TASK:METRIC) is above VALUE"
    ),
    minimum: List[str] = typer.Option(
        [], "--min", metavar="METRIC=VALUE", help="fail when METRIC (or TASK:METRIC) is below VALUE"
    ),
    strict: bool = typer.Option(
        False, "--strict", help="--max/--min apply to the whole 95% CI, not only the value"
    ),
    junit: Optional[Path] = typer.Option(None, "--junit", metavar="FILE", help="also write JUnit XML"),
    correction: str = typer.Option(
        "holm",
        "--correction",
        metavar="holm|bh|none",
        help="multiple-testing correction of the biased/anti-stereotypical verdicts over the tested cells: "
        "holm (family-wise error 5%), bh (false discovery rate 5%), none (each cell at 95% alone)",
    ),
) -> None:
    """Release gate: exit 0 when every test of RUN_DIR... passes, 1 when any fails, 2 on bad input.

    A test fails when the report's summary state is one of `--fail-on` (default: biased) or a metric
    breaks a `--max`/`--min` bound. A biased (anti-stereotypical) state fails only when its p-value,
    adjusted by `--correction` over every tested cell, is below 0.05. One line per failing cell: run,
    test, metric, value [95% CI], state, p-values, the rule it broke.

    Example: `genderscope check runs/gest --fail-on biased,not-enough-evidence
    --max stereotype_rate=0.1 --junit check.xml`
    """
    from rich.markup import escape

    from genderscope.core.validate import writable_path
    from genderscope.report.gate import check_dirs, junit_xml

    if junit is not None:
        writable_path("--junit", junit, folder=False)
    result = check_dirs(list(run_dirs), fail_on, maximum, minimum, strict, correction)
    if junit is not None:
        junit.parent.mkdir(parents=True, exist_ok=True)
        junit.write_text(junit_xml(result), encoding="utf-8")
    for cell in result.failures:
        out.print(f"[red]FAIL[/red] {escape(cell.line())}", highlight=False, soft_wrap=True)
    for cell in result.cells:
        if cell.note and not cell.failed:
            out.print(f"[yellow]pass[/yellow] {escape(cell.line())}", highlight=False, soft_wrap=True)
    n, k = len(result.cells), len(result.failures)
    verdict = (
        f"[red]{k} of {n} checked cells failed[/red]" if k else f"[green]all {n} checked cells pass[/green]"
    )
    out.print(f"{verdict} ({escape(result.describe_rules())})", highlight=False, soft_wrap=True)
    if junit is not None:
        out.print(f"JUnit XML in [bold]{escape(str(junit))}[/bold]", highlight=False)
    if k:
        raise typer.Exit(1)
