"""Typed option sets for tasks and backends, parsed from ``--name value`` pairs.

An option set is a dataclass whose fields have defaults; ``opt()`` adds help text
and allowed choices.  The CLI passes unknown ``--flag value`` pairs to the task's
option set, so a task gains a command-line option by adding a field.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any

from genderscope.core.errors import UsageError


def opt(default: Any, help: str, choices: tuple[str, ...] | None = None) -> Any:
    """A dataclass field with help text (and optional choices) for the CLI and docs."""
    if isinstance(default, (list, dict, set)):
        return dataclasses.field(
            default_factory=lambda: type(default)(default), metadata={"help": help, "choices": choices}
        )
    return dataclasses.field(default=default, metadata={"help": help, "choices": choices})


def describe(options_cls: type) -> list[dict[str, Any]]:
    """Name, type, default, choices and help of every field (for ``tasks`` and ``--help``)."""
    hints = typing.get_type_hints(options_cls)
    out = []
    for f in dataclasses.fields(options_cls):
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()  # type: ignore[misc]
        out.append(
            {
                "name": f.name,
                "flag": "--" + f.name.replace("_", "-"),
                "type": _type_name(hints[f.name]),
                "default": default,
                "choices": f.metadata.get("choices"),
                "help": f.metadata.get("help", ""),
            }
        )
    return out


def _type_name(tp: Any) -> str:
    return getattr(tp, "__name__", None) or str(tp).replace("typing.", "")


def _convert(name: str, raw: Any, tp: Any, choices: tuple[str, ...] | None) -> Any:
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Union or origin is types.UnionType:
        non_none = [a for a in args if a is not type(None)]
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
        value = str(raw) if tp is str else raw
    except (TypeError, ValueError):
        raise UsageError(
            f"option --{name.replace('_', '-')}: cannot read {raw!r} as {_type_name(tp)}"
        ) from None
    if choices and value not in choices:
        raise UsageError(f"option --{name.replace('_', '-')}: {value!r} is not one of {', '.join(choices)}")
    return value


def build_options(options_cls: type, values: dict[str, Any], owner: str) -> Any:
    """Instantiate ``options_cls`` from ``values`` (strings or typed), checking names and types."""
    hints = typing.get_type_hints(options_cls)
    fields = {f.name: f for f in dataclasses.fields(options_cls)}
    kwargs = {}
    for key, raw in values.items():
        name = key.lstrip("-").replace("-", "_")
        if name not in fields:
            known = ", ".join("--" + n.replace("_", "-") for n in fields) or "none"
            raise UsageError(f"{owner} has no option --{name.replace('_', '-')} (its options: {known})")
        kwargs[name] = _convert(name, raw, hints[name], fields[name].metadata.get("choices"))
    try:
        return options_cls(**kwargs)
    except ValueError as exc:  # __post_init__ validation
        raise UsageError(f"{owner}: {exc}") from None


def as_dict(options: Any) -> dict[str, Any]:
    return dataclasses.asdict(options) if dataclasses.is_dataclass(options) else {}


@dataclasses.dataclass
class NoOptions:
    """An empty option set."""
