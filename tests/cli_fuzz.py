"""Drive ``genderscope`` in-process with bad option values (helpers of
``tests/cli/test_cli_no_traceback.py``).

Every command and option is read from the typer/click command tree and from the ``opt(...)`` dataclasses
behind it (every task's and model kind's options with ``run``, the task options with ``reparse``, the
``bordia`` option sets), so an option added later is fuzzed without touching this file. A
:class:`Target` is one option (or positional argument) of one command with a valid command line around
it; :func:`invoke` runs ``genderscope.cli.main`` on a command line and returns what a user would see.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import sys
import typing
from pathlib import Path
from typing import Any, Callable

import typer.main

#: option values that are wrong for most options (each command line gets one of them, or random text)
BAD_VALUES = (
    "-3", "0", "-1", "1.5", "abc", "", " ", "nan", "inf", "-inf", "1e999", "9" * 20, "-", ",", ",,", "=",
    "a=b", "x=nan", "none", "ü\u200b", "x" * 300, "{file}", "{file}/below", "{missing}", "{dir}",
    "{empty_dir}", "random:abc", "replay:{file}", "hf-causal:{file}", "hf-mlm:{missing}", "word-lm:{dir}",
    "openai:",
)  # fmt: skip


#: commands whose help documents exit status 3 (some attempts or batch lines failed: rerun for those)
EXIT_3 = (("run",), ("batch", "read"))


class Reached(Exception):
    """Raised by a stubbed heavy step (training, the demo): the command line was accepted."""


@dataclasses.dataclass(frozen=True)
class Target:
    """One option (``--limit``) or positional argument (``name`` without dashes) of one command."""

    command: tuple[str, ...]
    option: str
    #: the valid command line around it (after the command's name); ``{new}``-style placeholders are
    #: filled per example, positional values are marked with a leading ``@``
    base: tuple[str, ...]
    is_argument: bool = False
    #: an option that takes no value (a flag): fuzzed as ``--flag=VALUE``
    is_flag: bool = False

    def argv(self, value: str) -> list[str]:
        """The base command line with this option set to ``value`` (replacing a value the base gives)."""
        if self.is_argument:  # the base's positional value(s), marked "@", become this value
            args = [value if a.startswith("@") else a for a in self.base]
            return [*self.command, *_once(args, value)]
        args = [a[1:] if a.startswith("@") else a for a in self.base]
        if self.option in args:
            i = args.index(self.option)
            del args[i : i + (1 if self.is_flag else 2)]
        given = [f"{self.option}={value}"] if self.is_flag else [self.option, value]
        return [*self.command, *args, *given]


@dataclasses.dataclass
class Outcome:
    """What one in-process run of the CLI showed."""

    argv: list[str]
    code: int | None
    stdout: str
    stderr: str
    #: an exception that escaped ``main`` (a traceback for the user), as ``Type: message``
    escaped: str | None

    def problem(self) -> str | None:
        """Why this outcome is wrong for a user, None when it is fine."""
        if self.escaped:
            return f"traceback: {self.escaped}"
        if "Traceback" in self.stdout + self.stderr:
            return "traceback printed"
        documented = self.code == 3 and any(tuple(self.argv[: len(c)]) == c for c in EXIT_3)
        if self.code not in (0, 1, 2) and not documented:
            return f"exit code {self.code}"
        if self.code == 2:
            lines = [ln for ln in self.stderr.splitlines() if ln.strip()]
            errors = [ln for ln in lines if ln.startswith("error:")]
            if len(errors) != 1:
                return f"exit 2 without exactly one 'error:' line: {self.stderr[-300:]!r}"
        return None


def invoke(argv: list[str]) -> Outcome:
    """Run ``genderscope ARGV`` through :func:`genderscope.cli.main` with stdout/stderr captured."""
    from genderscope.cli.app import main

    stdout, stderr = io.StringIO(), io.StringIO()
    code: int | None = 0
    escaped = None
    old = sys.argv
    sys.argv = ["genderscope", *argv]
    try:
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except Reached:
        code = 0
    except BaseException as exc:  # noqa: BLE001 - anything else would reach the user as a traceback
        escaped = f"{type(exc).__name__} at {_where(exc)}: {str(exc)[:200]}"
    finally:
        sys.argv = old
    return Outcome(argv, code, stdout.getvalue(), stderr.getvalue(), escaped)


def _where(exc: BaseException) -> str:
    """``file:line`` of the innermost frame of genderscope's code that the exception passed."""
    import traceback

    frames = [f for f in traceback.extract_tb(exc.__traceback__) if "genderscope" in f.filename]
    if not frames:
        return "?"
    f = frames[-1]
    return f"{f.filename.split('src/')[-1]}:{f.lineno}"


def command_tree() -> dict[tuple[str, ...], Any]:
    """Every leaf command of the app by its path (``("data", "list")``)."""
    from genderscope.cli.app import app

    found: dict[tuple[str, ...], Any] = {}

    def walk(cmd: Any, path: tuple[str, ...]) -> None:
        subs = getattr(cmd, "commands", None)
        if subs:
            for name, sub in subs.items():
                walk(sub, (*path, name))
        else:
            found[path] = cmd

    walk(typer.main.get_command(app), ())
    return found


def dataclass_flags(options_cls: type) -> list[tuple[str, bool, bool]]:
    """(flag, is_bool, is_argument) of every field of an ``opt(...)`` dataclass."""
    hints = typing.get_type_hints(options_cls)
    return [
        (
            "--" + f.name.replace("_", "-"),
            hints[f.name] is bool,
            bool(f.metadata.get("argument")),
        )
        for f in dataclasses.fields(options_cls)
    ]


def _click_targets(path: tuple[str, ...], cmd: Any, base: tuple[str, ...]) -> list[Target]:
    targets = []
    for p in cmd.params:
        if p.param_type_name == "argument":  # typer may vendor click: test by shape
            if p.name != "arguments":  # "arguments": a routed command's, fuzzed from its dataclass
                targets.append(Target(path, p.name or "", base, is_argument=True))
        elif p.param_type_name == "option" and "--help" not in p.opts:
            flag = max(p.opts, key=len)
            targets.append(Target(path, flag, base, is_flag=bool(p.is_flag)))
    return targets


def _routed_targets(path: tuple[str, ...], options_cls: type, base: tuple[str, ...]) -> list[Target]:
    targets = []
    for flag, is_bool, is_argument in dataclass_flags(options_cls):
        if is_argument:
            targets.append(Target(path, flag, base, is_argument=True))
        else:
            targets.append(Target(path, flag, base, is_flag=is_bool))
    return targets


def all_targets(bases: dict[tuple[str, ...], tuple[str, ...]], task: str = "gest") -> list[Target]:
    """Every option of every command (click's and the routed dataclasses'), each with its valid base
    command line from ``bases`` (a command missing there is left out: the test of the bases catches it)."""
    from genderscope import catalogue as registry
    from genderscope.core import lookup

    targets: list[Target] = []
    for path, cmd in command_tree().items():
        if path not in bases:
            continue
        base = bases[path]
        targets += _click_targets(path, cmd, base)
        options_cls = getattr(cmd.callback, "options_cls", None)
        if options_cls is not None:
            targets += _routed_targets(path, options_cls, base)
    # run: each task's options with that task; each model kind's options with a spec of that kind
    for name in registry.TASKS:
        base = tuple(a if a != "@{task}" else "@" + name for a in bases[("run",)])
        targets += _routed_targets(("run",), lookup.task_class(name).Options, base)
    for kind in registry.BACKENDS:
        spec = MODEL_SPECS.get(kind, f"{kind}:{{missing}}")
        base = _with_model(bases[("run",)], spec)
        with contextlib.suppress(ImportError):
            targets += _routed_targets(("run",), lookup.backend_class(f"{kind}:x").Options, base)
    reparse = bases[("reparse",)]
    targets += _routed_targets(("reparse",), lookup.task_class(task).Options, reparse)
    return targets


#: a model spec per kind whose target needs no model files (others get a missing path)
MODEL_SPECS = {"random": "random", "openai": "openai:m", "openai-completions": "openai-completions:m"}


def _once(args: list[str], value: str) -> list[str]:
    """``args`` with consecutive copies of ``value`` (several positional values replaced) kept once."""
    out: list[str] = []
    for a in args:
        if not (out and a == value and out[-1] == value):
            out.append(a)
    return out


def _with_model(base: tuple[str, ...], spec: str) -> tuple[str, ...]:
    args = list(base)
    args[args.index("--model") + 1] = spec
    return tuple(args)


def fill(argv: list[str], places: dict[str, Callable[[], str]]) -> list[str]:
    """Replace ``{name}`` placeholders (whole or inside a token) with fresh values."""
    out = []
    for a in argv:
        for key, make in places.items():
            token = "{" + key + "}"
            if token in a:
                a = a.replace(token, make())
        out.append(a)
    return out


def stub_heavy_steps(monkeypatch: Any) -> None:
    """Training, sampling, evaluating word-level LMs, loading a model to debias and the demo raise
    :class:`Reached` instead of
    running (the fuzz checks the command lines, not minutes of training)."""

    def reached(*_a: Any, **_k: Any) -> Any:
        raise Reached

    import genderscope.demo

    monkeypatch.setattr(genderscope.demo, "run_demo", reached)
    import genderscope.commands.debias.run as debias_run

    monkeypatch.setattr(debias_run, "load_model", reached)
    with contextlib.suppress(ImportError):
        import genderscope.bordia.lm.evaluation as evaluation
        import genderscope.bordia.lm.generate as generate
        import genderscope.bordia.lm.train as train

        monkeypatch.setattr(train, "train_lm", reached)
        monkeypatch.setattr(train, "evaluate_run", reached, raising=False)
        monkeypatch.setattr(evaluation, "evaluate_run", reached)
        monkeypatch.setattr(generate, "generate_samples", reached)


def tmp_places(root: Path, fixtures: dict[str, Path]) -> dict[str, Callable[[], str]]:
    """Placeholder makers: ``{new}`` a fresh path, ``{file}`` an existing file, ``{dir}`` a run folder..."""
    counter = iter(range(10**9))

    def new() -> str:
        return str(root / f"new{next(counter)}")

    made = {
        "new": new,
        "file": lambda: str(fixtures["file"]),
        "missing": lambda: str(root / "does-not-exist"),
        "dir": lambda: str(fixtures["run"]),
        "empty_dir": lambda: str(fixtures["empty_dir"]),
    }
    made.update({k: (lambda v=v: str(v)) for k, v in fixtures.items() if k not in made})
    return made
