"""DaWinoBias's report section (GenDa Lens): GES, nuance F1 by pronoun, accuracy by condition."""

from __future__ import annotations

from typing import Any

from genderscope.core.runlog import TaskResults
from genderscope.report import svg
from genderscope.report.helpers import find_table, metric_points, pair
from genderscope.report.views import Figure, Rendered, TableView
from genderscope.tasks.dawinobias.glossary import MAIN_HARM, NUANCE_HARM
from genderscope.tasks.genda_render import compat_tables, ges_reading


def render(name: str, res: TaskResults, run: Any) -> Rendered:
    """GES reading, nuance F1 by pronoun, accuracy by condition, GenDa Lens's own tables."""
    out = Rendered()
    out.reading = ges_reading(
        res,
        "log2(acc_pro / acc_anti): > 0 means better on pro-stereotypical sentences",
        (MAIN_HARM, NUANCE_HARM),
    )
    key, rows = find_table(res, {"condition", "pronoun", "f1"}, ("nuance_table", "nuance"))
    if rows:
        out.handled.add(key)
        pts = []
        for r in rows:
            lo, hi = pair(r.get("f1_ci95"))
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
                "female pronouns as well as male ones? Whiskers: pair bootstrap CIs (default mode). "
                f"Possible harm: {NUANCE_HARM}.",
            )
        )
        out.tables.append(TableView.from_records("Nuance table", rows))
    pts = metric_points(
        res, ["acc_pro", "acc_anti"], {"acc_pro": "pro-stereotypical", "acc_anti": "anti-stereotypical"}
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
                f"Main effect: GES = log2(accuracy pro / accuracy anti). Possible harm: {MAIN_HARM}.",
            )
        )
    out.tables += compat_tables(res, run)
    out.handled.add("compat_tables")
    return out
