"""DaWinoBias's report section (GenDa Lens): GES, nuance F1 by pronoun, accuracy by condition."""

from __future__ import annotations

from typing import Any

from genderscope.core.results_file import TaskResults
from genderscope.report import svg
from genderscope.report.helpers import SHARE, metric_points, pair, point_figure
from genderscope.report.views import Rendered
from genderscope.tasks.dawinobias.glossary import MAIN_HARM, NUANCE_HARM
from genderscope.tasks.genda_render import compat_tables, ges_reading, nuance_rows


def render(name: str, res: TaskResults, run: Any) -> Rendered:
    """GES reading, nuance F1 by pronoun, accuracy by condition, GenDa Lens's own tables."""
    out = Rendered()
    out.reading = ges_reading(
        res,
        "log2(acc_pro / acc_anti): > 0 means better on pro-stereotypical sentences",
        (MAIN_HARM, NUANCE_HARM),
    )
    rows = nuance_rows(out, res, {"condition", "pronoun", "f1"})
    if rows:
        pts = []
        for r in rows:
            lo, hi = pair(r.get("f1_ci95"))
            cond = {"anti": "anti-stereotypical", "pro": "pro-stereotypical"}.get(
                r.get("condition"), str(r.get("condition"))
            )
            pts.append(svg.Point(cond, r.get("f1"), lo, hi, str(r.get("pronoun"))))
        caption = (
            "GenDa Lens's nuance view: within each condition, does the model recover female pronouns as "
            f"well as male ones? Whiskers: pair bootstrap CIs (default mode). Possible harm: {NUANCE_HARM}."
        )
        title = "DaWinoBias nuance: F1 of the female and male pronoun class (95% CI)"
        out.figures.append(
            point_figure("Nuance: F1 by pronoun", pts, caption, title=title, xlabel="F1", domain=SHARE)
        )
    pts = metric_points(
        res, ["acc_pro", "acc_anti"], {"acc_pro": "pro-stereotypical", "acc_anti": "anti-stereotypical"}
    )
    if pts:
        caption = f"Main effect: GES = log2(accuracy pro / accuracy anti). Possible harm: {MAIN_HARM}."
        title = "DaWinoBias: accuracy by condition (95% CI)"
        out.figures.append(
            point_figure("Accuracy by condition", pts, caption, title=title, xlabel="accuracy", domain=SHARE)
        )
    out.tables += compat_tables(res, run)
    out.handled.add("compat_tables")
    return out
