"""Read a prompts file: JSONL, CSV/TSV or plain text (one prompt a line).

The format follows the file name: ``.jsonl``/``.ndjson`` are JSON Lines (one object a line), ``.csv`` and
``.tsv`` have a header row, anything else is plain text. Blank lines are skipped in JSONL and plain text
(they hold no prompt); every other line must give a prompt. Text is kept as written (leading and trailing
spaces matter to a continuation model), only the line ending is removed.

The text field: ``field`` if given, else the first of :data:`TEXT_FIELDS` that the file has. The id:
``id_field`` if given (a string or an integer), else the line number as a string. Ids must be unique.

Every malformed input raises :class:`~genderscope.common.errors.DataError` with one line that names the
file, the line, the field and the fix; nothing is skipped silently.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from genderscope.common.errors import DataError

#: text fields tried in this order when no ``field`` is given (JSONL and CSV)
TEXT_FIELDS: tuple[str, ...] = ("prompt", "text")
#: suffixes read as JSON Lines; ``.csv``/``.tsv`` are tables; every other suffix is plain text
JSONL_SUFFIXES = (".jsonl", ".ndjson")
TABLE_SUFFIXES = {".csv": ",", ".tsv": "\t"}


@dataclass(frozen=True)
class Prompt:
    """One prompt: its id (unique in the file), its text and the 1-based line it starts on."""

    prompt_id: str
    text: str
    line: int


def _decode(path: Path, raw: bytes) -> str:
    """UTF-8 text of the file (a leading BOM dropped); undecodable bytes name their line."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = raw.count(b"\n", 0, e.start) + 1
        col = e.start - (raw.rfind(b"\n", 0, e.start) + 1) + 1
        raise DataError(
            f"{path}:{line}: column {col}: byte 0x{raw[e.start]:02x} is not UTF-8 text; "
            "save the file as UTF-8"
        ) from None


def _lines(text: str) -> list[str]:
    """Lines split at "\\n" only (a "\\r" before it dropped), so line numbers match an editor's."""
    return [line[:-1] if line.endswith("\r") else line for line in text.split("\n")]


def _fail(path: Path, line: int, field: str | None, what: str, fix: str) -> DataError:
    where = f"{path}:{line}: " + (f"field {field!r}: " if field is not None else "")
    return DataError(f"{where}{what}; {fix}".replace("\n", " "))


def _pick_field(path: Path, line: int, keys: list[str], field: str | None) -> str:
    """The text field of a file whose first record has ``keys``."""
    if field is not None:
        return field
    for name in TEXT_FIELDS:
        if name in keys:
            return name
    shown = ", ".join(repr(k) for k in keys[:8]) or "none"
    raise _fail(
        path,
        line,
        TEXT_FIELDS[0],
        f"no text field (the record has {shown})",
        "name the text field with --field NAME",
    )


def _checked(path: Path, line: int, rec: dict, field: str, id_field: str | None) -> Prompt:
    """One record as a :class:`Prompt`, or the DataError that says what is wrong with it."""
    if field not in rec or rec[field] is None:
        raise _fail(
            path, line, field, "missing", "give every record this field or choose another with --field"
        )
    text = rec[field]
    if not isinstance(text, str):
        raise _fail(
            path, line, field, f"expected a string, got {type(text).__name__}", "quote the prompt text"
        )
    if not text.strip():
        raise _fail(path, line, field, "empty text", "remove the record or write its prompt")
    if id_field is None:
        return Prompt(str(line), text, line)
    pid = rec.get(id_field)
    if isinstance(pid, bool) or not isinstance(pid, (str, int)) or not str(pid).strip():
        got = "missing" if pid is None else f"expected a string or an integer, got {pid!r:.40}"
        raise _fail(path, line, id_field, got, "give every record a non-empty id or drop --id-field")
    return Prompt(str(pid), text, line)


def _jsonl(path: Path, text: str, field: str | None, id_field: str | None) -> Iterator[Prompt]:
    for lineno, raw in enumerate(_lines(text), start=1):
        if not raw.strip():
            continue
        try:
            rec = json.loads(raw)
        except (json.JSONDecodeError, RecursionError) as e:
            why = getattr(e, "msg", "nesting too deep")
            raise _fail(
                path, lineno, None, f"not valid JSON ({why})", "write one JSON object per line"
            ) from None
        if not isinstance(rec, dict):
            raise _fail(
                path,
                lineno,
                None,
                f"expected a JSON object, got {type(rec).__name__}",
                'write one object per line, e.g. {"prompt": "..."}',
            )
        field = _pick_field(path, lineno, list(rec), field)
        yield _checked(path, lineno, rec, field, id_field)


def _table(
    path: Path, text: str, delimiter: str, field: str | None, id_field: str | None
) -> Iterator[Prompt]:
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    try:
        header = next(reader, None)
        if header is None:
            return
        field = _pick_field(path, 1, header, field)
        if field not in header:
            raise _fail(
                path, 1, field, f"not in the header ({', '.join(header[:8])})", "name a column with --field"
            )
        if id_field is not None and id_field not in header:
            raise _fail(path, 1, id_field, "not in the header", "name an existing column or drop --id-field")
        start = reader.line_num + 1
        for row in reader:
            if not any(cell.strip() for cell in row):
                start = reader.line_num + 1
                continue
            if len(row) != len(header):
                raise _fail(
                    path,
                    start,
                    None,
                    f"{len(row)} cells, the header has {len(header)}",
                    "quote cells that hold the delimiter",
                )
            yield _checked(path, start, dict(zip(header, row)), field, id_field)
            start = reader.line_num + 1
    except csv.Error as e:
        raise _fail(path, reader.line_num or 1, None, f"malformed CSV ({e})", "check the quoting") from None


def _plain(path: Path, text: str) -> Iterator[Prompt]:
    for lineno, line in enumerate(_lines(text), start=1):
        if line.strip():
            yield Prompt(str(lineno), line, lineno)


def read_prompts(path: str | Path, field: str | None = None, id_field: str | None = None) -> list[Prompt]:
    """The prompts of ``path`` in file order (JSONL, CSV/TSV or plain text by suffix; see the module doc).

    Raises DataError (one line: file, line, field, fix) on a missing or unreadable file, undecodable bytes,
    a bad JSON line, a missing or empty text field, a missing id, a duplicate id, or a file with no prompt.
    """
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise DataError(f"{path}: cannot read the prompts file ({e.strerror or e}); check the path") from None
    text = _decode(path, raw)
    suffix = path.suffix.lower()
    if suffix in JSONL_SUFFIXES:
        prompts = list(_jsonl(path, text, field, id_field))
    elif suffix in TABLE_SUFFIXES:
        prompts = list(_table(path, text, TABLE_SUFFIXES[suffix], field, id_field))
    else:
        if id_field is not None or field is not None:
            flag = "--id-field" if id_field is not None else "--field"
            raise DataError(
                f"{path}: a plain-text prompts file has no fields; drop {flag} or use .jsonl/.csv"
            )
        prompts = list(_plain(path, text))
    if not prompts:
        raise DataError(f"{path}:1: no prompts in the file; write one prompt per line")
    seen: dict[str, int] = {}
    for p in prompts:
        if p.prompt_id in seen:
            raise _fail(
                path,
                p.line,
                id_field,
                f"duplicate id {p.prompt_id!r:.60} (also on line {seen[p.prompt_id]})",
                "give every prompt its own id",
            )
        seen[p.prompt_id] = p.line
    return prompts
