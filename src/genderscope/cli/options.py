"""Typer commands whose options are an ``opt(...)`` dataclass, routed like ``genderscope run``'s.

:func:`routed_command` registers ``body(options, **shown)``: click parses only the display options in
``shown``; every other token goes, as ``genderscope run`` sends a task's ``--name value`` pairs, through
:func:`genderscope.core.options.options_from_command_line` into the dataclass. ``--help`` lists the
dataclass's fields (flag, aliases, default, help).
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any, Callable, List, Optional

import typer

from genderscope.common.errors import UsageError
from genderscope.core.options import describe, options_from_command_line

ROUTED_SETTINGS = {"allow_extra_args": True, "ignore_unknown_options": True}


def _default_text(value: Any) -> str:
    if value is None or value == "":
        return ""
    if isinstance(value, (tuple, list)):
        value = ",".join(f"{x:g}" if isinstance(x, float) else str(x) for x in value)
    return f" (default {value})"


def options_help(options_cls: type) -> str:
    """Markdown list of the options of ``options_cls``: names, help, default."""
    lines = []
    for o in describe(options_cls):
        if o["argument"]:
            continue
        names = ", ".join(f"`{n}`" for n in (o["flag"], *o["aliases"]))
        if o["type"] == "bool":
            names += f" / `--no-{o['flag'][2:]}`"
        if o["required"]:
            tail = " (required)"
        else:
            tail = "" if o["type"] == "bool" else _default_text(o["default"])
        lines.append(f"* {names}: {o['help']}{tail}")
    return "\n".join(lines)


def _arguments(options_cls: type) -> tuple[str, str] | None:
    """Metavar (``CORPORA``, ``RUN_DIR``) and help of the positional fields, None when there are none."""
    fields = [f for f in dataclasses.fields(options_cls) if f.metadata.get("argument")]
    if not fields:
        return None
    return " ".join(f.name.upper() for f in fields), "; ".join(f.metadata["help"] for f in fields)


def routed_command(
    app: typer.Typer, name: str, options_cls: type, owner: str, **shown: tuple[type, Any]
) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Register ``body(options, **shown)`` as command ``name`` of ``app``; ``shown``: display-only
    options (name -> (type, typer.Option)) that are not part of ``options_cls``."""

    def register(body: Callable[..., None]) -> Callable[..., None]:
        params = [inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=typer.Context)]
        arguments = _arguments(options_cls)
        if arguments:
            info = typer.Argument(None, metavar=arguments[0], help=arguments[1], show_default=False)
            kind = inspect.Parameter.KEYWORD_ONLY
            params.append(inspect.Parameter("arguments", kind, default=info, annotation=Optional[List[str]]))
        for key, (tp, info) in shown.items():
            params.append(inspect.Parameter(key, inspect.Parameter.KEYWORD_ONLY, default=info, annotation=tp))

        def command(ctx: typer.Context, **values: Any) -> None:
            tokens = list(values.pop("arguments", None) or []) + list(ctx.args)
            body(options_from_command_line(options_cls, tokens, owner), **values)

        command.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
        command.__annotations__ = {p.name: p.annotation for p in params}
        command.__name__ = body.__name__
        doc = inspect.cleandoc(body.__doc__ or "") + "\n\n**Options**\n\n" + options_help(options_cls)
        command.options_cls = options_cls  # type: ignore[attr-defined]  (tests enumerate every option)
        app.command(name, context_settings=ROUTED_SETTINGS, help=doc)(command)
        return body

    return register


def split_task_tokens(tokens: list[str]) -> tuple[list[str], dict[str, Any]]:
    """(task names, options) of ``TASK... --name value ...`` (click hands unknown options to the variadic
    TASK argument): names split on commas, and lm-eval's ``--tasks a,b`` names tasks too."""
    first = next((i for i, t in enumerate(tokens) if t.startswith("--")), len(tokens))
    named, rest, tail = list(tokens[:first]), [], tokens[first:]
    i = 0
    while i < len(tail):
        tok = tail[i]
        if tok.startswith("--tasks="):
            named.append(tok.split("=", 1)[1])
        elif tok == "--tasks":
            if i + 1 == len(tail) or tail[i + 1].startswith("--"):
                raise UsageError("option --tasks needs task names, e.g. --tasks crows-pairs,winogender")
            named.append(tail[i + 1])
            i += 1
        else:
            rest.append(tok)
        i += 1
    tasks = [name.strip() for t in named for name in t.split(",") if name.strip()]
    return tasks, parse_extra(rest)


def parse_extra(args: list[str]) -> dict[str, Any]:
    """``--name value``, ``--name=value`` and bare ``--flag`` (= true) pairs -> dict."""
    values: dict[str, Any] = {}
    i = 0
    while i < len(args):
        tok = args[i]
        if not tok.startswith("--") or tok == "--":
            raise UsageError(f"unexpected argument {tok!r}: task and model options look like --name value")
        if "=" in tok:
            k, v = tok[2:].split("=", 1)
            values[k] = v
            i += 1
        elif i + 1 < len(args) and not args[i + 1].startswith("--"):
            values[tok[2:]] = args[i + 1]
            i += 2
        else:
            values[tok[2:]] = "true"
            i += 1
    return values
