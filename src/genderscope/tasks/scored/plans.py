"""Plans: how a scored benchmark's candidates are asked and read back, one plan per measurement.

A benchmark with the :class:`PlanScoring` mixin (e.g. every :class:`~.units.UnitBenchmark`) declares
``plans``: measurement name -> :class:`Plan`, in order of preference; its ``measurements`` are
:func:`measurements_of` them.  A plan builds the rounds of requests for the benchmark's items (each
attempt's ``meta[ITEM]`` names its item) and reads the answers back into a :class:`Readout`: per item and
candidate a score in nats (NaN: none), whether the item failed (an answer is missing: a request failed, was
skipped or was never asked) or came back unreadable, and the plan's own fields for attempts.jsonl.

The layer's plans: :class:`~.textplans.TextScores` (one ``token_logprobs`` or ``masked_logprobs`` request
per candidate text), :class:`~.maskdiff.DifferingTokens` (the tokens where two candidates differ, masked
together), :class:`~.top1.TopOne` (a masked LM's top-1 fill-in picks a candidate) and
:class:`~.given.GivenScores` (published per-item scores: no model).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar, Sequence

import numpy as np

from genderscope.core.metrics import Measurement
from genderscope.core.requests import Attempt, AttemptResult
from genderscope.core.rounds import Rounds
from genderscope.tasks.scored.items import ScoredItem, Scores, stack_fields

#: ``Attempt.meta`` key naming the item an attempt belongs to (absent: a probe of the model, no item's)
ITEM = "item"
#: ``Attempt.meta`` key: the candidate an attempt scores (its index)
CANDIDATE = "candidate"
#: exceptions that mark an answer as unreadable (a malformed response), not as a failed request
UNREADABLE = (KeyError, IndexError, TypeError, ValueError, AttributeError)


@dataclass
class Readout:
    """What a plan read from a run's answers, for the N items of the run and their K candidates: ``ll``
    (N × K scores in nats, NaN where there is none), ``n_tokens`` (N × K tokens scored), ``failed`` (N: an
    answer is missing), ``bad`` (N: an answer could not be read) and ``info`` (N dicts: the plan's fields of
    the item for attempts.jsonl, e.g. the top-1 token; items without any are left out: :meth:`of`)."""

    ll: np.ndarray
    n_tokens: np.ndarray
    failed: np.ndarray
    bad: np.ndarray
    info: dict[int, dict[str, Any]]

    @classmethod
    def blank(cls, n: int, k: int) -> "Readout":
        """N items of K candidates, nothing read yet."""
        return cls(np.full((n, k), np.nan), np.zeros((n, k)), np.zeros(n, bool), np.zeros(n, bool), {})

    def fail(self, i: int, bad: bool = False, **info: Any) -> None:
        """Mark item ``i`` failed (``bad``: unreadable instead), its scores NaN, with ``info``."""
        self.ll[i] = np.nan
        self.failed[i], self.bad[i] = not bad, bad
        self.info.setdefault(i, {}).update(info)

    def of(self, i: int) -> dict[str, Any]:
        """The plan's fields of item ``i`` ({} when it has none)."""
        return self.info.get(i, {})


class Plan(ABC):
    """One way of asking for candidate scores (see the module docstring); ``measurement``: the request
    kinds it needs (None: no model is asked)."""

    def __init__(self, measurement: Measurement | None):
        self.measurement = measurement

    @abstractmethod
    def rounds(self, task: Any) -> Rounds:
        """The rounds of requests for ``task.items()``."""

    @abstractmethod
    def read(self, task: Any, results: Sequence[AttemptResult]) -> Readout:
        """The items' scores from the run's results (every round, in order)."""

    def fields(self, rounds: Rounds, ar: AttemptResult) -> dict[str, Any]:
        """An attempt's fields in attempts.jsonl (default: the round that asked it as ``step``)."""
        return {"step": rounds.name_of(ar)}


def measurements_of(plans: dict[str, Plan]) -> dict[str, Measurement]:
    """A benchmark's ``measurements`` from its plans (those that ask a model), in order."""
    return {name: p.measurement for name, p in plans.items() if p.measurement is not None}


def by_item(results: Sequence[AttemptResult]) -> dict[str, list[AttemptResult]]:
    """The results of each item (``meta[ITEM]``), in run order; probes (no item) left out."""
    out: dict[str, list[AttemptResult]] = {}
    for ar in results:
        key = ar.attempt.meta.get(ITEM)
        if key is not None:
            out.setdefault(key, []).append(ar)
    return out


def item_attempt(item: ScoredItem, suffix: str, request: Any, **meta: Any) -> Attempt:
    """An attempt of ``item``: id ``<item id><suffix>``, trial 1, ``meta[ITEM]`` set."""
    return Attempt(f"{item.item_id}{suffix}", 1, request, {ITEM: item.item_id, **meta})


class PlanScoring:
    """Mixin for :class:`~.benchmark.ScoredBenchmark` (list it first): rounds, scores and records from the
    plan of the measurement the options name (:meth:`plan`)."""

    plans: ClassVar[dict[str, Plan]] = {}

    def plan(self) -> Plan:
        """The plan of this run's measurement (the value of ``measurement_option``)."""
        return self.plans[getattr(self.options, self.measurement_option)]  # type: ignore[attr-defined]

    def rounds(self) -> Rounds:
        return self.plan().rounds(self)

    def attempts(self) -> list[Attempt]:
        return self.rounds().first()

    def readout(self, results: Sequence[AttemptResult]) -> Readout:
        """The plan's reading of ``results``."""
        return self.plan().read(self, results)

    def scores(self, results: Sequence[AttemptResult]) -> tuple[Scores, list[ScoredItem], np.ndarray]:
        """The layer's contract: the items read whole (neither failed nor unreadable nor NaN), the others."""
        items, r = self.items(), self.readout(results)  # type: ignore[attr-defined]
        ok = ~(r.failed | r.bad | np.isnan(r.ll).any(axis=1))
        kept = [it for it, good in zip(items, ok) if good]
        s = Scores(r.ll[ok], r.n_tokens[ok], stack_fields(kept), kept)
        return s, [it for it, good in zip(items, ok) if not good], r.ll

    def _records(self, results: Sequence[AttemptResult], ll_all: np.ndarray) -> list[dict[str, Any]]:
        items = self.items()  # type: ignore[attr-defined]
        index = {it.item_id: i for i, it in enumerate(items)}
        out = []
        for ar in results:
            i = index.get(ar.attempt.meta.get(ITEM), -1)
            out.append(self.record(items[i], ll_all[i]) if i >= 0 and ar.ok else {})  # type: ignore[attr-defined]
        return out
