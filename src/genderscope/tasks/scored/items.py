"""What a scored benchmark declares per item, and the per-item scores the layer hands its metrics."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np


@dataclass(frozen=True)
class Choice:
    """Candidates that share a ``context``: each continuation is scored after it.  Whole sentences scored
    alone are a Choice with an empty context (each scored after the model's start token)."""

    context: str
    continuations: tuple[str, ...]

    def texts(self) -> list[str]:
        """Each candidate as one text (context + continuation): what a masked LM scores whole."""
        return [self.context + c for c in self.continuations]


@dataclass(frozen=True)
class ScoredItem:
    """One item: ``item_id`` (stable, unique in the task), its ``candidates`` and the ``fields`` its
    metrics read (labels, groups: a scalar each); ``cluster``: the resampling unit (default: the item)."""

    item_id: str
    candidates: Choice
    fields: Mapping[str, Any] = field(default_factory=dict)
    cluster: str | None = None


@dataclass
class Scores:
    """The scored items (failed ones left out), as arrays the metrics vectorise over.

    ``ll``: N × K candidate scores in nats (Σ ln p for ``loglik``, Σ pseudo-ln p for ``pll``; NaN where an
    item has fewer than K candidates); ``n_tokens``: N × K tokens scored; ``fields``: name -> length-N
    array of each item field; ``items``: the items themselves, in the same order."""

    ll: np.ndarray
    n_tokens: np.ndarray
    fields: dict[str, np.ndarray]
    items: list[ScoredItem]

    @property
    def n(self) -> int:
        return int(self.ll.shape[0])

    def subset(self, idx: np.ndarray) -> "Scores":
        """The scores of items ``idx`` (in that order)."""
        return Scores(
            self.ll[idx],
            self.n_tokens[idx],
            {k: v[idx] for k, v in self.fields.items()},
            [self.items[i] for i in idx],
        )

    def field(self, name: str) -> np.ndarray:
        """The length-N array of item field ``name``."""
        return self.fields[name]

    def mean_ll(self) -> np.ndarray:
        """Per-token mean score (N × K): ``ll / n_tokens``."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return self.ll / self.n_tokens

    def best(self, values: np.ndarray | None = None) -> np.ndarray:
        """Index of the highest-scoring candidate per item (first on ties, as numpy's argmax; NaN never
        wins)."""
        v = self.ll if values is None else values
        return np.nanargmax(np.where(np.isnan(v), -np.inf, v), axis=1)


def stack_fields(items: list[ScoredItem]) -> dict[str, np.ndarray]:
    """Item fields as arrays (name -> length-N array); every item must carry the same field names."""
    names = list(items[0].fields) if items else []
    return {k: np.asarray([it.fields[k] for it in items]) for k in names}
