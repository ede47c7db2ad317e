"""Robust GEST answer parser (GEST spec §4.2) — filled in by the parser work."""

from __future__ import annotations


def parse_robust(answer: str | None, ordering: tuple[str, str, str], option_texts: dict[str, str],
                 sentence: str) -> tuple[str | None, str]:
    """(option id or None, the rule that decided: R0…R7c)."""
    raise NotImplementedError
