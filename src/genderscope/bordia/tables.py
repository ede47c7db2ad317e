"""Tables of Bordia & Bowman results: the paper's published rows, results.csv, table.md and the terminal.

Row dicts are those of :func:`genderscope.commands.bordia.sweep.run_sweep` (one per λ label and context: μ,
σ in nats, β and intercept of the generated-on-training bias regression, perplexities).
"""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table


def _published() -> dict[str, dict[str, tuple[float | None, ...]]]:
    """published.tsv beside this module: dataset -> λ -> its values (an empty cell: None)."""
    with open(Path(__file__).with_name("published.tsv"), encoding="utf-8", newline="") as fh:
        rows = csv.reader(fh, delimiter="\t")
        next(rows)  # the header
        out: dict[str, dict[str, tuple[float | None, ...]]] = {}
        for dataset, lam, *values in rows:
            out.setdefault(dataset, {})[lam] = tuple(float(v) if v else None for v in values)
    return out


#: the paper's Tables 1–3 (spec §9.3): λ -> (fixed μ, σ, β, infinite μ, σ, β, Ppl.); "train" has no β/Ppl.
PUBLISHED = _published()

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
