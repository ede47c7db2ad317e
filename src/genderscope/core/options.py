"""Typed option sets for tasks, backends and commands, parsed from ``--name value`` pairs.

An option set is a dataclass whose fields have defaults; ``opt()`` adds help text, allowed choices,
short aliases (``-k``) and, for a command's positional arguments, ``argument=True``.  ``genderscope run``
passes unknown ``--flag value`` pairs to the task's and backend's option sets, and the ``bordia``
commands pass theirs to their option set, both through :func:`build_options`: a task or command gains
a command-line option by adding a field.  Every field is ``--name-with-dashes`` (plus its aliases); a
bool field is also ``--name`` alone (true) and ``--no-name`` (false).
"""

from __future__ import annotations

import dataclasses
import types
import typing
from pathlib import Path
from typing import Any

from genderscope.common.errors import UsageError


def opt(
    default: Any,
    help: str,
    choices: tuple[str, ...] | None = None,
    *,
    aliases: tuple[str, ...] = (),
    argument: bool = False,
    required: bool = False,
    minimum: float | None = None,
    maximum: float | None = None,
) -> Any:
    """A dataclass field with help text (and optional choices) for the CLI and docs.

    ``aliases``: further command-line names (``("-k",)``); ``argument``: a required positional argument
    of a command; ``required``: a required option (for both, ``default`` is ignored and the dataclass
    must be ``kw_only``); ``minimum``/``maximum``: inclusive bounds of a number (a float option is
    always finite).
    """
    meta = {
        "help": help,
        "choices": choices,
        "aliases": tuple(aliases),
        "argument": argument,
        "minimum": minimum,
        "maximum": maximum,
    }
    if argument or required:
        meta["required"] = True
        return dataclasses.field(metadata=meta)
    if isinstance(default, (list, dict, set)):
        return dataclasses.field(default_factory=lambda: type(default)(default), metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


def confidence_level_opt() -> Any:
    """The ``confidence_level`` field of options with intervals (0.95; :func:`check_confidence_level`)."""
    return opt(0.95, "confidence level of the intervals")


def bootstrap_seed_opt() -> Any:
    """The ``bootstrap_seed`` field of options whose bootstrap draws from ``numpy.random.default_rng``."""
    return opt(0, "seed of numpy.random.default_rng for the bootstrap", minimum=0, maximum=2**63 - 1)


def check_confidence_level(level: float) -> None:
    """``ValueError`` unless 0 < ``level`` < 1 (in an options class's ``__post_init__``)."""
    if not 0 < level < 1:
        raise ValueError("--confidence-level must be between 0 and 1")


def flag_of(f: dataclasses.Field) -> str:
    """The command-line name of a field: ``--name-with-dashes``."""
    return "--" + f.name.replace("_", "-")


def check_choices(options: Any) -> None:
    """Raise :class:`UsageError` when a field with ``choices`` holds another value or a number is out of
    its bounds (options built in Python, not through :func:`build_options`)."""
    for f in dataclasses.fields(options):
        choices = f.metadata.get("choices")
        value = getattr(options, f.name)
        if choices and value not in choices:
            raise UsageError(f"{flag_of(f)} must be {' or '.join(choices)}, got {value!r}")
        check_bounds(f, value)


def check_bounds(f: dataclasses.Field, value: Any) -> Any:
    """``value`` of field ``f`` if it is within the field's ``minimum``/``maximum`` (and finite, for a
    float), else one :class:`UsageError` line naming the option, the value and the range."""
    from genderscope.core import validate

    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return value
    low, high = f.metadata.get("minimum"), f.metadata.get("maximum")
    fix = f.metadata.get("help", "")
    if isinstance(value, float):
        validate.real_number(flag_of(f), value, minimum=low, maximum=high, fix=fix)
    else:
        validate.whole_number(flag_of(f), value, minimum=low, maximum=high, fix=fix)
    return value


def describe(options_cls: type) -> list[dict[str, Any]]:
    """Name, type, default, choices and help of every field (for ``tasks`` and ``--help``)."""
    hints = typing.get_type_hints(options_cls)
    out = []
    for f in dataclasses.fields(options_cls):
        if f.default is not dataclasses.MISSING:
            default = f.default
        elif f.default_factory is not dataclasses.MISSING:
            default = f.default_factory()
        else:  # a positional argument
            default = None
        out.append(
            {
                "name": f.name,
                "flag": flag_of(f),
                "aliases": f.metadata.get("aliases", ()),
                "argument": f.metadata.get("argument", False),
                "required": f.metadata.get("required", False),
                "type": _type_name(hints[f.name]),
                "default": default,
                "choices": f.metadata.get("choices"),
                "help": f.metadata.get("help", ""),
            }
        )
    return out


def _type_name(tp: Any) -> str:
    return getattr(tp, "__name__", None) or str(tp).replace("typing.", "")


#: what a value of a type looks like, for error messages
_WANTED = {int: "give a whole number, e.g. 10", float: "give a number, e.g. 0.5", bool: "give true or false"}


def _convert(name: str, raw: Any, tp: Any, choices: tuple[str, ...] | None) -> Any:
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Union or origin is types.UnionType:
        non_none = [a for a in args if a is not type(None)]
        if raw == "" and non_none[0] is str:  # an empty string is a string (e.g. "drop no token")
            return ""
        if raw is None or (isinstance(raw, str) and raw.lower() in {"none", "null", ""}):
            return None
        return _convert(name, raw, non_none[0], choices)
    if origin in (list, tuple):
        items = (
            raw if isinstance(raw, (list, tuple)) else [s.strip() for s in str(raw).split(",") if s.strip()]
        )
        conv = [_convert(name, x, args[0] if args else str, choices) for x in items]
        return conv if origin is list else tuple(conv)
    try:
        if tp is bool:
            if isinstance(raw, bool):
                return raw
            low = str(raw).lower()
            if low in {"1", "true", "yes", "on"}:
                return True
            if low in {"0", "false", "no", "off"}:
                return False
            raise ValueError(raw)
        if tp is int:
            return int(raw)
        if tp is float:
            return float(raw)
        if tp is Path:
            return Path(raw)
        value = str(raw) if tp is str else raw
    except (TypeError, ValueError, OverflowError):
        want = _WANTED.get(tp, f"give a {_type_name(tp)}")
        raise UsageError(
            f"option --{name.replace('_', '-')}: cannot read {raw!r} as {_type_name(tp)}; {want}"
        ) from None
    if choices and value not in choices:
        raise UsageError(f"option --{name.replace('_', '-')}: {value!r} is not one of {', '.join(choices)}")
    return value


def field_for(options_cls: type, key: str) -> tuple[str, bool | None] | None:
    """The field a command-line name means: ``--name-with-dashes``, ``name``, an alias (``-k``) or, for a
    bool field, ``--no-name``; returns (field name, forced value: False for ``--no-``, else None)."""
    fields = {f.name: f for f in dataclasses.fields(options_cls)}
    bare = key.lstrip("-").replace("-", "_")
    if bare in fields:
        return bare, None
    for f in fields.values():
        if key in f.metadata.get("aliases", ()) or "-" + bare in f.metadata.get("aliases", ()):
            return f.name, None
    hints = typing.get_type_hints(options_cls)
    if bare.startswith("no_") and hints.get(bare[3:]) is bool:
        return bare[3:], False
    return None


def build_options(options_cls: type, values: dict[str, Any], owner: str) -> Any:
    """Instantiate ``options_cls`` from ``values`` (strings or typed), checking names and types."""
    hints = typing.get_type_hints(options_cls)
    fields = {f.name: f for f in dataclasses.fields(options_cls)}
    kwargs = {}
    for key, raw in values.items():
        found = field_for(options_cls, key)
        if found is None:
            name = key.lstrip("-").replace("_", "-")
            known = ", ".join(flag_of(f) for f in fields.values() if not f.metadata.get("argument")) or "none"
            raise UsageError(f"{owner} has no option --{name} (its options: {known})")
        name, forced = found
        if forced is not None:
            raw = forced if _convert(key, raw, bool, None) else not forced
        value = _convert(name, raw, hints[name], fields[name].metadata.get("choices"))
        for item in value if isinstance(value, (list, tuple)) else (value,):
            check_bounds(fields[name], item)
        kwargs[name] = value
    missing = [
        f.name.upper() if f.metadata.get("argument") else flag_of(f)
        for f in fields.values()
        if f.metadata.get("required") and f.name not in kwargs
    ]
    if missing:
        raise UsageError(f"{owner} needs {' '.join(missing)} (see its --help)")
    try:
        return options_cls(**kwargs)
    except ValueError as exc:  # __post_init__ validation
        raise UsageError(f"{owner}: {exc}") from None


def parse_command_line(tokens: list[str], options_cls: type) -> tuple[list[str], dict[str, Any]]:
    """Split a command's tokens into positional arguments and ``--name value`` pairs for ``options_cls``.

    ``--name value``, ``--name=value``, aliases (``-k 10``); a bool field takes no separate value
    (``--flag`` = true, ``--no-flag`` = false, ``--flag=false``); other tokens are positional.
    """
    hints = typing.get_type_hints(options_cls)
    positional: list[str] = []
    values: dict[str, Any] = {}
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if not _is_flag(tok):
            positional.append(tok)
            i += 1
            continue
        key, eq, value = tok.partition("=")
        found = field_for(options_cls, key)
        takes_value = found is None or (found[1] is None and hints[found[0]] is not bool)
        if eq:
            values[key] = value
        elif not takes_value:
            values[key] = "true"
        elif i + 1 < len(tokens) and not _names_option(tokens[i + 1], options_cls):
            values[key] = tokens[i + 1]
            i += 1
        else:
            raise UsageError(f"option {key} needs a value")
        i += 1
    return positional, values


def options_from_command_line(options_cls: type, tokens: list[str], owner: str) -> Any:
    """``options_cls`` from a command's tokens: positional tokens fill the ``argument`` fields in order (a
    list field takes all of them), the rest as :func:`parse_command_line` splits them."""
    positional, values = parse_command_line(tokens, options_cls)
    hints = typing.get_type_hints(options_cls)
    for f in dataclasses.fields(options_cls):
        if not f.metadata.get("argument") or not positional:
            continue
        if typing.get_origin(hints[f.name]) in (list, tuple):
            values[f.name], positional = positional, []
        else:
            values[f.name], positional = positional[0], positional[1:]
    if positional:
        raise UsageError(f"{owner}: unexpected argument {positional[0]!r} (options look like --name value)")
    return build_options(options_cls, values, owner)


def _names_option(tok: str, options_cls: type) -> bool:
    """``tok`` starts another option (``--anything``, or a short name the option set declares); any other
    token after an option that takes a value is its value (``--drop-tokens -LRB-``, ``--smoothing -1``)."""
    if tok.startswith("--") and len(tok) > 2:
        return True
    return _is_flag(tok) and field_for(options_cls, tok) is not None


def _is_flag(tok: str) -> bool:
    """``--name`` or ``-k`` (a letter after one dash; ``-1`` is a value)."""
    return (tok.startswith("--") and len(tok) > 2) or (len(tok) > 1 and tok[0] == "-" and tok[1].isalpha())


def as_dict(options: Any) -> dict[str, Any]:
    return dataclasses.asdict(options) if dataclasses.is_dataclass(options) else {}


@dataclasses.dataclass
class NoOptions:
    """An empty option set."""
