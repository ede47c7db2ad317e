"""The HTML before/after view of two runs of the same tasks (a model before and after ``genderscope
debias``): each metric before, after, its paired change [95 % CI] and evidence state, and the cost in
perplexity on held-out text when a ``debias.json`` records it.

Written by ``genderscope compare --paired BEFORE AFTER --html FILE`` and by ``genderscope debias ...
--audit TASKS`` (``OUT/audit/report.html``).  The cells are :func:`~genderscope.report.compare.paired_cells`'
(the terminal table's), so both show the same values.  One self-contained page: inline CSS, no script, no
network, no machine path.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
from pathlib import Path
from typing import Any

from genderscope.core.paths import scrub_paths
from genderscope.report.compare import PAIRED_COLUMNS, paired_cells

#: an absolute path left in a label after :func:`scrub_paths` (not inside a word, URL or tag)
_ABSOLUTE = re.compile(r"(?<![\w.~/<-])/(?!/)[^\s\"'<>]+")


def recorded_cost(after: str | Path) -> dict[str, Any] | None:
    """The perplexity before and after of the ``debias.json`` whose audit wrote ``after``
    (``OUT/audit/after`` → ``OUT/debias.json``); None for other runs."""
    after = Path(after).absolute()
    record = after.parent.parent / "debias.json"
    if after.parent.name != "audit" or not record.is_file():
        return None
    try:
        return cost_rows(json.loads(record.read_text(encoding="utf-8")).get("perplexity"))
    except (OSError, ValueError, AttributeError):
        return None


def cost_rows(ppl: dict[str, Any] | None) -> dict[str, Any] | None:
    """debias.json's ``perplexity`` entry as the view's cost: corpus, tokens, perplexity before and after,
    their ratio; None when either side was not measured."""
    from genderscope.core.textfmt import fmt

    if not ppl or not ppl.get("before") or not ppl.get("after"):
        return None
    b, a = ppl["before"], ppl["after"]
    return {
        "corpus": str(ppl.get("corpus") or ""),
        "tokens": fmt(b.get("tokens")),
        "before": fmt(b["ppl"]),
        "after": fmt(a["ppl"]),
        "ratio": fmt(a["ppl"] / b["ppl"]) if b["ppl"] else "–",
    }


def _shown(text: str, base: Path) -> str:
    """``text`` with machine paths shortened: :func:`scrub_paths`, then any absolute path left made
    relative to ``base`` (the page's folder)."""
    return _ABSOLUTE.sub(lambda m: os.path.relpath(m.group(0), base), scrub_paths(text))


def _run_label(run: Path, base: Path) -> dict[str, str]:
    """A run's label (run.json's, else its folder's name) and model spec, for the page."""
    try:
        manifest = json.loads((run / "run.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        manifest = {}
    model = manifest.get("model") or {}
    spec = model.get("spec", "") if isinstance(model, dict) else str(model)
    return {"label": _shown(str(manifest.get("label") or run.name), base), "model": _shown(str(spec), base)}


def before_after_context(
    changes: list[Any], before: Path, after: Path, base: Path, cost: dict[str, Any] | None, title: str
) -> dict[str, Any]:
    """What the template needs: the two runs, one row of cells per paired change, the cost."""
    from genderscope import __version__

    rows = []
    for c in changes:
        cells = paired_cells(c)
        rows.append({"cells": cells, "state": c.state.replace(" ", "-"), "note": c.note})
    return {
        "title": title,
        "version": __version__,
        "generated": _dt.datetime.now().isoformat(timespec="seconds"),
        "before": _run_label(Path(before), base),
        "after": _run_label(Path(after), base),
        "columns": PAIRED_COLUMNS,
        "rows": rows,
        "cost": {**cost, "corpus": _shown(cost["corpus"], base)} if cost else None,
    }


def render_before_after(
    changes: list[Any], before: Path, after: Path, base: Path, cost: dict[str, Any] | None = None,
    title: str = "before and after",
) -> str:  # fmt: skip
    """The view as one HTML string (jinja2, autoescape on; no machine path)."""
    from jinja2 import Environment, PackageLoader, select_autoescape

    env = Environment(
        loader=PackageLoader("genderscope.report", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    ctx = before_after_context(changes, before, after, base, cost, title)
    return scrub_paths(env.get_template("before_after.html.j2").render(**ctx))


def write_before_after(
    before: str | Path, after: str | Path, out: str | Path, changes: list[Any] | None = None,
    cost: dict[str, Any] | None = None, title: str = "before and after",
) -> Path:  # fmt: skip
    """Write the view of ``before`` → ``after`` to ``out`` (a file; ``out/report.html`` for a folder);
    ``changes`` default to :func:`~genderscope.core.paired.paired_changes`, ``cost`` to
    :func:`recorded_cost`.  Returns the path written."""
    from genderscope.core.paired import paired_changes

    out = Path(out)
    if out.is_dir():
        out = out / "report.html"
    out.parent.mkdir(parents=True, exist_ok=True)
    changes = paired_changes(Path(before), Path(after)) if changes is None else changes
    cost = recorded_cost(after) if cost is None else cost
    html = render_before_after(changes, Path(before), Path(after), out.parent.absolute(), cost, title)
    out.write_text(html, encoding="utf-8")
    return out
