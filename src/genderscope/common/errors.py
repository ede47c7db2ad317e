"""Errors that the CLI turns into one clear line and a non-zero exit code."""

from __future__ import annotations


class GenderscopeError(Exception):
    """Base class for user-facing errors. ``exit_code`` is what the CLI returns."""

    exit_code: int = 2


class UsageError(GenderscopeError):
    """Bad command-line input: unknown task, unknown model spec, bad option value."""


class UnsupportedKindError(UsageError):
    """A request of a kind the run's model does not answer (raised before anything is sent)."""


class DataError(GenderscopeError):
    """A dataset file is missing, corrupted (wrong sha256) or malformed."""


class BackendError(GenderscopeError):
    """A model backend failed in a way that retrying will not fix (auth, 4xx, bad model)."""


class MissingResponsesError(GenderscopeError):
    """A replay file lacks answers that the task needs (``answered``: how many of the asked it has)."""

    def __init__(self, message: str, answered: int | None = None):
        super().__init__(message)
        self.answered = answered
