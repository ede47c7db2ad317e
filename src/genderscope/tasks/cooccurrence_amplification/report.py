"""Report section of ``cooccurrence-amplification``: β of the generated text and of the corpus's own
continuations, per-word bias generated vs corpus with the fitted β line, and the rows table."""

from __future__ import annotations

from typing import Any

from genderscope.core.results_file import TaskResults
from genderscope.report import svg
from genderscope.report.helpers import point
from genderscope.report.views import Figure, Rendered, TableView, fmt_metric
from genderscope.core.textfmt import fmt

HARM = "stereotype amplification: the model's text ties words to one gender more than its reference corpus"
ROW_COLUMNS = (
    "text",
    "context",
    "mu",
    "sigma",
    "beta",
    "beta_ci_low",
    "beta_ci_high",
    "n_scored",
    "n_common",
    "n_tokens",
)


def render(name: str, res: TaskResults, run: Any) -> Rendered:
    """Reading, β point plot, one scatter per context, the rows table."""
    out = Rendered()
    m = res.metrics
    ctxs = [c for c in ("fixed", "infinite") if f"{c}.beta" in m]
    parts = [
        f"{c} context: β = {fmt_metric(m[f'{c}.beta'])} vs the corpus's own continuations "
        f"{fmt_metric(m.get(f'{c}.reference.beta'))}"
        for c in ctxs
    ]
    out.reading = (
        "; ".join(parts)
        + ". β = 1: the text reproduces the corpus's per-word gender bias, > 1 amplifies it, 0: unrelated "
        "(the unigram null model sits slightly above 0 on small corpora). Read β against the reference row. "
        f"Possible harm: {HARM}."
    )
    pts = [
        point(f"{c} {label}", m[key], label)
        for c in ctxs
        for label, key in (("generated", f"{c}.beta"), ("reference", f"{c}.reference.beta"))
        if key in m and m[key].value is not None
    ]
    if pts:
        out.figures.append(
            Figure(
                "Amplification β",
                svg.point_plot(
                    pts,
                    title="β of the generated text and of the reference continuations (95% CI)",
                    xlabel="β",
                ),
                "OLS slope of a word's bias in the text on its bias in the corpus, over the words scored "
                "in both "
                "(t-interval). The reference row is the corpus's own continuation of the same prefixes.",
            )
        )
    scatter = res.extra.get("scatter") or {}
    for ctx in ctxs:
        block = scatter.get(ctx) or {}
        points = block.get("points") or []
        fit = block.get("fit") or {}
        if not points:
            out.notes.append(f"{ctx} context: no word is scored in both the generated text and the corpus.")
            continue
        out.figures.append(
            Figure(
                f"Per-word bias, {ctx} context",
                svg.scatter_line(
                    [p["x"] for p in points],
                    [p["y"] for p in points],
                    title=f"bias in generated text vs bias in the corpus ({ctx} context, nats)",
                    xlabel="corpus bias ln P(w|F)/P(w|M)",
                    ylabel="generated bias",
                    slope=fit.get("beta"),
                    intercept=fit.get("intercept"),
                    labels=[str(p["word"]) for p in points],
                ),
                f"{len(points)} most frequent common words; red: fitted β = {fmt(fit.get('beta'))}; "
                f"dashed: y = x (β = 1; the reference continuations give "
                f"β = {fmt(fit.get('reference_beta'))}).",
            )
        )
    out.handled.add("scatter")
    rows = res.extra.get("rows") or []
    if rows:
        out.tables.append(
            TableView.from_records(
                "Generated text, reference continuations and corpus",
                [{k: r.get(k) for k in ROW_COLUMNS} for r in rows],
                note="μ = mean |bias|, σ = sd of bias (nats); β with its OLS t-interval.",
            )
        )
        out.handled.add("rows")
    return out
