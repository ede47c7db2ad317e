"""Drive a task's rounds with a fake answer function (for tests of task logic without a backend)."""

from __future__ import annotations

from typing import Any, Callable

from genderscope.core.requests import Attempt, AttemptResult


def answer_rounds(task: Any, answer: Callable[[Attempt], Any]) -> list[AttemptResult]:
    """Every round of ``task`` (``attempts()``, then ``next_attempts()``), each attempt answered by
    ``answer(attempt)``; an answer that is an Exception instance becomes that attempt's error."""
    results: list[AttemptResult] = []
    attempts = task.attempts()
    while attempts:
        for a in attempts:
            got = answer(a)
            if isinstance(got, Exception):
                results.append(AttemptResult(a, error=str(got)))
            else:
                results.append(AttemptResult(a, response=got))
        attempts = task.next_attempts(results)
    return results
