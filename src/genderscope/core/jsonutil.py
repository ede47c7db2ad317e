"""JSON helpers: NaN/inf -> null, numpy types -> Python types."""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def clean_json(value: Any) -> Any:
    """Recursively convert ``value`` into strict-JSON-safe Python objects."""
    t = type(value)
    if t is str or t is int or t is bool or value is None:  # fast path for the common leaves
        return value
    if isinstance(value, dict):
        return {str(k): clean_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean_json(v) for v in value]
    if isinstance(value, np.ndarray):
        return clean_json(value.tolist())
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        f = float(value)
        return None if (math.isnan(f) or math.isinf(f)) else f
    return value
