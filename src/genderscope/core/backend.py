"""The backend interface: one handler per request kind, routed by the base class.

A backend knows nothing about tasks.  It declares what it answers by decorating one method per
request kind with :func:`handles`::

    class EchoBackend(Backend):
        @handles(CHAT)
        def chat(self, jobs: list[Job], emit: Emit) -> None:
            for job in jobs:
                emit(job, Outcome(response=job.request.payload["messages"][-1]["content"]))

``request_kinds`` is derived from those declarations (never kept by hand).  :meth:`Backend.answer`
groups a batch's jobs by handler (first-appearance order, job order kept within a group), calls
:meth:`Backend.prepare` once with the kinds present, then each handler once with all of its jobs, so
a handler batches as it likes.  A method may handle several kinds (``@handles(A, B)``): it then gets
their jobs together in one call.  A job of a kind no handler declares raises
:class:`~genderscope.common.errors.UnsupportedKindError`, the one "cannot answer" error; the runner checks
kinds before sending anything (:func:`genderscope.core.runner.check_request_kinds`), so a run never
gets that far.

A handler must call ``emit(job, outcome)`` once per job, as soon as that answer exists, so the runner
can commit it to the store.  ``fingerprint`` (model identity + anything that changes answers) goes into
every cache key.  Register a backend with one line in ``genderscope/catalogue.py``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path
from typing import IO, Any, Callable, ClassVar, Iterator, Protocol, Sequence, TypeVar, runtime_checkable

from genderscope.common.errors import UnsupportedKindError
from genderscope.core.options import NoOptions
from genderscope.core.requests import Job, Outcome

Emit = Callable[[Job, Outcome], None]
#: a handler as declared: an unbound method (self, jobs of its kinds, emit)
Handler = Callable[[Any, list[Job], Emit], None]
_F = TypeVar("_F", bound=Callable[..., Any])
_MARK = "_genderscope_handles"


def handles(*kinds: str) -> Callable[[_F], _F]:
    """Declare the decorated method ``(self, jobs, emit)`` as the handler of ``kinds``."""
    if not kinds:
        raise TypeError("@handles needs at least one request kind")

    def mark(method: _F) -> _F:
        setattr(method, _MARK, tuple(kinds))
        return method

    return mark


class Backend(ABC):
    """Base class.  ``target`` is the part of the model spec after ``kind:``."""

    kind: ClassVar[str]
    description: ClassVar[str]
    Options: ClassVar[type] = NoOptions
    #: request kind -> handler, collected from the ``@handles`` methods of the class and its bases
    handlers: ClassVar[dict[str, Handler]] = {}
    #: the kinds of ``handlers`` (derived; read by the runner, the task/model matrix and tasks' ``auto``)
    request_kinds: ClassVar[frozenset[str]] = frozenset()
    #: whether answers go into the response store (False for cheap, deterministic backends)
    cacheable: ClassVar[bool] = True
    #: whether the target after ``kind:`` is required
    needs_target: ClassVar[bool] = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "request_kinds" in cls.__dict__ or "handlers" in cls.__dict__ or "answer" in cls.__dict__:
            raise TypeError(
                f"{cls.__name__}: declare one @handles(KIND) method per request kind; request_kinds, "
                "handlers and answer are derived by genderscope.core.backend.Backend"
            )
        found: dict[str, Handler] = {}
        for klass in reversed(cls.__mro__):  # a subclass's declaration of a kind wins
            for name, member in vars(klass).items():
                for kind in getattr(member, _MARK, ()):
                    found[kind] = getattr(cls, name)
        cls.handlers = found
        cls.request_kinds = frozenset(found)

    def __init__(self, target: str, options: Any):
        self.target = target
        self.options = options

    @classmethod
    def kinds_for(cls, target: str) -> frozenset[str]:
        """The request kinds this backend answers for model ``target``, told before anything loads: every
        declared kind, less those the target shows it cannot answer (an hf-causal model without a chat
        template does not chat); tasks choose their measurement and suites their tasks from it."""
        return cls.request_kinds

    @property
    @abstractmethod
    def fingerprint(self) -> str:
        """Identity of the model and of every setting that changes its answers."""

    def answer(self, jobs: Sequence[Job], emit: Emit) -> None:
        """Answer every job through the handler of its kind (see the module docstring).

        Retryable failures are retried inside a handler; a job that still fails gets
        ``Outcome(error=...)``.  Failures that no retry can fix (bad key, unknown model) raise
        :class:`~genderscope.common.errors.BackendError`.
        """
        groups: dict[Handler, list[Job]] = {}
        by_kind: dict[str, list[Job]] = {}  # kind -> its handler's group
        handlers = self.handlers
        for job in jobs:
            group = by_kind.get(job.request.kind)
            if group is None:
                handler = handlers.get(job.request.kind)
                if handler is None:
                    raise UnsupportedKindError(self.cannot_answer(job.request.kind))
                group = by_kind[job.request.kind] = groups.setdefault(handler, [])
            group.append(job)
        if not groups:
            return
        self.prepare(frozenset(by_kind))
        for handler, group in groups.items():
            handler(self, group, emit)

    def cannot_answer(self, kind: str) -> str:
        """The one message for a request kind this backend does not answer."""
        answers = ", ".join(sorted(self.request_kinds)) or "nothing"
        return f"{self.kind} models cannot answer {kind!r} requests (they answer {answers})"

    def prepare(self, kinds: frozenset[str]) -> None:  # noqa: B027 - optional hook, a no-op by default
        """Called once per :meth:`answer` before any handler, with the request kinds of the batch
        (load a model, probe a server)."""

    def describe(self) -> dict[str, Any]:
        """Model spec and settings for ``run.json`` (never secrets)."""
        from genderscope.core.options import as_dict

        return {
            "kind": self.kind,
            "target": self.target,
            "options": as_dict(self.options),
            "fingerprint": self.fingerprint,
        }

    def bind_store(self, store: Any) -> None:  # noqa: B027 - optional hook, a no-op by default
        """Called with the run's response store (None with ``--no-cache``) before the first ``answer``:
        a backend that keeps state between runs (the batch route's submitted jobs) records it there."""

    def stats(self) -> dict[str, Any]:
        """Counters for ``run.json`` (requests sent, retries, ...)."""
        return {}

    def close(self) -> None:  # noqa: B027 - optional hook, a no-op by default
        """Release resources (connections, models)."""


@runtime_checkable
class BatchFiles(Protocol):
    """A backend whose requests can go through a batch file run elsewhere (``genderscope batch write``
    / ``read``): each line carries a ``custom_id`` = the request's store key.  Such a backend is
    constructed with ``offline=True`` for files (no server is contacted, no API key needed)."""

    def write_batch(self, jobs: Sequence[Job], fh: IO[bytes]) -> list[str]:
        """Write one line per job; the custom ids written (UsageError for a kind with no batch form)."""
        ...

    def read_batch(self, path: Path) -> Iterator[tuple[str, Any]]:
        """(custom id, result line) per line of an output file (ValueError naming file:line if malformed)."""
        ...

    def batch_outcome(self, job: Job, line: Any) -> Outcome:
        """The outcome of ``job`` from its result line."""
        ...
