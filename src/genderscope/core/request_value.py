"""The :class:`Request` value (one question to a model) and its canonical JSON, alone in a leaf module:
:mod:`genderscope.core.primitives` builds requests and :mod:`genderscope.core.requests` reads answers
through primitives, so neither imports the other for this class.  Import these names from
:mod:`genderscope.core.requests`, which re-exports them."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

JSON = Any
#: the kind names this module reads (every kind is declared in genderscope.core.primitives, which imports
#: this module to build requests; tests/core/test_primitives.py checks that the names agree)
CHAT, GENERATE, LOGLIKELIHOOD = "chat", "generate", "loglikelihood"


#: one encoder for every canonical text (``json.dumps`` with these settings builds a new one per call)
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def canonical_json(value: JSON) -> str:
    """Compact, key-sorted JSON: equal values always give equal text (the text of ``json.dumps(value,
    sort_keys=True, separators=(",", ":"), ensure_ascii=False)``)."""
    return _CANONICAL.encode(value)


@dataclass(frozen=True)
class Request:
    """One question to a model.

    ``kind`` names the request type (``"chat"``, ``"fill_mask"``, ...), ``payload`` holds
    everything that determines the answer (it is part of the cache key), ``hints`` holds
    things that do not (e.g. the multiple-choice tags a null model may pick from).
    """

    kind: str
    payload: dict[str, JSON]
    hints: dict[str, JSON] = field(default_factory=dict, compare=False, hash=False)

    def canonical(self) -> str:
        """Canonical JSON of kind + payload (computed once per request: the store key, the seed, the
        attempt hash and the store row all use it; requests are not changed after they are built)."""
        text = self.__dict__.get("_canonical")
        if text is None:
            text = canonical_json({"kind": self.kind, "payload": self.payload})
            object.__setattr__(self, "_canonical", text)
        return text

    @property
    def prompt_text(self) -> str | None:
        """Human-readable prompt: the last user message (chat), ``prompt`` (generate), else ``text``."""
        if self.kind == CHAT:
            msgs = self.payload.get("messages") or []
            return msgs[-1]["content"] if msgs else None
        if self.kind == LOGLIKELIHOOD:
            return f"{self.payload.get('context', '')} | " + " | ".join(self.payload.get("continuations", []))
        text = self.payload.get("prompt" if self.kind == GENERATE else "text")
        return text if isinstance(text, str) else None
