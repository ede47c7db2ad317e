"""One frozen :class:`RunSpec`: everything that decides what a run measures, built once.

The CLI (``genderscope run``), the Python API (``genderscope.run``) and library callers
(:func:`genderscope.core.engine.run_tasks`) all build a :class:`RunSpec` with :meth:`RunSpec.build`:
suites are expanded, ``--name value`` pairs are routed to the task(s) and backend that have that field,
and each option set is built as its typed ``Options`` dataclass (so a bad name or value fails here, before
anything loads) and kept as its full field values. run.json stores the spec verbatim (``"spec"``), so
``genderscope run --spec run.json`` (:func:`load_spec`) repeats the run.

What a spec leaves out does not change a number: where the files go (``--out``), the progress bar, the
response store's path.

**The run seed** (``--seed``, default :data:`DEFAULT_SEED`) is the only seed a run has; each purpose
reads its own part through :func:`derive_seeds` (``RunContext.seeds``). The random model's own seed
(``random:SEED`` / ``--null-seed``) is a model option, not part of it.
"""

from __future__ import annotations

import dataclasses
import json
import types
from pathlib import Path
from typing import Any, Mapping, Sequence

from genderscope.common.errors import UsageError
from genderscope.core.seeds import DEFAULT_SEED, Seeds, derive_seeds

#: version of the ``spec`` object's layout (run.json's ``"spec"``)
SPEC_VERSION = 1

#: the largest --trials (repetitions per prompt) a run accepts
MAX_TRIALS = 10_000


def check_run_values(
    *, trials: Any, limit: Any, seed: Any, temperature: Any = None, max_tokens: Any = None
) -> None:
    """One :class:`UsageError` line for a bad ``--trials``, ``--limit``, ``--seed``, ``--temperature`` or
    ``--max-tokens`` (None: the task's default), before any data or model is loaded."""
    from genderscope.core import validate

    validate.whole_number(
        "--trials", trials, maximum=MAX_TRIALS, fix="repetitions per prompt; omit it for the task's default"
    )
    validate.whole_number("--limit", limit, fix="the number of items to evaluate; omit it for all items")
    validate.whole_number("--seed", seed, minimum=0, maximum=2**63 - 1, fix="e.g. --seed 123")
    validate.real_number(
        "--temperature", temperature, minimum=0, fix="0 = greedy; omit it for the task's default"
    )
    validate.whole_number("--max-tokens", max_tokens, fix="new tokens per answer; omit it for the default")


def split_options(
    task_classes: Sequence[type], backend_cls: type, values: Mapping[str, Any]
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Route ``--name value`` pairs to every task that has the option, else to the backend (a name as
    :func:`~genderscope.core.options.field_for` reads it: ``--name``, an alias, ``--no-name`` for a bool)."""
    from genderscope.core.options import field_for

    per_task: list[dict[str, Any]] = [{} for _ in task_classes]
    backend_vals: dict[str, Any] = {}
    for key, val in values.items():
        name = key.lstrip("-").replace("-", "_")
        hit = False
        for i, cls in enumerate(task_classes):
            if field_for(cls.Options, key) is not None:
                per_task[i][key] = val
                hit = True
        if field_for(backend_cls.Options, key) is not None:
            backend_vals[key] = val
            hit = True
        if not hit:
            names = ", ".join(c.name for c in task_classes)
            raise UsageError(
                f"no task ({names}) and no {backend_cls.kind} backend option is called "
                f"--{name.replace('_', '-')}; see `genderscope tasks --options` and "
                "`genderscope run --help`"
            )
    return per_task, backend_vals


def _freeze(value: Any) -> Any:
    """A JSON value made immutable: lists -> tuples, objects -> read-only mappings."""
    if isinstance(value, Mapping):
        return types.MappingProxyType({str(k): _freeze(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    return value


def _thaw(value: Any) -> Any:
    """:func:`_freeze` undone: plain dicts and lists (for JSON)."""
    if isinstance(value, Mapping):
        return {k: _thaw(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [_thaw(v) for v in value]
    return value


def _json_values(options: Any) -> dict[str, Any]:
    """A built option set's fields as JSON values (paths as strings, tuples as lists)."""
    from genderscope.core.jsonutil import clean_json
    from genderscope.core.options import as_dict

    return json.loads(json.dumps(clean_json(as_dict(options)), default=str))


@dataclasses.dataclass(frozen=True)
class RunSpec:
    """What a run measures: tasks (or suites) as named, the model spec, the run's numbers and every option
    of each task and of the backend (all fields, typed when built; see the module docstring).

    ``task_options``: task name (after suite expansion) -> its ``Options`` fields; ``backend_options``:
    the backend's ``Options`` fields. A task missing from ``task_options`` runs with its defaults.
    """

    tasks: tuple[str, ...]
    model: str = "random"
    trials: int | None = None
    limit: int | None = None
    seed: int = DEFAULT_SEED
    temperature: float | None = None
    max_tokens: int | None = None
    use_cache: bool = True
    label: str | None = None
    task_options: Mapping[str, Mapping[str, Any]] = dataclasses.field(default_factory=dict)
    backend_options: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "tasks", tuple(self.tasks))
        set_(self, "task_options", _freeze(self.task_options))
        set_(self, "backend_options", _freeze(self.backend_options))

    @property
    def seeds(self) -> Seeds:
        """The per-purpose seeds (:func:`derive_seeds`)."""
        return derive_seeds(self.seed)

    @property
    def generation(self) -> dict[str, Any]:
        """The sampling overrides the run sets (``temperature``, ``max_tokens``)."""
        pairs = (("temperature", self.temperature), ("max_tokens", self.max_tokens))
        return {k: v for k, v in pairs if v is not None}

    @classmethod
    def build(
        cls,
        tasks: str | Sequence[str],
        model: str = "random",
        *,
        options: Mapping[str, Any] | None = None,
        **fields: Any,
    ) -> RunSpec:
        """The spec of running ``tasks`` on ``model``: ``options`` (``--name value`` pairs, strings or
        typed values) routed and built as each task's and the backend's typed options; ``fields``: the
        other fields (``trials``, ``limit``, ``seed``, ``temperature``, ``max_tokens``, ``use_cache``,
        ``label``). One :class:`UsageError` line on any bad name or value."""
        from genderscope.core import lookup
        from genderscope.core.options import build_options
        from genderscope.core.suites import expand

        names = [tasks] if isinstance(tasks, str) else list(tasks)
        if not names:
            raise UsageError("name at least one task or suite (see `genderscope tasks`)")
        spec = cls(tuple(names), model, **fields)
        check_run_values(
            trials=spec.trials, limit=spec.limit, seed=spec.seed,
            temperature=spec.temperature, max_tokens=spec.max_tokens,
        )
        kind, target, backend_cls = lookup.resolve_model(model)
        suites = expand(names, backend_cls.kinds_for(target), kind, backend_cls.request_kinds)
        classes = [lookup.task_class(t) for t in suites.tasks]
        task_vals, backend_vals = split_options(classes, backend_cls, {**suites.options, **(options or {})})
        typed = {c.name: build_options(c.Options, v, f"task {c.name!r}") for c, v in zip(classes, task_vals)}
        backend = build_options(backend_cls.Options, backend_vals, f"model kind {kind!r}")
        built = dataclasses.replace(
            spec,
            task_options={n: _json_values(o) for n, o in typed.items()},
            backend_options=_json_values(backend),
        )
        # hand the typed options on, so that the engine does not build them (nor parse the model) again
        hand_on = TypedOptions(
            classes, list(typed.values()), backend_cls, backend, suites.left_out, suites.from_suites,
            kind, target,
        )
        object.__setattr__(built, "_typed", hand_on)
        return built

    def to_json(self) -> dict[str, Any]:
        """The spec as run.json stores it (``"spec"``)."""
        out: dict[str, Any] = {"spec_version": SPEC_VERSION}
        for f in dataclasses.fields(self):
            out[f.name] = _thaw(getattr(self, f.name))
        return out

    @classmethod
    def from_json(cls, data: Any, source: str = "run spec") -> RunSpec:
        """A spec from its JSON object; one :class:`UsageError` line naming ``source`` and the field for
        an unknown field or a value of the wrong type."""
        if not isinstance(data, dict):
            raise UsageError(f"{source}: a run spec is a JSON object, got {type(data).__name__}")
        version = data.get("spec_version", SPEC_VERSION)
        if version != SPEC_VERSION:
            raise UsageError(
                f"{source}: field 'spec_version' is {version!r}; this genderscope reads version "
                f"{SPEC_VERSION}"
            )
        known = {f.name: f for f in dataclasses.fields(cls)}
        for key in data:
            if key != "spec_version" and key not in known:
                raise UsageError(
                    f"{source}: unknown field {key!r} in the run spec (its fields: {', '.join(known)})"
                )
        if "tasks" not in data:
            raise UsageError(f"{source}: the run spec needs field 'tasks' (a list of task or suite names)")
        values = {k: _checked(source, k, v) for k, v in data.items() if k != "spec_version"}
        return cls(**values)


def _whole(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


#: field -> (what a value must be, test)
_FIELD_TYPES: dict[str, tuple[str, Any]] = {
    "tasks": (
        "a non-empty list of task or suite names",
        lambda v: isinstance(v, list) and bool(v) and all(isinstance(x, str) and x for x in v),
    ),
    "model": ("a model spec string, e.g. \"random\"", lambda v: isinstance(v, str) and bool(v)),
    "trials": ("a whole number or null", lambda v: v is None or _whole(v)),
    "limit": ("a whole number or null", lambda v: v is None or _whole(v)),
    "seed": ("a whole number", _whole),
    "temperature": (
        "a number or null",
        lambda v: v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)),
    ),
    "max_tokens": ("a whole number or null", lambda v: v is None or _whole(v)),
    "use_cache": ("true or false", lambda v: isinstance(v, bool)),
    "label": ("a string or null", lambda v: v is None or isinstance(v, str)),
    "task_options": (
        "an object: task name -> an object of its options",
        lambda v: isinstance(v, dict) and all(isinstance(o, dict) for o in v.values()),
    ),
    "backend_options": ("an object of the model's options", lambda v: isinstance(v, dict)),
}


def _checked(source: str, key: str, value: Any) -> Any:
    want, ok = _FIELD_TYPES[key]
    if not ok(value):
        raise UsageError(f"{source}: field {key!r} must be {want}, got {json.dumps(value)[:60]}")
    return value


def load_spec(path: str | Path) -> RunSpec:
    """The spec in ``path``: a run folder's run.json (its ``"spec"``), a run folder, or a spec alone; one
    :class:`UsageError` line (file, field, fix) when it cannot be read or its options are not valid."""
    path = Path(path)
    if path.is_dir():
        path = path / "run.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"--spec {path}: no such file (give a run's run.json or a spec file)") from None
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise UsageError(f"--spec {path}: not a JSON file ({exc})") from None
    if isinstance(data, dict) and "tasks" in data and "spec" not in data and isinstance(data["tasks"], dict):
        raise UsageError(
            f"--spec {path}: this run.json records no run spec (written before run specs existed); "
            "repeat that run with its command line"
        )
    inner = data.get("spec") if isinstance(data, dict) and "spec" in data else data
    spec = RunSpec.from_json(inner, str(path))
    try:
        check_run_values(
            trials=spec.trials, limit=spec.limit, seed=spec.seed,
            temperature=spec.temperature, max_tokens=spec.max_tokens,
        )
        typed_options(spec)
    except UsageError as exc:
        raise UsageError(f"{path}: {exc}") from None
    return spec


@dataclasses.dataclass
class TypedOptions:
    """A spec's options built as their dataclasses, with the suite expansion they belong to."""

    task_classes: list[type]
    task_options: list[Any]
    backend_cls: type
    backend_options: Any
    #: tasks of a suite that the model cannot run -> why (not run)
    left_out: dict[str, str]
    #: tasks that came from a suite (not named on their own)
    from_suites: set[str]
    #: the model spec, parsed once: its kind and target
    kind: str = ""
    target: str = ""


def typed_options(spec: RunSpec) -> TypedOptions:
    """Expand ``spec.tasks`` for its model and build every option set it records (a task the spec records
    no options for gets its defaults); one :class:`UsageError` line naming the task or option."""
    from genderscope.core import lookup
    from genderscope.core.suites import expand

    handed_on = getattr(spec, "_typed", None)
    if handed_on is not None:  # built by RunSpec.build: the same options, already typed
        return handed_on
    kind, target, backend_cls = lookup.resolve_model(spec.model)
    suites = expand(list(spec.tasks), backend_cls.kinds_for(target), kind, backend_cls.request_kinds)
    extra = sorted(set(spec.task_options) - set(suites.tasks))
    if extra:
        raise UsageError(
            f"field 'task_options' names task {extra[0]!r}, which this run ({', '.join(suites.tasks)}) "
            "does not run"
        )
    classes = [lookup.task_class(t) for t in suites.tasks]
    recorded = {name: _thaw(values) for name, values in spec.task_options.items()}
    opts = [
        _built(c.Options, recorded.get(c.name, {}), f"task {c.name!r}", f"task_options.{c.name}")
        for c in classes
    ]
    owner = f"model kind {kind!r}"
    backend = _built(backend_cls.Options, _thaw(spec.backend_options), owner, "backend_options")
    left_out, from_suites = suites.left_out, suites.from_suites
    return TypedOptions(classes, opts, backend_cls, backend, left_out, from_suites, kind, target)


def _built(options_cls: type, values: dict[str, Any], owner: str, field: str) -> Any:
    """:func:`~genderscope.core.options.build_options`, its error naming the spec's field."""
    from genderscope.core.options import build_options

    try:
        return build_options(options_cls, values, owner)
    except UsageError as exc:
        raise UsageError(f"field {field!r}: {exc}") from None
