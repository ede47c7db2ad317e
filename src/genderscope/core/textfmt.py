"""Numbers as short text, shared by the report, the terminal summaries and the verdict sentences."""

from __future__ import annotations

import json
import math
from typing import Any

#: a float this close to zero is rounding noise of a difference (e.g. 0.1 + 0.2 − 0.3): shown and
#: written as 0
FLOAT_NOISE = 1e-12


def snap_zero(x: float) -> float:
    """``x``, or 0.0 when it is within :data:`FLOAT_NOISE` of zero."""
    return 0.0 if abs(x) < FLOAT_NOISE else x


def fmt(x: Any, digits: int = 3) -> str:
    """A cell value as text: numbers to ``digits`` significant digits (integer part kept whole, exponent
    only below 1e-4 or from 1e6 on), None/NaN as '–', short numeric lists as '[a, b]', other lists as JSON."""
    if x is None:
        return "–"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, int):
        return str(x)
    if isinstance(x, float):
        if math.isnan(x) or math.isinf(x):
            return "–" if math.isnan(x) else ("∞" if x > 0 else "−∞")
        if abs(x) < FLOAT_NOISE:
            return "0"
        if abs(x) >= 1e6 or abs(x) < 1e-4:
            return f"{x:.{max(digits - 1, 1)}e}"
        if abs(x) >= 10**digits:
            return f"{x:.0f}"
        return f"{x:.{digits}g}"
    if (
        isinstance(x, list)
        and 0 < len(x) <= 8
        and all(v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)) for v in x)
    ):
        return "[" + ", ".join(fmt(v, digits) for v in x) + "]"
    if isinstance(x, (list, dict)):
        text = json.dumps(x, ensure_ascii=False)
        return text if len(text) <= 200 else text[:199] + "…"
    return str(x)
