"""``genderscope batch write`` / ``batch read``: batch files for other runners (vLLM's ``run-batch``,
a provider's Batch API used by hand)."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from genderscope.cli.console import err, out
from genderscope.cli.options import split_task_tokens
from genderscope.core.seeds import DEFAULT_SEED, SEED_HELP

batch_app = typer.Typer(
    no_args_is_help=True,
    help="Batch files for other runners: write the requests a run needs, read the answers back.\n\n"
    "* `genderscope batch write gest --model openai:M -o requests.jsonl`\n\n"
    "* `vllm run-batch -i requests.jsonl -o results.jsonl --model M`\n\n"
    "* `genderscope batch read results.jsonl --model openai:M`, then `genderscope run gest --model "
    "openai:M` finds every answer in the store (0 requests).",
)


@batch_app.command("write", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def batch_write(
    ctx: typer.Context,
    tasks: List[str] = typer.Argument(..., metavar="TASK", help="task names (as for `genderscope run`)"),
    model: str = typer.Option(..., "--model", "-m", help="openai:MODEL or openai-completions:MODEL"),
    out_file: Path = typer.Option(..., "--out", "-o", metavar="FILE", help="the JSONL file to write"),
    trials: Optional[int] = typer.Option(None, help="repetitions per prompt (task default if omitted)"),
    limit: Optional[int] = typer.Option(None, help="evaluate only this many items"),
    seed: int = typer.Option(DEFAULT_SEED, help=SEED_HELP),
    temperature: Optional[float] = typer.Option(None, help="sampling temperature (task default if omitted)"),
    max_tokens: Optional[int] = typer.Option(None, help="maximum new tokens per answer"),
) -> None:
    """Write the requests `genderscope run TASK... --model SPEC` still needs as an OpenAI batch JSONL
    (custom_id = the response-store key; body = what the online route would POST).

    Give the same options you will give `run`. A multi-round task writes its first round the store
    lacks; after `batch read`, write again for the next round.
    """
    from genderscope.core.batchfile import write_requests
    from genderscope.core.validate import writable_path

    writable_path("--out", out_file, folder=False)
    tasks, options = split_task_tokens(list(tasks) + list(ctx.args))
    summary = write_requests(
        tasks,
        model,
        out_file,
        trials=trials,
        limit=limit,
        seed=seed,
        options=options,
        temperature=temperature,
        max_tokens=max_tokens,
    )
    for r in summary.tasks:
        if r.round == 0:
            out.print(f"{r.task}: every answer is in the store (nothing to write)")
        else:
            out.print(
                f"{r.task}: round {r.round}: {r.attempts} attempts, {r.from_store} from the store, "
                f"{r.written} requests written"
            )
    out.print(f"{summary.lines} requests in [bold]{summary.path}[/bold]")


@batch_app.command("read", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def batch_read(
    ctx: typer.Context,
    output: Path = typer.Argument(..., metavar="OUTPUT.jsonl", help="the batch runner's output file"),
    model: str = typer.Option(..., "--model", "-m", help="the model spec given to `batch write`"),
) -> None:
    """Store the answers of a batch output file (OpenAI's format, as vLLM's run-batch writes it).

    Give the model options that change answers as for `batch write` (e.g. --start-token, --model-id).
    Exits with status 3 when some lines failed (rerun `batch write` for those).
    """
    from genderscope.core.batchfile import read_answers

    _rest, options = split_task_tokens(list(ctx.args))
    if _rest:
        raise typer.BadParameter(f"unexpected argument {_rest[0]!r}")
    s = read_answers(output, model, options=options)
    out.print(
        f"{s.lines} lines: {s.stored} answers stored, {s.known} already in the store, {len(s.failed)} failed"
    )
    for cid, why in s.failed[:5]:
        err.print(f"[yellow]{cid[:16]}…: {why}[/yellow]", highlight=False)
    if s.unknown:
        err.print(
            f"[red]{len(s.unknown)} lines have a custom_id no `batch write` recorded in this store "
            f"(first: {s.unknown[0]}): was the file written with another GENDERSCOPE_HOME?[/red]"
        )
    if s.other_model:
        err.print(
            f"[red]{len(s.other_model)} lines were written for another model or options: pass the "
            "--model and model options given to `batch write`[/red]"
        )
    if s.failed or s.unknown or s.other_model:
        raise typer.Exit(3)
