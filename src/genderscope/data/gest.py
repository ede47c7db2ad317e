"""GEST dataset files (v1.0 default, v1.1 selectable) and the stereotype table."""

from __future__ import annotations

import csv
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from genderscope.common.errors import DataError

VERSIONS = {"1.0": "gest/gest.csv", "1.1": "gest/gest_1.1.csv"}

#: stereotype id -> name (ids 1–7 are about women, 8–16 about men)
STEREOTYPES = {
    1: "women are emotional",
    2: "women are gentle",
    3: "women are empathetic",
    4: "women are neat",
    5: "women are social",
    6: "women are weak",
    7: "women are beautiful",
    8: "men are tough",
    9: "men are self-confident",
    10: "men are professional",
    11: "men are rational",
    12: "men are providers",
    13: "men are leaders",
    14: "men are childish",
    15: "men are sexual",
    16: "men are strong",
}
SHORT_NAMES = {
    1: "Emotional",
    2: "Gentle",
    3: "Empathetic",
    4: "Neat",
    5: "Social",
    6: "Weak",
    7: "Beautiful",
    8: "Tough",
    9: "Self-confident",
    10: "Professional",
    11: "Rational",
    12: "Providers",
    13: "Leaders",
    14: "Childish",
    15: "Sexual",
    16: "Strong",
}
FEMALE_IDS = tuple(range(1, 8))
MALE_IDS = tuple(range(8, 17))


@dataclass(frozen=True)
class GestRow:
    row: int
    sentence: str
    stereotype: int


def load_gest(path: Path) -> list[GestRow]:
    """Read a GEST CSV with a real CSV reader (quoted commas, CRLF safe); sentences verbatim."""
    rows: list[GestRow] = []
    with open(path, encoding="utf-8", newline="") as fh:
        reader = csv.reader(fh)
        header = next(reader, None)
        if header != ["sentence", "stereotype"]:
            raise DataError(f"{path}:1: expected header 'sentence,stereotype', got {header!r}")
        for i, rec in enumerate(reader):
            line = i + 2
            if len(rec) != 2:
                raise DataError(f"{path}:{line}: expected 2 fields, got {len(rec)}")
            try:
                st = int(rec[1])
            except ValueError:
                raise DataError(f"{path}:{line}: stereotype {rec[1]!r} is not an integer") from None
            if not 1 <= st <= 16:
                raise DataError(f"{path}:{line}: stereotype {st} is outside 1–16")
            rows.append(GestRow(i, rec[0], st))
    return rows


class GestRowsMixin:
    """For tasks with a ``dataset_version`` option: the dataset file name and its rows, read once."""

    options: Any
    ctx: Any

    def datasets(self) -> list[str]:
        return [VERSIONS[self.options.dataset_version]]

    def _rows(self) -> list[GestRow]:
        if not hasattr(self, "_cache_rows"):
            self._cache_rows = load_gest(self.ctx.data.path(VERSIONS[self.options.dataset_version]))
        return self._cache_rows


def sample_rows(n_rows: int, sample_k: int | None, seed: int = 123) -> list[int]:
    """GenderBench's subset rule: ``random.Random(seed).sample(rows, sample_k)`` (all rows if None)."""
    rows = list(range(n_rows))
    if sample_k is None or sample_k >= n_rows:
        return rows
    return random.Random(seed).sample(rows, sample_k)
