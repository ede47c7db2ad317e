"""JSON helpers: NaN/inf -> null, numpy types -> Python types; shared record fields with cached JSON."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np


def clean_json(value: Any) -> Any:
    """Recursively convert ``value`` into strict-JSON-safe Python objects."""
    t = type(value)
    if t is str or t is int or t is bool or value is None:  # fast path for the common leaves
        return value
    if isinstance(value, dict):
        return {str(k): clean_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean_json(v) for v in value]
    if isinstance(value, np.ndarray):
        return clean_json(value.tolist())
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        f = float(value)
        return None if (math.isnan(f) or math.isinf(f)) else f
    return value


#: the encoder ``attempts.jsonl`` lines are written with (strict JSON, UTF-8 kept)
encode_json = json.JSONEncoder(ensure_ascii=False, allow_nan=False).encode


class SharedFields(dict):
    """Record fields shared by many attempt records (one item's fields, one parse result).

    Treat as read-only once built: :meth:`members` caches the JSON text.
    """

    __slots__ = ("_members",)

    def members(self, avoid: frozenset[str] = frozenset()) -> str | None:
        """``encode_json(self)`` without the braces (cached); None if a key is in ``avoid``."""
        try:
            cached_avoid, text = self._members
            if cached_avoid is avoid:
                return text
        except AttributeError:
            pass
        text = encode_json(self)[1:-1] if avoid.isdisjoint(self) else None
        self._members = (avoid, text)
        return text


class JoinedRecord(Mapping[str, Any]):
    """A task's fields for one attempt record: a read-only merge of :class:`SharedFields` parts with
    disjoint keys, without copying them; :meth:`json_members` joins their cached JSON text, so
    ``attempts.jsonl`` is written without re-encoding fields shared by many records."""

    __slots__ = ("parts",)

    def __init__(self, *parts: SharedFields):
        self.parts = parts

    def __getitem__(self, key: str) -> Any:
        for p in self.parts:
            if key in p:
                return p[key]
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        for p in self.parts:
            yield from p

    def __len__(self) -> int:
        return sum(len(p) for p in self.parts)

    def json_members(self, avoid: frozenset[str] = frozenset()) -> str | None:
        """The fields as JSON object members (no braces), or None if a key is in ``avoid``."""
        texts = [p.members(avoid) for p in self.parts]
        if None in texts:
            return None
        return ", ".join(t for t in texts if t)
