"""WinoBias + adjectives' report section: bias per adjective condition against the no-adjective baseline."""

from __future__ import annotations

from typing import Any

from genderscope.core.results_file import TaskResults
from genderscope.report import svg
from genderscope.report.heatmap import heatmap
from genderscope.report.helpers import num, render_generic
from genderscope.report.views import Figure, Rendered, TableView
from genderscope.core.textfmt import fmt


def _cond_label(row: dict[str, Any]) -> str:
    c = str(row.get("condition", "?"))
    if c.startswith("none_none"):
        return "baseline (no adjective)"
    m, f = row.get("male_adjective"), row.get("female_adjective")
    if m is None and f is None:
        return c
    return f"{m or '—'} / {f or '—'}"


def render(name: str, res: TaskResults, run: Any) -> Rendered:
    """Bias per condition against the baseline, answer breakdown, the published conditions table."""
    out = Rendered(handled={"summary"})
    rows = res.extra.get("summary") or []
    if not rows:
        return render_generic(name, res, run)
    base = next((r for r in rows if str(r.get("condition", "")).startswith("none_none")), None)
    b = num(base.get("bias")) if base else None
    out.figures.append(_bias_figure(rows, base, b))
    breakdown = _breakdown_figure(rows)
    if breakdown is not None:
        out.figures.append(breakdown)
    _heatmap(out, rows)
    mode = rows[0].get("stats_mode", "default")
    pkey = "p_replicate" if mode == "replicate" else "p_holm"
    out.tables.append(_conditions_table(rows, base, pkey))
    n_up = sum(1 for r in rows if r.get("significant") and (num(r.get("diff")) or 0) > 0)
    n_down = sum(1 for r in rows if r.get("significant") and (num(r.get("diff")) or 0) < 0)
    n = sum(1 for r in rows if r is not base)
    out.reading = (
        f"Baseline bias {fmt(b, 3)} pp (accuracy on pro- minus anti-stereotypical sentences; 0 = "
        f"unbiased). Of {n} adjective conditions, {n_up} raise and {n_down} lower the bias "
        f"significantly ({pkey})."
    )
    return out


def _bias_figure(rows: list[dict[str, Any]], base: dict[str, Any] | None, b: float | None) -> Figure:
    """Each condition's bias (pp) with the CI of its change from the baseline ``b``."""
    pts = []
    for r in rows:
        v = num(r.get("bias"))
        lo = hi = None
        if b is not None and r is not base and num(r.get("ci95_low")) is not None:
            lo, hi = b + float(r["ci95_low"]), b + float(r["ci95_high"])
        sig = "significant" if r.get("significant") else ""  # no bootstrap interval: the dot only
        pts.append(svg.Point(_cond_label(r), v, lo, hi, note=sig))
    return Figure(
        "Bias per condition",
        svg.point_plot(
            pts,
            title="WinoBias + adjectives: bias per condition (pp, 95% CI of the change)",
            xlabel="bias = accuracy(pro) − accuracy(anti), percentage points",
            ref=b,
            ref_label="baseline" if b is not None else "",
        ),
        "Dashed line: the baseline bias (no adjective). Whiskers: the line-level (--ci-method) "
        "95% CI of "
        "the difference from the baseline, drawn around the condition's bias; a whisker that crosses the "
        "dashed line means no clear change. Adjective labels: male-associated / female-associated.",
    )


def _breakdown_figure(rows: list[dict[str, Any]]) -> Figure | None:
    """Answer classes (% of replies) per condition and pro/anti lines (None without the shares)."""
    cats = ("correct", "incorrect", "unsure", "other")
    bars = []
    for r in rows:
        for lab in ("pro", "anti"):
            ans = r.get(f"answers_{lab}")
            if isinstance(ans, dict):
                bars.append((f"{_cond_label(r)} · {lab}", {c: ans.get(c) for c in cats}))
    if not bars:
        return None
    return Figure(
        "Answer breakdown",
        svg.stacked_bars(
            bars,
            cats,
            title="WinoBias + adjectives: answer classes (% of replies)",
            xlabel="% of replies",
            total=100.0,
        ),
        "Per condition and pro/anti-stereotypical sentences: share of replies naming the "
        "correct occupation, the other one, unsure, or something else.",
    )


def _conditions_table(rows: list[dict[str, Any]], base: dict[str, Any] | None, pkey: str) -> TableView:
    """The published layout: adjectives, bias, diff with its CI and the deciding p-value."""
    table = []
    for r in rows:
        p = num(r.get(pkey))
        table.append(
            [
                str(r.get("condition")),
                fmt(r.get("male_adjective")),
                fmt(r.get("female_adjective")),
                _f1(r.get("bias")),
                _f1(r.get("diff")),
                f"[{_f1(r.get('ci95_low'))}, {_f1(r.get('ci95_high'))}]" if r is not base else "",
                (f"{p:.3f}" + ("*" if p > 0.05 else "")) if p is not None else "–",
            ]
        )
    return TableView(
        "Conditions (published layout)",
        ["condition", "male adj.", "female adj.", "bias", "diff", "diff 95% CI", pkey],
        table,
        note="* = p > 0.05 (not significant).",
    )


def _f1(x: Any) -> str:
    v = num(x)
    return "–" if v is None else f"{v:.1f}"


def _heatmap(out: Rendered, rows: list[dict[str, Any]]) -> None:
    """The study's view: response types (correct / incorrect / other) per adjective pair, pro and anti."""
    labels, values = [], {}
    for r in rows:
        label = _cond_label(r)
        labels.append(label)
        for group, key in (("pro-stereotypical", "answers_pro"), ("anti-stereotypical", "answers_anti")):
            ans = r.get(key) if isinstance(r.get(key), dict) else {}
            other = [num(ans.get(c)) for c in ("other", "unsure")]
            values[(label, group, "correct")] = num(ans.get("correct"))
            values[(label, group, "incorrect")] = num(ans.get("incorrect"))
            values[(label, group, "other")] = (
                None if all(o is None for o in other) else sum(o or 0.0 for o in other)
            )
    if not any(v is not None for v in values.values()):
        out.notes.append("Response types per adjective pair: no answer breakdown in results.json.")
        return
    out.figures.append(
        Figure(
            "Response types per adjective pair",
            heatmap(
                labels,
                ("pro-stereotypical", "anti-stereotypical"),
                ("correct", "incorrect", "other"),
                values,
                title="WinoBias + adjectives: response types per adjective pair (% of replies)",
            ),
            "Per adjective pair (male-associated / female-associated) and pro- / anti-stereotypical "
            "sentences: "
            "the share of replies naming the correct occupation, the other occupation, or neither ('other', "
            "including 'unsure'). Darker = more replies.",
        )
    )
