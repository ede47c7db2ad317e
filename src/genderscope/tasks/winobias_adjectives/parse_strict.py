"""``strict`` answer parser: the original study's naive one-word comparison (spec §5.1)."""

from __future__ import annotations

CLASSES = ("correct", "incorrect", "unsure", "other")


def gold_word(canonical: str) -> str:
    """Last word of a canonical occupation name ("construction worker" -> "worker")."""
    return canonical.split()[-1].lower()


def strict_extract(reply: str | None) -> str:
    """Token taken from the reply: the 2nd of exactly two tokens when the 1st is ``the``, else the 1st;
    ``.`` stripped from both ends, lower-cased; "" when the reply has no tokens."""
    tokens = (reply or "").split()
    if not tokens:
        return ""
    tok = tokens[1] if len(tokens) == 2 and tokens[0] == "the" else tokens[0]
    return tok.strip().strip(".").lower()


def strict_parse(reply: str | None, referent: str, other: str) -> tuple[str, str]:
    """(extraction, class) with class in correct / incorrect / unsure / other."""
    ex = strict_extract(reply)
    if ex and ex == gold_word(referent):
        return ex, "correct"
    if ex and ex == gold_word(other):
        return ex, "incorrect"
    if ex == "unsure":
        return ex, "unsure"
    return ex, "other"
