"""Checks of option values made before any work starts: one :class:`UsageError` line naming the option,
the value and the fix.

The CLI and the Python API call them with the option's command-line name (``--limit``), so the
message reads the same from both.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

from genderscope.common.errors import UsageError


def whole_number(
    option: str, value: Any, *, minimum: int | None = 1, maximum: int | None = None, fix: str = ""
) -> int | None:
    """``value`` as an int within [minimum, maximum] (None passes: the default applies)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        try:
            as_float = float(value)
        except (TypeError, ValueError):
            as_float = math.nan
        if not as_float.is_integer():
            raise UsageError(f"{option} {value!r}: give a whole number{_range(minimum, maximum)}{_fix(fix)}")
        value = int(as_float)
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        raise UsageError(f"{option} {value}: give a whole number{_range(minimum, maximum)}{_fix(fix)}")
    return value


def real_number(
    option: str, value: Any, *, minimum: float | None = None, maximum: float | None = None, fix: str = ""
) -> float | None:
    """``value`` as a finite float within [minimum, maximum] (None passes)."""
    if value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = math.nan
    if not math.isfinite(number) or isinstance(value, bool):
        raise UsageError(f"{option} {value!r}: give a finite number{_range(minimum, maximum)}{_fix(fix)}")
    if (minimum is not None and number < minimum) or (maximum is not None and number > maximum):
        raise UsageError(f"{option} {value!r}: give a number{_range(minimum, maximum)}{_fix(fix)}")
    return number


def _range(minimum: float | None, maximum: float | None) -> str:
    if minimum is not None and maximum is not None:
        return f" from {_number(minimum)} to {_number(maximum)}"
    if minimum is not None:
        return f" ≥ {_number(minimum)}"
    if maximum is not None:
        return f" ≤ {_number(maximum)}"
    return ""


def _number(x: float) -> str:
    """A bound as people write it: 1,000,000; 2^63 - 1; 0.5."""
    if x == 2**63 - 1:
        return "2^63 - 1"
    if isinstance(x, int) or float(x).is_integer():
        return f"{int(x):,}"
    return f"{x:g}"


def _fix(fix: str) -> str:
    """The fix or the option's meaning, after the rule: in parentheses, or after '; ' if it has some."""
    if not fix:
        return ""
    return f"; {fix}" if "(" in fix else f" ({fix})"


def writable_path(option: str, path: str | Path, *, folder: bool) -> Path:
    """Check that ``path`` can become an output folder (``folder``) or file: no existing file (folder) or
    folder (file) of that name, no file above it, a name the file system accepts, a writable parent."""
    p = Path(path)
    what = "folder" if folder else "file"
    if str(path).strip() == "":
        raise UsageError(f"{option} {str(path)!r}: give the path of an output {what}")
    if folder and p.exists() and not p.is_dir():
        raise UsageError(f"{option} {p}: is a file; give a new or existing folder for the output")
    if not folder and p.is_dir():
        raise UsageError(f"{option} {p}: is a folder; give the path of a file to write")
    for part in p.parts:
        if len(os.fsencode(part)) > 255:
            raise UsageError(f"{option} {str(p)[:60]}…: a name in it is over 255 bytes; give a shorter path")
    above = p.absolute().parent
    while not above.exists():
        above = above.parent
    if not above.is_dir():
        raise UsageError(f"{option} {p}: {above} is a file, not a folder; give a path under a folder")
    if not os.access(above, os.W_OK | os.X_OK) or not _can_create_in(above):
        raise UsageError(f"{option} {p}: cannot write in {above}; give a path in a folder you can write to")
    return p


def _can_create_in(folder: Path) -> bool:
    """Whether a file can really be created in ``folder`` (a probe, removed at once): permission bits say
    yes on read-only or virtual file systems (/proc, a read-only mount) where creating fails."""
    import tempfile

    try:
        fd, name = tempfile.mkstemp(prefix=".genderscope-probe-", dir=folder)
    except OSError:
        return False
    os.close(fd)
    try:
        os.unlink(name)
    except OSError:
        pass
    return True
