"""Reading a benchmark's data file (JSON lines, tab-separated or CSV with a header): rows with their line
numbers, and one-line errors; :class:`JsonlBenchmark`, a scored benchmark whose items are the rows of one
such file."""

from __future__ import annotations

import csv
from abc import abstractmethod
from pathlib import Path
from typing import Any, Callable, ClassVar, Iterable, Iterator, Mapping, TypeVar

from genderscope.common.errors import DataError
from genderscope.core.textlines import json_lines
from genderscope.tasks.scored.benchmark import ScoredBenchmark
from genderscope.tasks.scored.items import ScoredItem

T = TypeVar("T")


def jsonl_rows(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` of each non-blank line, in file order; a line that is not a JSON object
    raises :class:`DataError` naming the file and line."""
    for lineno, row in json_lines(path, "not a JSON object; run genderscope data fetch"):
        if not isinstance(row, dict):
            raise DataError(f"{path}:{lineno}: not a JSON object; run genderscope data fetch")
        yield lineno, row


def tsv_rows(path: str | Path) -> Iterator[tuple[int, dict[str, str]]]:
    """``(line number, {column: field})`` of each non-blank line after the header line (fields split on
    tabs, no quoting); a line whose field count is not the header's raises :class:`DataError`."""
    with open(path, encoding="utf-8") as fh:
        header = fh.readline().rstrip("\n").split("\t")
        for lineno, line in enumerate(fh, start=2):
            parts = line.rstrip("\n").split("\t")
            if line.strip() and len(parts) != len(header):
                raise DataError(
                    f"{path}:{lineno}: {len(parts)} fields, not the header's {len(header)} ({header})"
                )
            if line.strip():
                yield lineno, dict(zip(header, parts))


def csv_rows(path: str | Path) -> Iterator[tuple[int, dict[str, str]]]:
    """``(line number, {column: field})`` of each record after the header (Python's ``csv`` module, RFC 4180
    quoting: a quoted field may span lines; the number is the record's first line); a record whose field
    count is not the header's, or a file the csv module or UTF-8 cannot read, raises :class:`DataError`."""
    with open(path, encoding="utf-8", newline="") as fh:
        reader = csv.reader(fh, strict=True)
        lineno = 1
        try:
            header = next(reader, [])
            lineno = reader.line_num + 1
            for parts in reader:
                if parts and len(parts) != len(header):
                    raise DataError(
                        f"{path}:{lineno}: {len(parts)} fields, not the header's {len(header)} ({header})"
                    )
                if parts:
                    yield lineno, dict(zip(header, parts))
                lineno = reader.line_num + 1
        except (csv.Error, UnicodeDecodeError) as exc:
            raise DataError(
                f"{path}:{lineno}: not readable as CSV ({exc}); run genderscope data fetch"
            ) from None


def each_row(
    path: str | Path,
    build: Callable[[int, dict[str, Any]], T],
    rows: Callable[[str | Path], Iterable[tuple[int, dict[str, Any]]]] = jsonl_rows,
) -> list[T]:
    """``build(line number, row)`` for every row of ``rows(path)`` (default: JSON lines); a missing field or
    bad value (KeyError, TypeError, ValueError, IndexError) raises :class:`DataError` naming the file, line
    and field."""
    out = []
    for lineno, row in rows(path):
        try:
            out.append(build(lineno, row))
        except KeyError as exc:
            raise DataError(f"{path}:{lineno}: missing field {exc}; run genderscope data fetch") from None
        except (TypeError, ValueError, IndexError) as exc:
            raise DataError(f"{path}:{lineno}: bad row ({exc}); run genderscope data fetch") from None
    return out


def require_text(row: Mapping[str, Any], keys: Iterable[str]) -> None:
    """A ValueError naming the first of ``keys`` whose field is missing, not a string or blank (for
    :func:`each_row`'s one-line error)."""
    for key in keys:
        if not isinstance(row.get(key), str) or not row[key].strip():
            raise ValueError(f"field {key!r} missing or empty")


class JsonlBenchmark(ScoredBenchmark):
    """A scored benchmark with one item per row of one JSON-lines registry file, in file order."""

    #: the registry name of the file
    data_file: ClassVar[str]

    @staticmethod
    @abstractmethod
    def item_of(lineno: int, row: dict[str, Any]) -> ScoredItem:
        """The item of one row (KeyError, TypeError, ValueError or IndexError for a bad row)."""

    def datasets(self) -> list[str]:
        return [self.data_file]

    def load_items(self) -> list[ScoredItem]:
        return each_row(self.ctx.data.path(self.data_file), self.item_of)
