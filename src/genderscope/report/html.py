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

from genderscope.core.paths import scrub_paths
from genderscope.core.results_file import TaskResults
from genderscope.data.licences import recorded_licences, restricted_notice, restricted_summary
from genderscope.report.attempts import SAMPLE as ATTEMPT_SAMPLE
from genderscope.report.attempts import attempt_table, task_samples
from genderscope.report.forest import comparison_blocks
from genderscope.report.genderbench import genderbench_section
from genderscope.report.glossary import glossary_rows, metric_anchor
from genderscope.report.reasons import clean_text
from genderscope.core.evidence import no_ci_sentence
from genderscope.report.overview import overview
from genderscope.report.renderers import render_task
from genderscope.report.runs import RunData, load_runs
from genderscope.report.summary import summary_table
from genderscope.report.views import Figure, TableView, fmt_ci
from genderscope.core.textfmt import fmt


def _anchor(*parts: str) -> str:
    return "-".join(re.sub(r"[^A-Za-z0-9_-]+", "_", p) for p in parts)


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
    general.append(("folder", run.path.name))
    general = [(k, fmt(v)) for k, v in general if v not in (None, {}, "")]
    versions = [(k, str(v)) for k, v in (m.versions if m else {}).items()]
    datasets, options, counts = [], [], []
    for task, info in (m.tasks if m else {}).items():
        licences = recorded_licences(info.datasets, info.licences)
        datasets += [[task, name, str(sha), licences[name]] for name, sha in info.datasets.items()]
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


def _drawn(f: Figure) -> bool:
    """A figure with at least one mark (an svg without dots or bars says nothing)."""
    return "<circle" in f.svg or "</title></rect>" in f.svg


def _task_section(run: RunData, task: str, res: TaskResults, sample: list[dict[str, Any]]) -> dict[str, Any]:
    rendered = render_task(task, res, run)
    head = [
        [
            n,
            metric_anchor(task, n),
            fmt(res.metrics[n].value),
            fmt_ci(res.metrics[n]) or no_ci_sentence(res.metrics[n]),
        ]
        for n in res.headline_names()
    ]
    all_metrics = [
        [n, metric_anchor(task, n), fmt(m.value), fmt_ci(m) or (m.no_ci or "")]
        for n, m in res.metrics.items()
    ]
    tables = list(rendered.tables)
    for key, rows in res.tables().items():
        if key not in rendered.handled:
            tables.append(TableView.from_records(f"{key}", rows, collapsed=True))
    scalars = [
        (k, clean_text(v))
        for k, v in _scalars({k: v for k, v in res.extra.items() if k not in rendered.handled})
    ]
    figures, empty = [], list(rendered.notes)
    for f in rendered.figures:
        if _drawn(f):
            figures.append(f)
        else:
            empty.append(f"{f.title}: nothing to draw, every value is undefined.")
    cols, rows = attempt_table(sample)
    return {
        "name": task,
        "anchor": _anchor(run.label, task),
        "reading": rendered.reading,
        "published": task_published(task),
        "headline": head,
        "all_metrics": all_metrics,
        "figures": figures,
        "empty_figures": empty,
        "tables": tables,
        "scalars": scalars,
        "attempt_columns": cols,
        "attempts": rows,
        "has_attempts_file": run.attempts_path.exists(),
    }


def task_published(task: str) -> tuple[str, ...]:
    """Published reference numbers a task states for context (``Task.published``; none for others)."""
    from genderscope.core import lookup

    try:
        return (
            tuple(getattr(lookup.task_class(task), "published", ()) or ()) if task in lookup.TASKS else ()
        )
    except (ImportError, lookup.PluginError):
        return ()


def run_licences(run: RunData) -> dict[str, str]:
    """Licence of every dataset file the run's tasks read (run.json's record, else the data registry's)."""
    out: dict[str, str] = {}
    for info in (run.manifest.tasks if run.manifest else {}).values():
        out.update(recorded_licences(info.datasets, info.licences))
    return out


def build_context(runs: list[RunData], title: str = "genderscope report") -> dict[str, Any]:
    """Everything the template needs, computed from the runs."""
    from genderscope._version import __version__
    from genderscope.report.model_card import language_table

    run_views = []
    every_licence: dict[str, str] = {}
    for run in runs:
        samples = task_samples(run, ATTEMPT_SAMPLE)
        licences = run_licences(run)
        every_licence.update(licences)
        run_views.append(
            {
                "label": run.label,
                "row": run.row_label,
                "anchor": _anchor("run", run.label),
                "spec": run.model,
                "licences": sorted(licences.items()),
                "manifest": _manifest(run),
                "tasks": [_task_section(run, t, e, samples.get(t, [])) for t, e in run.tasks.items()],
            }
        )
    summary = summary_table(runs)
    blocks = comparison_blocks(runs)
    sections = {b.task: b.anchor for b in blocks}
    return {
        "title": title,
        "version": __version__,
        "generated": _dt.datetime.now().isoformat(timespec="seconds"),
        "runs": run_views,
        "licence_notice": restricted_notice(every_licence),
        "licence_summary": restricted_summary(every_licence),
        "summary": summary,
        "overview": overview(summary, runs),
        "genderbench": genderbench_section(runs),
        "test_anchor": sections,
        "tests": blocks,
        "languages": list(language_table(runs).items()),
        "glossary": glossary_rows(summary.tests),
        "attempt_sample": ATTEMPT_SAMPLE,
    }


def render_html(runs: list[RunData], title: str = "genderscope report") -> str:
    """The report as one HTML string (jinja2, autoescape on; no machine path: :func:`scrub_paths`)."""
    from jinja2 import Environment, PackageLoader, select_autoescape

    env = Environment(
        loader=PackageLoader("genderscope.report", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    return scrub_paths(env.get_template("report.html.j2").render(**build_context(runs, title)))


def write_report(run_dirs: list[str | Path], out: str | Path, title: str = "genderscope report") -> Path:
    """Read the run folders and write the report to ``out``; returns the path written."""
    runs = load_runs(list(run_dirs))
    out = Path(out)
    if out.suffix.lower() not in (".html", ".htm"):
        out = out / "report.html" if out.is_dir() or not out.suffix else out
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render_html(runs, title), encoding="utf-8")
    return out
