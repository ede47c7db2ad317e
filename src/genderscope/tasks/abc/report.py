"""ABC's report section (GenDa Lens): GES, nuance relative perplexity, GES by occupation group."""

from __future__ import annotations

from typing import Any

from genderscope.core.results_file import TaskResults
from genderscope.report import svg
from genderscope.report.helpers import find_table, metric_points, num, pair
from genderscope.report.views import Figure, Rendered, TableView
from genderscope.tasks.abc.glossary import MAIN_HARM, NUANCE_HARM
from genderscope.tasks.genda_render import compat_tables, ges_reading, nuance_rows


def render(name: str, res: TaskResults, run: Any) -> Rendered:
    """GES reading, nuance relative perplexity, GES by occupation group, GenDa Lens's own tables."""
    out = Rendered()
    out.reading = ges_reading(
        res,
        "log2 of median relative perplexity hendes / hans: > 0 means the "
        "violation is accepted more readily with the male pronoun",
        (MAIN_HARM, NUANCE_HARM),
    )
    rows = nuance_rows(out, res, {"occupations", "pronoun", "median_rel"})
    if rows:
        pts = []
        has_ci = any(pair(r.get("median_rel_ci95"))[0] is not None for r in rows)
        for r in rows:
            lo, hi = (
                pair(r.get("median_rel_ci95")) if has_ci else (num(r.get("q25_rel")), num(r.get("q75_rel")))
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
                + ("bootstrap 95% CI of the median." if has_ci else "interquartile range.")
                + f" Possible harm: {NUANCE_HARM}.",
            )
        )
    key2, eff = find_table(res, {"ges"}, ("effect_table", "effects"))
    if eff:
        out.handled.add(key2)
        _effect_figure(out, eff)
        out.tables.append(TableView.from_records("Effect table", eff))
    elif "ges" in res.metrics:
        pts = [
            p
            for p in metric_points(res, ["ges", "ges_femocc", "ges_maleocc", "ges_ratio"])
            if p.value is not None
        ]
        if pts:
            out.figures.append(
                Figure(
                    "GES",
                    svg.point_plot(
                        pts, title="ABC: gender effect sizes (95% CI)", xlabel="GES (log2)", ref=0.0
                    ),
                )
            )
        else:
            out.notes.append("GES: no figure, because GES is undefined in this run (see the reading).")
    out.tables += compat_tables(res, run)
    out.handled.add("compat_tables")
    return out


_GROUPS = {"all": "all occupations", "female": "female occupations", "male": "male occupations"}


def _effect_figure(out: Rendered, eff: list[dict[str, Any]]) -> None:
    """GES and ges_ratio by occupation group; undefined GES values are named in the caption."""
    pts, undefined = [], []
    for r in eff:
        group = _GROUPS.get(str(r.get("occupations", r.get("group"))), str(r.get("occupations", "?")))
        if num(r.get("ges")) is not None:
            lo, hi = pair(r.get("ges_ci95"))
            pts.append(svg.Point(group, r.get("ges"), lo, hi, "ges"))
        else:
            undefined.append(f"{group} ({r.get('ges_undefined_reason') or 'undefined'})")
        if num(r.get("ges_ratio")) is not None:
            lo, hi = pair(r.get("ges_ratio_ci95"))
            pts.append(svg.Point(group, r.get("ges_ratio"), lo, hi, "ges_ratio"))
    if not pts:
        out.notes.append(
            "GES by occupation group: no figure, because GES is undefined in every group: "
            + "; ".join(undefined)
            + "."
        )
        return
    caption = (
        "ges = log2 of the ratio of median relative perplexities; ges_ratio = log2 of the ratio of median "
        "perplexity ratios (defined for every model). A difference between the female and male occupations "
        f"is the nuance (possible harm: {NUANCE_HARM})."
    )
    if undefined:
        caption += " GES is undefined for: " + "; ".join(undefined) + "."
    out.figures.append(
        Figure(
            "GES by occupation group",
            svg.point_plot(
                pts,
                title="ABC: gender effect size by occupation group (95% CI)",
                xlabel="log2 ratio",
                ref=0.0,
            ),
            caption,
        )
    )
