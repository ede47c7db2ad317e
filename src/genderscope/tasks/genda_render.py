"""Rendering shared by the GenDa Lens tasks (``dawinobias``, ``abc``): for the terminal, headline metrics,
the nuance/effect tables and, in genda-lens mode, GenDa Lens's own tables; for the HTML report,
the GES reading and those own tables."""

from __future__ import annotations

from typing import Any

from genderscope.core.report_terminal import fmt, metrics_table


def _cell(x: Any) -> str:
    if isinstance(x, list) and len(x) == 2:
        return f"[{fmt(x[0])}, {fmt(x[1])}]"
    if isinstance(x, float):
        return repr(x) if abs(x) < 1e6 else fmt(x)
    return "–" if x is None else str(x)


#: a text cell longer than this leaves the table for a note below it (80-column terminals)
LONG_TEXT = 24


def _short(x: Any) -> str:
    """A number to 3 significant digits, an interval as ``[a, b]`` of those, None as '–'."""
    from genderscope.core.textfmt import fmt as short

    if isinstance(x, list) and len(x) == 2:
        return f"[{short(x[0])}, {short(x[1])}]"
    return short(x)


def terminal_columns(rows: list[dict[str, Any]]) -> tuple[list[tuple[str, Any]], list[str]]:
    """The columns of a GenDa Lens table as the terminal shows them at 80 columns: ``(heading, cell(row))``
    pairs, where a value and its ``*_ci95`` share one column (``ges [95% CI]``), ``q25_*`` and ``q75_*``
    one IQR column, and numbers have 3 significant digits; the keys of long texts (undefined reasons)
    are returned apart, to be printed below the table."""
    keys = list(rows[0])
    long = [k for k in keys if any(isinstance(r.get(k), str) and len(r[k]) > LONG_TEXT for r in rows)]
    cols: list[tuple[str, Any]] = []
    for k in keys:
        if k in long or k.endswith("_ci95") or k.startswith("q75_"):
            continue
        if k.startswith("q25_") and "q75_" + k[4:] in keys:
            cols.append((f"IQR {k[4:]}", lambda r, k=k: _short([r.get(k), r.get("q75_" + k[4:])])))
        elif k + "_ci95" in keys:
            cols.append((f"{k} [95% CI]", lambda r, k=k: f"{_short(r.get(k))} {_short(r.get(k + '_ci95'))}"))
        else:
            cols.append((k, lambda r, k=k: _short(r.get(k)) if not isinstance(r.get(k), str) else r[k]))
    return cols, long


def rows_table(title: str, rows: list[dict[str, Any]]) -> Any:
    """A GenDa Lens table (effects, nuance) for the terminal: readable at 80 columns
    (:func:`terminal_columns`), long texts as lines below it, nothing cut (cells wrap)."""
    from rich import box
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    table = Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 1, 0, 0))  # fits 80 columns
    if not rows:
        return table
    cols, long = terminal_columns(rows)
    for heading, _ in cols:
        table.add_column(heading, overflow="fold")
    for r in rows:
        table.add_row(*(cell(r) for _, cell in cols))
    first = cols[0][1] if cols else (lambda r: "")
    notes = [
        Text(f"{k.replace('_', ' ')} ({first(r)}): {r[k]}", style="dim")
        for k in long
        for r in rows
        if r.get(k)
    ]
    return Group(table, *notes) if notes else table


def compat_table(spec: dict[str, Any]) -> Any:
    from rich.table import Table

    table = Table(title=spec["index_name"])
    table.add_column("")
    for c in spec["columns"]:
        table.add_column(c)
    for row in spec["rows"]:
        table.add_row(*(_cell(x) for x in row))
    return table


def render_genda(name: str, result: Any) -> Any:
    from rich.console import Group
    from rich.text import Text

    from genderscope.report.reasons import undefined_reason

    parts: list[Any] = [metrics_table(name, result)]
    if result.extra.get("ges_error"):  # genda-lens mode: GenDa Lens's own code stops with an exception here
        parts.append(
            Text(
                f"GES is undefined: {undefined_reason(result, 'ges')} "
                f"(GenDa Lens itself stops here with {result.extra['ges_error']})"
            )
        )
    for key in ("ges_nonfinite", "ges_undefined_reason", "ges_warning"):
        if result.extra.get(key) and not (key == "ges_undefined_reason" and result.extra.get("ges_error")):
            parts.append(Text(f"{key.replace('_', ' ')}: {result.extra[key]}"))
    for w in result.extra.get("warnings") or []:
        parts.append(Text(f"warning: {w}", style="yellow"))
    if result.extra.get("effect_table"):
        parts.append(rows_table(f"{name}: effects", result.extra["effect_table"]))
    if result.extra.get("nuance_table"):
        parts.append(rows_table(f"{name}: nuance", result.extra["nuance_table"]))
    for spec in (result.extra.get("compat_tables") or {}).values():
        parts.append(compat_table(spec))
    if result.extra.get("direction"):
        parts.append(Text(result.extra["direction"], style="dim"))
    return Group(*parts)


# --------------------------------------------------------------------------- HTML report (shared parts)
def ges_reading(res: Any, what: str, harms: tuple[str, str] | None = None) -> str:
    """One sentence on the task's GES metric (``res``: TaskResults); ``what`` explains the sign;
    ``harms``: (main effect, nuance) harms and bias sources as GenDa Lens names them."""
    from genderscope.report.helpers import ci_word
    from genderscope.report.reasons import undefined_reason
    from genderscope.core.textfmt import fmt as hfmt
    from genderscope.report.views import fmt_ci

    g = res.metrics.get("ges")
    if g is None or g.value is None:
        text = f"GES is undefined: {undefined_reason(res, 'ges')}."
        alt = res.metrics.get("ges_ratio")
        if alt is not None and alt.value is not None:
            text += f" ges_ratio = {hfmt(float(alt.value))} {fmt_ci(alt)} (defined for every model)"
            text += f"; {ci_word(alt)}."
    else:
        text = f"GES = {hfmt(float(g.value), 3)} {fmt_ci(g)} ({what}; 0 = no effect); {ci_word(g)}."
    if harms:
        text += f" Possible harms (GenDa Lens): {harms[0]}; {harms[1]}."
    return text


def compat_heading(index_name: str, run: Any = None) -> str:
    """A GenDa Lens table's heading for the report: its index name with the model (the run's model target,
    often an absolute path, as GenDa Lens prints it) replaced by the run's label."""
    model = getattr(getattr(run, "manifest", None), "model", None)
    label = getattr(run, "label", "") or ""
    names = [x for x in (getattr(model, "target", ""), getattr(model, "kind", "")) if x]
    for name in names:
        if label and index_name.endswith(name):
            return index_name[: -len(name)] + label
    return index_name


def compat_tables(res: Any, run: Any = None) -> list[Any]:
    """GenDa Lens's own output tables (genda-lens mode) as report TableViews, headed with the run's label
    (:func:`compat_heading`); each spec is ``{columns, index_name, rows: [[label, cells...]]}``."""
    from genderscope.report.views import TableView
    from genderscope.core.textfmt import fmt as hfmt

    out = []
    for spec in (res.extra.get("compat_tables") or {}).values():
        if isinstance(spec, dict) and isinstance(spec.get("rows"), list):
            out.append(
                TableView(
                    compat_heading(str(spec.get("index_name", "GenDa Lens table")), run),
                    [""] + [str(c) for c in spec.get("columns") or []],
                    [[hfmt(x) if not isinstance(x, str) else x for x in row] for row in spec["rows"]],
                    note="As GenDa Lens prints it (genda-lens mode; GenDa Lens names the model where the "
                    "heading names the run).",
                )
            )
    return out


def nuance_rows(out: Any, res: Any, columns: set[str]) -> list[dict[str, Any]]:
    """The rows of GenDa Lens's nuance table (the first with ``columns``), [] if none; a found table is
    marked handled and shown as the report's "Nuance table" in ``out`` (a report ``Rendered``)."""
    from genderscope.report.helpers import find_table
    from genderscope.report.views import TableView

    key, rows = find_table(res, columns, ("nuance_table", "nuance"))
    if rows:
        out.handled.add(key)
        out.tables.append(TableView.from_records("Nuance table", rows))
    return rows
