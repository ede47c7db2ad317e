"""Build the self-contained HTML report (one file, inline CSS and SVG, no script, no network).

Model output is untrusted: the page is rendered by jinja2 with autoescaping on, the only markup
inserted unescaped are the SVG charts of :mod:`genderscope.report.svg` (which escape their text), and a
Content-Security-Policy meta tag forbids scripts and every network request as a second line of defence.
"""

from __future__ import annotations

import datetime as _dt
import re
from pathlib import Path
from typing import Any

from genderscope.core.runlog import TaskResults
from genderscope.report import svg
from genderscope.report.compare import cell_text, compare_rows
from genderscope.report.renderers import render_task
from genderscope.report.runs import BASE_ATTEMPT_KEYS, RunData, load_runs
from genderscope.report.views import Figure, TableView, fmt, fmt_ci

#: how many attempts per task the page shows
ATTEMPT_SAMPLE = 20
#: characters of a prompt or answer shown before cutting (the export has the full text)
MAX_TEXT = 1200


def _anchor(*parts: str) -> str:
    return "-".join(re.sub(r"[^A-Za-z0-9_-]+", "_", p) for p in parts)


def _cut(x: Any) -> str:
    s = "" if x is None else (x if isinstance(x, str) else fmt(x))
    return s if len(s) <= MAX_TEXT else s[:MAX_TEXT] + f"… [{len(s) - MAX_TEXT} more characters]"


def _attempt_rows(records: list[dict[str, Any]]) -> tuple[list[str], list[list[str]]]:
    extra: list[str] = []
    for rec in records:
        for k in rec:
            if k not in BASE_ATTEMPT_KEYS and k not in extra:
                extra.append(k)
    cols = (
        ["item_id", "trial", "prompt", "response"]
        + extra
        + (["error"] if any("error" in r for r in records) else [])
    )
    rows = [
        [_cut(rec.get(c)) if c in ("prompt", "response", "error") else fmt(rec.get(c)) for c in cols]
        for rec in records
    ]
    return cols, rows


def _manifest(run: RunData) -> dict[str, Any]:
    m = run.manifest
    model = m.model if m else None
    general = [("model", model.spec if model and model.spec else run.model)]
    if model:
        general += [("fingerprint", model.fingerprint), ("backend options", model.options)]
    if m:
        general += [
            ("created", m.created),
            ("command", m.command),
            ("genderscope", m.genderscope_version or run.results.genderscope_version),
            ("seed", m.seed),
            ("trials", m.trials),
            ("limit", m.limit),
            ("generation overrides", m.generation),
            ("response store", m.use_cache),
            ("wall time (s)", m.seconds),
        ]
    general.append(("folder", str(run.path)))
    general = [(k, fmt(v)) for k, v in general if v not in (None, {}, "")]
    versions = [(k, str(v)) for k, v in (m.versions if m else {}).items()]
    datasets, options, counts = [], [], []
    for task, info in (m.tasks if m else {}).items():
        datasets += [[task, name, str(sha)] for name, sha in info.datasets.items()]
        options += [[task, k, fmt(v)] for k, v in info.options.items()]
        options += [[task, f"measurement: {k}", fmt(v)] for k, v in info.measurement.items()]
        if info.counts:
            keys = ("attempts", "cache_hits", "requests", "errors", "skipped", "seconds")
            counts.append([task] + [fmt(info.counts.get(k)) for k in keys])
    return {
        "general": general,
        "versions": versions,
        "datasets": datasets,
        "options": options,
        "counts": counts,
        "missing": m is None,
    }


def _is_table(v: Any) -> bool:
    return isinstance(v, list) and bool(v) and all(isinstance(x, dict) for x in v)


def _scalars(entry: dict[str, Any], prefix: str = "", depth: int = 2) -> list[tuple[str, str]]:
    """Entries that are not tables, flattened ``depth`` levels deep (``mark.label``), as (key, text)."""
    out: list[tuple[str, str]] = []
    for k, v in entry.items():
        if _is_table(v):
            continue
        if isinstance(v, dict) and depth > 1:
            out += _scalars(v, f"{prefix}{k}.", depth - 1)
        else:
            out.append((f"{prefix}{k}", fmt(v)))
    return out


def _task_section(run: RunData, task: str, res: TaskResults, sample: list[dict[str, Any]]) -> dict[str, Any]:
    rendered = render_task(task, res, run)
    head = [[n, fmt(res.metrics[n].value), fmt_ci(res.metrics[n])] for n in res.headline_names()]
    all_metrics = [[n, fmt(m.value), fmt_ci(m) or (m.no_ci or "")] for n, m in res.metrics.items()]
    tables = list(rendered.tables)
    for key, rows in res.tables().items():
        if key not in rendered.handled:
            tables.append(TableView.from_records(f"{key}", rows, collapsed=True))
    scalars = _scalars({k: v for k, v in res.extra.items() if k not in rendered.handled})
    cols, rows = _attempt_rows(sample)
    return {
        "name": task,
        "anchor": _anchor(run.label, task),
        "reading": rendered.reading,
        "headline": head,
        "all_metrics": all_metrics,
        "figures": rendered.figures,
        "tables": tables,
        "scalars": scalars,
        "attempt_columns": cols,
        "attempts": rows,
        "has_attempts_file": run.attempts_path.exists(),
    }


def _comparison(runs: list[RunData]) -> dict[str, Any] | None:
    if len(runs) < 2:
        return None
    rows = compare_rows(runs)
    table = [[r.task, r.metric] + [cell_text(c) for c in r.cells] for r in rows]
    figures = []
    for r in rows:
        present = [(run.label, c) for run, c in zip(runs, r.cells) if c is not None]
        if len(present) < 2 or not any(c.ci_low is not None for _, c in present):
            continue
        if sum(1 for f in figures if f.title.startswith(r.task + ":")) >= 3:
            continue
        pts = [svg.Point(label, c.value, c.ci_low, c.ci_high) for label, c in present]
        figures.append(
            Figure(
                f"{r.task}: {r.metric}",
                svg.point_plot(
                    pts, title=f"{r.task}: {r.metric} by model (95% CI)", ref=0.0, label_width=260
                ),
            )
        )
    return {"columns": ["task", "metric"] + [r.label for r in runs], "rows": table, "figures": figures}


def build_context(runs: list[RunData], title: str = "genderscope report") -> dict[str, Any]:
    """Everything the template needs, computed from the runs."""
    from genderscope import __version__

    run_views = []
    for run in runs:
        samples = run.attempt_sample(ATTEMPT_SAMPLE)
        run_views.append(
            {
                "label": run.label,
                "anchor": _anchor(run.label),
                "path": str(run.path),
                "manifest": _manifest(run),
                "tasks": [_task_section(run, t, e, samples.get(t, [])) for t, e in run.tasks.items()],
            }
        )
    return {
        "title": title,
        "version": __version__,
        "generated": _dt.datetime.now().isoformat(timespec="seconds"),
        "runs": run_views,
        "comparison": _comparison(runs),
        "attempt_sample": ATTEMPT_SAMPLE,
    }


def render_html(runs: list[RunData], title: str = "genderscope report") -> str:
    """The report as one HTML string (jinja2, autoescape on)."""
    from jinja2 import Environment, PackageLoader, select_autoescape

    env = Environment(
        loader=PackageLoader("genderscope.report", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    return env.get_template("report.html.j2").render(**build_context(runs, title))


def write_report(run_dirs: list[str | Path], out: str | Path, title: str = "genderscope report") -> Path:
    """Read the run folders and write the report to ``out``; returns the path written."""
    runs = load_runs(list(run_dirs))
    out = Path(out)
    if out.suffix.lower() not in (".html", ".htm"):
        out = out / "report.html" if out.is_dir() or not out.suffix else out
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render_html(runs, title), encoding="utf-8")
    return out
