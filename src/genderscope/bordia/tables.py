"""Tables of Bordia & Bowman results: the paper's published rows, results.csv, table.md and the terminal.

Row dicts are those of :func:`genderscope.commands.bordia.sweep.run_sweep` (one per λ label and context: μ,
σ in nats, β and intercept of the generated-on-training bias regression, perplexities).
"""

from __future__ import annotations

import csv
import io
import math
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

#: the paper's Tables 1–3 (spec §9.3): λ -> (fixed μ, σ, β, infinite μ, σ, β, Ppl.); "train" has no β/Ppl.
PUBLISHED: dict[str, dict[str, tuple[float | None, ...]]] = {
    "ptb": {
        "train": (0.83, 1.00, None, 3.81, 4.65, None, None),
        "0": (0.74, 0.91, 0.40, 2.23, 2.90, 0.38, 62.56),
        "0.001": (0.69, 0.88, 0.34, 2.43, 2.98, 0.35, 62.69),
        "0.01": (0.63, 0.81, 0.31, 2.56, 3.40, 0.36, 62.83),
        "0.1": (0.64, 0.82, 0.33, 2.30, 3.09, 0.24, 62.48),
        "0.5": (0.70, 0.91, 0.39, 2.91, 3.76, 0.38, 62.50),
        "0.8": (0.76, 0.96, 0.45, 3.43, 4.06, 0.26, 63.36),
        "1": (0.84, 0.94, 0.38, 2.42, 3.02, -0.30, 62.63),
    },
    "wikitext-2": {
        "train": (0.80, 1.00, None, 3.70, 4.60, None, None),
        "0": (0.70, 0.84, 0.29, 3.48, 4.29, 0.15, 67.67),
        "0.001": (0.69, 0.84, 0.27, 2.32, 3.12, 0.16, 67.84),
        "0.01": (0.61, 0.79, 0.20, 1.88, 2.69, 0.14, 67.78),
        "0.1": (0.65, 0.82, 0.24, 2.26, 3.11, 0.06, 67.89),
        "0.5": (0.70, 0.88, 0.31, 2.25, 3.17, 0.20, 69.07),
        "0.8": (0.65, 0.84, 0.28, 2.07, 2.98, 0.18, 69.36),
        "1": (0.74, 0.92, 0.27, 2.32, 3.21, -0.08, 69.56),
    },
    "cnn_dailymail": {
        "train": (0.72, 0.94, None, 0.77, 1.05, None, None),
        "0": (0.51, 0.68, 0.22, 0.43, 0.59, 0.29, 118.01),
        "0.1": (0.38, 0.52, 0.19, 0.85, 1.38, 0.22, 116.49),
        "0.5": (0.34, 0.48, 0.14, 0.79, 1.31, 0.20, 116.19),
        "0.8": (0.40, 0.56, 0.19, 0.96, 1.57, 0.23, 121.00),
        "1": (0.62, 0.83, 0.21, 1.71, 2.65, 0.31, 120.55),
    },
}
CSV_COLUMNS = (
    "dataset",
    "lambda",
    "context",
    "mu",
    "sigma",
    "mu_ci_low",
    "mu_ci_high",
    "sigma_ci_low",
    "sigma_ci_high",
    "beta",
    "intercept",
    "se_beta",
    "beta_ci_low",
    "beta_ci_high",
    "r",
    "n_scored",
    "n_common",
    "outliers_removed",
    "valid_ppl",
    "test_ppl",
    "kappa_counts",
)


def rows_to_csv(rows: list[dict[str, Any]]) -> str:
    """results.csv: one line per row, columns :data:`CSV_COLUMNS` (missing values empty)."""
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=CSV_COLUMNS, extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: ("" if r.get(k) is None else r.get(k, "")) for k in CSV_COLUMNS})
    return buf.getvalue()


def _fmt(v: Any) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    return f"{v:.2f}"


def table_rows(rows: list[dict[str, Any]]) -> list[list[str]]:
    """The published-style table: λ | fixed μ σ β (c) | infinite μ σ β (c) | Ppl."""
    by: dict[str, dict[str, dict[str, Any]]] = {}
    for r in rows:
        by.setdefault(r["lambda"], {})[r["context"]] = r
    out = []
    for lam, ctxs in by.items():
        line = [lam]
        ppl = None
        for ctx in ("fixed", "infinite"):
            r = ctxs.get(ctx, {})
            beta = r.get("beta")
            beta_s = _fmt(beta) if _fmt(beta) == "–" else f"{_fmt(beta)} ({_fmt(r.get('intercept'))})"
            line += [_fmt(r.get("mu")), _fmt(r.get("sigma")), beta_s]
            ppl = r.get("test_ppl", ppl)
        line.append(_fmt(ppl))
        out.append(line)
    return out


def published_rows(dataset: str) -> list[list[str]]:
    """The paper's rows for ``dataset`` in the layout of :func:`table_rows` (β without intercept)."""
    return [[lam] + [_fmt(v) for v in vals] for lam, vals in PUBLISHED[dataset].items()]


TABLE_HEADER = ["λ", "fixed μ", "σ", "β (c)", "infinite μ", "σ", "β (c)", "Ppl."]


def table_markdown(rows: list[dict[str, Any]], dataset: str) -> str:
    """table.md: the sweep table, then the paper's table for ``dataset`` when there is one."""
    lines = [f"### {dataset}", "", "| " + " | ".join(TABLE_HEADER) + " |", "|" + "---|" * len(TABLE_HEADER)]
    lines += ["| " + " | ".join(r) + " |" for r in table_rows(rows)]
    if dataset in PUBLISHED:
        lines += [
            "",
            f"Published (Bordia & Bowman 2019) for {dataset}:",
            "",
            "| " + " | ".join(TABLE_HEADER) + " |",
            "|" + "---|" * len(TABLE_HEADER),
        ]
        lines += ["| " + " | ".join(r) + " |" for r in published_rows(dataset)]
    return "\n".join(lines) + "\n"


def print_sweep_table(
    rows: list[dict[str, Any]], dataset: str, console: Console | None = None, published: bool = False
) -> None:
    """The published-style table (spec §9.2); with ``published``, the paper's table for the dataset
    after it."""
    console = console or Console()
    tables = [(f"Bordia & Bowman λ-sweep: {dataset}", table_rows(rows))]
    if published:
        if dataset in PUBLISHED:
            tables.append(
                (f"Published (Bordia & Bowman 2019, Tables 1–3): {dataset}", published_rows(dataset))
            )
        else:
            console.print(f"no published table for {dataset!r} (published: {', '.join(PUBLISHED)})")
    for title, body in tables:
        table = Table(title=title)
        for col in TABLE_HEADER:
            table.add_column(col)
        for r in body:
            table.add_row(*r)
        console.print(table)


SCORE_ROWS = (
    ("scored words", "n_scored"),
    ("dropped (one gender)", "n_dropped"),
    ("  only male", "n_only_male"),
    ("  only female", "n_only_female"),
    ("no gender", "n_no_gender"),
    ("male tokens", "n_male_tokens"),
    ("female tokens", "n_female_tokens"),
)


def _with_ci(value: float, ci: Any) -> str:
    lo, hi = ci if isinstance(ci, (tuple, list)) and len(ci) == 2 else (math.nan, math.nan)
    if any(v is None or (isinstance(v, float) and math.isnan(v)) for v in (lo, hi)):
        return f"{value:.3f}"
    return f"{value:.3f} [{lo:.3f}, {hi:.3f}]"


def print_scores(scores: dict[str, Any], top: int = 5, console: Console | None = None) -> None:
    """μ, σ (95 % bootstrap interval) and word counts, one column per context (fits 80 columns), then
    the ``top`` most male and most female words of :func:`~genderscope.bordia.scoring.score_documents`'s
    result."""
    console = console or Console()
    table = Table(title="Bordia & Bowman co-occurrence bias (nats)")
    table.add_column("")
    for ctx in scores:
        table.add_column(f"{ctx} context", justify="right")
    summaries = [sc.bias.summary for sc in scores.values()]
    table.add_row("μ = mean |bias|", *(_with_ci(s["mu"], s.get("mu_ci")) for s in summaries))
    table.add_row("σ of bias", *(_with_ci(s["sigma"], s.get("sigma_ci")) for s in summaries))
    for label, key in SCORE_ROWS:
        table.add_row(label, *(f"{s[key]:,}" for s in summaries))
    console.print(table)
    if top <= 0:
        return
    for ctx, sc in scores.items():
        b = sc.bias
        if not b.words:
            continue
        male = ", ".join(f"{escape(w)} ({v:.2f})" for w, v in zip(b.words[:top], b.bias[:top].tolist()))
        female = ", ".join(
            f"{escape(w)} ({v:.2f})" for w, v in zip(b.words[::-1][:top], b.bias[::-1][:top].tolist())
        )
        console.print(f"[bold]{ctx}[/bold] most male: {male}")
        console.print(f"[bold]{ctx}[/bold] most female: {female}")
