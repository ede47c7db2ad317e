"""A benchmark's terminal block with one of its results tables beside the metrics (``Task.render``).

:func:`table_block` draws the headline metrics table, then a table of rows (a label, then one cell per
column; a missing cell is shown as ``–``), a note line and, when a cell is missing, a line saying why.
"""

from __future__ import annotations

from typing import Any, Sequence


def table_block(
    name: str,
    result: Any,
    title: str,
    header: Sequence[str],
    rows: Sequence[Sequence[str | None]],
    note: str,
    missing: str,
) -> Any:
    """The terminal block (a rich ``Group``): metrics, the table ``title`` (``header``: the label column's
    name, then the cells'; cells right-aligned), ``note`` and, if a cell is None, ``missing``."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    from genderscope.core.report_terminal import metrics_table

    table = Table(title=title)
    table.add_column(header[0])
    for h in header[1:]:
        table.add_column(h, justify="right")
    for label, *cells in rows:
        table.add_row(label, *("–" if c is None else c for c in cells))
    parts = [metrics_table(name, result), table, Text(note)]
    if any(c is None for row in rows for c in row[1:]):
        parts.append(Text(missing))
    return Group(*parts)
