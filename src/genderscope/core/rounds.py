"""Questions asked in rounds: round n's requests are built from the answers of the rounds before it.

A task that must see answers before it can ask (tokenise first, then score the ids) declares its rounds
in order, each a named function from the answers so far (:class:`Answers`) to the next attempts::

    Rounds(Round("specials", ask_specials), Round("encode", ask_inputs), Round("fill", ask_fills))

:meth:`Rounds.first` is the task's ``attempts()``, :meth:`Rounds.next` its ``next_attempts(results)``.
Every attempt is stamped with its round's index (``Attempt.round``), so a round finds its own answers
without marker strings in ``meta``, and each attempt's ``meta`` holds only its own item.  The runner
asks every round through the response store, so a killed run resumes at any round and ``reparse``
(a replay of attempts.jsonl by item id and trial) replays every round.  A round that asks nothing ends
the run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from genderscope.core.requests import Attempt, AttemptResult


class Answers:
    """The results of the rounds asked so far, by round name (each in the order its round asked)."""

    def __init__(self, names: Sequence[str], results: Sequence[AttemptResult]):
        self._index = {name: i for i, name in enumerate(names)}
        self._by_round: list[list[AttemptResult]] = [[] for _ in names]
        for ar in results:
            self._by_round[ar.attempt.round].append(ar)

    def of(self, name: str) -> list[AttemptResult]:
        """The results of round ``name`` ([] when it has not been asked or asked nothing)."""
        return self._by_round[self._index[name]]

    def first(self, name: str) -> AttemptResult | None:
        """The first result of round ``name`` (e.g. a round that asks one question), or None."""
        got = self.of(name)
        return got[0] if got else None


@dataclass(frozen=True)
class Round:
    """One round: its ``name`` and ``ask``, which builds its attempts from the answers of earlier rounds."""

    name: str
    ask: Callable[[Answers], list[Attempt]]


class Rounds:
    """A task's rounds, in order (see the module docstring)."""

    def __init__(self, *rounds: Round):
        if not rounds:
            raise ValueError("Rounds needs at least one round")
        self.rounds = rounds
        self.names = [r.name for r in rounds]

    def first(self) -> list[Attempt]:
        """The attempts of round 0."""
        return self._ask(0, [])

    def next(self, results: Sequence[AttemptResult]) -> list[Attempt]:
        """The attempts of the round after the last one in ``results`` (every round's results, in order);
        [] after the last round."""
        if not results:
            return []
        n = results[-1].attempt.round + 1
        return self._ask(n, results) if n < len(self.rounds) else []

    def answers(self, results: Sequence[AttemptResult]) -> Answers:
        """``results`` (of any rounds asked so far) by round."""
        return Answers(self.names, results)

    def name_of(self, result: AttemptResult) -> str:
        """The name of the round that asked ``result``'s attempt."""
        return self.names[result.attempt.round]

    def _ask(self, n: int, results: Sequence[AttemptResult]) -> list[Attempt]:
        attempts = self.rounds[n].ask(self.answers(results))
        for a in attempts:
            a.round = n
        return attempts
