"""Reading a benchmark's JSON-lines data file: rows with their line numbers, and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Iterator, TypeVar

from genderscope.core.errors import DataError

T = TypeVar("T")


def jsonl_rows(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` of each non-blank line, in file order; a line that is not a JSON object
    raises :class:`DataError` naming the file and line."""
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DataError(
                    f"{path}:{lineno}: not a JSON object ({exc.msg}); run genderscope data fetch"
                ) from None
            if not isinstance(row, dict):
                raise DataError(f"{path}:{lineno}: not a JSON object; run genderscope data fetch")
            yield lineno, row


def each_row(path: str | Path, build: Callable[[int, dict[str, Any]], T]) -> list[T]:
    """``build(line number, row)`` for every row; a missing field or bad value (KeyError, TypeError,
    ValueError, IndexError) raises :class:`DataError` naming the file, line and field."""
    out = []
    for lineno, row in jsonl_rows(path):
        try:
            out.append(build(lineno, row))
        except KeyError as exc:
            raise DataError(f"{path}:{lineno}: missing field {exc}; run genderscope data fetch") from None
        except (TypeError, ValueError, IndexError) as exc:
            raise DataError(f"{path}:{lineno}: bad row ({exc}); run genderscope data fetch") from None
    return out
