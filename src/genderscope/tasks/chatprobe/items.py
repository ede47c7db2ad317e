"""Probe items and prompts, and GenderBench's item subset rule."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Sequence


@dataclass(frozen=True)
class Prompt:
    """One prompt of an item: its text and what the evaluator needs to read its answers."""

    text: str
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ProbeItem:
    """One item: its prompts (each asked ``num_repetitions`` times) and what the metrics need."""

    prompts: tuple[Prompt, ...]
    meta: dict[str, Any] = field(default_factory=dict)


def sample_items(items: Sequence[ProbeItem], k: int | None, seed: int = 123) -> list[ProbeItem]:
    """GenderBench's ``Probe.sample``: ``random.seed(seed); random.sample(items, k)`` when ``k`` is set.

    This re-orders the items even when ``k`` equals their number; ``k`` larger than the number of items
    keeps them all, in order (GenderBench would raise).
    """
    if k is None or k > len(items):
        return list(items)
    return random.Random(seed).sample(list(items), k)
