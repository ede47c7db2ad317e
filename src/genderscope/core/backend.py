"""The backend interface: answer a batch of jobs, reporting each answer as it arrives.

A backend knows nothing about tasks.  It declares the request kinds it answers
(``request_kinds``) and a ``fingerprint`` (model identity + anything that changes
answers) that goes into every cache key.  ``answer`` must call ``emit(job, outcome)``
once per job, as soon as that answer exists, so the runner can commit it to the store.
Register a backend with one line in ``genderscope/registry.py``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Callable, ClassVar, Sequence

from genderscope.core.options import NoOptions
from genderscope.core.requests import Job, Outcome

Emit = Callable[[Job, Outcome], None]


class Backend(ABC):
    """Base class.  ``target`` is the part of the model spec after ``kind:``."""

    kind: ClassVar[str]
    description: ClassVar[str]
    Options: ClassVar[type] = NoOptions
    request_kinds: ClassVar[frozenset[str]] = frozenset()
    #: whether answers go into the response store (False for cheap, deterministic backends)
    cacheable: ClassVar[bool] = True
    #: whether the target after ``kind:`` is required
    needs_target: ClassVar[bool] = True

    def __init__(self, target: str, options: Any):
        self.target = target
        self.options = options

    @property
    @abstractmethod
    def fingerprint(self) -> str:
        """Identity of the model and of every setting that changes its answers."""

    @abstractmethod
    def answer(self, jobs: Sequence[Job], emit: Emit) -> None:
        """Answer every job, calling ``emit`` once per job as its answer arrives.

        Retryable failures are retried inside; a job that still fails gets
        ``Outcome(error=...)``.  Failures that no retry can fix (bad key, unknown
        model) raise :class:`~genderscope.core.errors.BackendError`.
        """

    def describe(self) -> dict[str, Any]:
        """Model spec and settings for ``run.json`` (never secrets)."""
        from genderscope.core.options import as_dict

        return {
            "kind": self.kind,
            "target": self.target,
            "options": as_dict(self.options),
            "fingerprint": self.fingerprint,
        }

    def stats(self) -> dict[str, Any]:
        """Counters for ``run.json`` (requests sent, retries, ...)."""
        return {}

    def close(self) -> None:  # noqa: B027 - optional hook, a no-op by default
        """Release resources (connections, models)."""
