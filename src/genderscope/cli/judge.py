"""``genderscope judge RUN_DIR --model SPEC``: the command line of :mod:`.run`."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from genderscope.cli.console import err, out
from genderscope.cli.options import parse_extra
from genderscope.core.report_terminal import render_result


def register(app: typer.Typer) -> None:
    """Add ``judge`` to the top-level command line."""
    app.command(name="judge", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})(
        judge_cmd
    )


def judge_cmd(
    ctx: typer.Context,
    run_dir: Path = typer.Argument(..., metavar="RUN_DIR", help="a run folder of bold or counterfactual"),
    model: str = typer.Option(
        ..., "--model", "-m", help="the judge: a chat model spec (openai:MODEL, hf-causal:PATH, random)"
    ),
    out_dir: Optional[Path] = typer.Option(
        None, "--out", "-o", metavar="DIR", help="new folder (default RUN_DIR-judged)"
    ),
    consistency: bool = typer.Option(
        True,
        "--consistency/--no-consistency",
        help="judge each text twice, labels in reverse order, and report agreement",
    ),
    no_cache: bool = typer.Option(False, "--no-cache", help="neither read nor write the response store"),
    progress: Optional[bool] = typer.Option(None, "--progress/--no-progress", help="live progress bar"),
) -> None:
    """Regard of a generation run's texts (Sheng et al. 2019: positive, neutral, negative, other) by a judge
    model: a second run over RUN_DIR's generations (no generation is asked again), its requests through
    the response store.  The judged folder has every scorer's metrics plus the regard shares and gaps.

    Example: `genderscope judge runs/bold --model openai:gpt-4o-mini --base-url http://127.0.0.1:8000/v1`
    """
    from genderscope.commands.judge.run import judge_run
    from genderscope.core.validate import writable_path

    target = writable_path("--out", out_dir or Path(str(run_dir).rstrip("/") + "-judged"), folder=True)
    output = judge_run(
        run_dir,
        model,
        out=target,
        consistency=consistency,
        options=parse_extra(list(ctx.args)),
        use_cache=not no_cache,
        progress=progress,
    )
    for r in output.runs:
        out.print(render_result(r.task, r.result))
        c = r.counts
        out.print(
            f"[dim]{r.task.name}: {c.attempts} attempts ({c.attempts - c.requests - c.cache_hits} recorded "
            f"generations), {c.cache_hits} from cache, {c.requests} sent to the judge, "
            f"{c.errors} failed[/dim]"
        )
    out.print(f"results in [bold]{output.out_dir}[/bold]")
    if any(r.counts.errors for r in output.runs):
        err.print(
            "[yellow]some judge requests failed after retries; rerun the same command to retry only "
            "those[/yellow]"
        )
        raise typer.Exit(3)
