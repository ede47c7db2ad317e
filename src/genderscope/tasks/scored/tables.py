"""Tables a scored benchmark writes beside its metrics (results.json entries other than ``metrics``)."""

from __future__ import annotations

from typing import Any

#: the items an alignment table names at most
SHOWN = 50


def alignment_table(bad: list[str], rule: str) -> dict[str, Any]:
    """The items scored although their candidates do not line up as the benchmark expects (e.g. a sentence
    that is not its template filled in): how many, the first :data:`SHOWN` ids, and the ``rule`` in words."""
    return {"unaligned": len(bad), "unaligned_items": bad[:SHOWN], "rule": rule}
