"""The user-facing errors, defined in :mod:`genderscope.common.errors` (a leaf that ``data`` imports
too) and re-exported here, where most modules import them."""

from __future__ import annotations

from genderscope.common.errors import (
    BackendError,
    DataError,
    GenderscopeError,
    MissingResponsesError,
    UnsupportedKindError,
    UsageError,
)

__all__ = [
    "BackendError",
    "DataError",
    "GenderscopeError",
    "MissingResponsesError",
    "UnsupportedKindError",
    "UsageError",
]
