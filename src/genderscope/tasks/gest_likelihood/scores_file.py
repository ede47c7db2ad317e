"""Per-sentence score files: one float per line, line i = dataset row i (the GEST repo's predictions)."""

from __future__ import annotations

import math
import re
from pathlib import Path

from genderscope.common.errors import DataError, UsageError

_TEMPLATE_IN_NAME = re.compile(r"template[-_](\d+)")


def read_scores(path: str | Path, n_rows: int) -> list[float]:
    """Read ``path``; ``nan`` is allowed (row excluded), blank lines only at the end.

    Errors name ``file:line``; the number of scores must equal the dataset's row count.
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DataError(f"{p}: score file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"{p}: cannot read score file ({exc})") from None
    lines = text.splitlines()
    while lines and not lines[-1].strip():
        lines.pop()
    out: list[float] = []
    for i, raw in enumerate(lines, start=1):
        s = raw.strip()
        try:
            v = float(s)
        except ValueError:
            raise DataError(f"{p}:{i}: cannot read {raw!r} as a number (one score per line)") from None
        if math.isinf(v):
            raise DataError(f"{p}:{i}: score {s!r} is infinite")
        out.append(v)
    if len(out) != n_rows:
        raise DataError(
            f"{p}: {len(out)} scores, but the GEST file has {n_rows} rows "
            "(one score per dataset row, in row order)"
        )
    return out


def template_ids(paths: list[str], given: list[int] | None) -> list[int]:
    """Template id of each score file: ``given`` ids, else ``template-K`` in the file name, else 0, 1, ..."""
    if given:
        if len(given) != len(paths):
            raise UsageError(
                f"--template names {len(given)} template id(s) but --scores has {len(paths)} "
                "file(s); give one id per file, in the same order"
            )
        ids = list(given)
    else:
        found = [_TEMPLATE_IN_NAME.search(Path(p).name) for p in paths]
        ids = [int(m.group(1)) for m in found] if all(found) else list(range(len(paths)))  # type: ignore[union-attr]
    if len(set(ids)) != len(ids):
        raise UsageError(f"two score files have the same template id ({ids}); use --template to set them")
    return ids
