"""Report sections of ``bordia score`` and ``bordia sweep`` folders (run-log entries ``bordia-score`` and
``bordia-sweep``, registered in :data:`genderscope.catalogue.COMMANDS`): μ/σ of word bias
ln P(w|F)/P(w|M), β by λ, most gendered words."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from genderscope.core.results_file import TaskResults
from genderscope.report import svg
from genderscope.report.helpers import find_table, num, pair, point
from genderscope.report.runs import RunData
from genderscope.report.views import Figure, Rendered, TableView, fmt_ci
from genderscope.core.textfmt import fmt


def _read_bias_tsv(path: Path) -> dict[str, float]:
    """word -> bias from a bias.tsv (columns include 'word' and 'bias')."""
    out: dict[str, float] = {}
    with open(path, encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE):
            v = num(row.get("bias"))
            if v is not None and row.get("word") is not None:
                out[row["word"]] = v
    return out


def _bias_pairs(
    run: RunData, res: TaskResults, lam: Any, context: str, dataset: Any = None
) -> tuple[list, list, list]:
    """(train bias, generated bias, word) for the words scored in both, from the entry or bias.tsv files."""
    words = res.extra.get("words")
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
        if num(d.parent.parent.name.removeprefix("lambda_")) == num(lam)
        for p in sorted(d.rglob("bias.tsv"))
    ]
    if not cands_train or not cands_gen:
        return [], [], []
    train = _read_bias_tsv(cands_train[0])
    gen = _read_bias_tsv(cands_gen[0])
    common = [w for w in gen if w in train]
    return [train[w] for w in common], [gen[w] for w in common], common


def render(name: str, res: TaskResults, run: RunData) -> Rendered:
    """``bordia sweep`` folders (a λ table): β by λ and word-bias scatters; else ``bordia score``."""
    out = Rendered()
    key, rows = find_table(res, {"mu"}, ("table", "rows", "sweep", "results"))
    lam_key = next((k for k in ("lambda", "lam", "λ") if rows and k in rows[0]), None)
    if rows and lam_key:
        out.handled.add(key)
        out.tables.append(TableView.from_records("λ table (published layout: μ, σ, β per context)", rows))
        gen_rows = [r for r in rows if num(r.get(lam_key)) is not None]
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
                        pair(r.get("beta_ci95"))
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
                xs, ys, ws = _bias_pairs(run, res, r.get(lam_key), ctx, r.get("dataset"))
                if xs:
                    out.figures.append(
                        Figure(
                            f"Generated vs training bias, λ = {fmt(r.get(lam_key))}, {ctx}",
                            svg.scatter_line(
                                xs,
                                ys,
                                labels=ws,
                                slope=num(r.get("beta")),
                                intercept=num(r.get("intercept")),
                                title=f"Word bias: generated vs training (λ = {fmt(r.get(lam_key))}, {ctx})",
                                xlabel="bias in the training corpus (ln P(w|F)/P(w|M))",
                                ylabel="bias in generated text",
                            ),
                            "Each dot is a word scored in both corpora; red: the fitted β line; "
                            "dashed: y = x.",
                        )
                    )
        best = min(
            (r for r in gen_rows if num(r.get("mu")) is not None), key=lambda r: float(r["mu"]), default=None
        )
        train = next((r for r in rows if num(r.get(lam_key)) is None), None)
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
    return _render_score(res, run)


def _render_score(res: TaskResults, run: RunData) -> Rendered:
    """`bordia score` output: μ, σ (per context) and word counts of one corpus."""
    out = Rendered()
    ctxs = [n[: -len(".mu")] for n in res.metrics if n.endswith(".mu")]
    if not ctxs and "mu" in res.metrics:
        ctxs = [""]
    pts, parts = [], []
    for ctx in ctxs:
        pre = f"{ctx}." if ctx else ""
        for stat in ("mu", "sigma"):
            m = res.metrics.get(pre + stat)
            if m is not None:
                pts.append(point(f"{ctx or 'corpus'} context", m, {"mu": "μ", "sigma": "σ"}[stat]))
        mu = res.metrics.get(pre + "mu")
        n = res.metrics.get(pre + "n_scored")
        if mu is not None:
            parts.append(
                f"{ctx or 'corpus'} context: μ = {fmt(mu.value, 3)} {fmt_ci(mu)}"
                + (f" over {fmt(n.value)} scored words" if n else "")
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
    if isinstance(res.extra.get("most_biased"), dict):  # `bordia audit`
        _render_audit(res, out)
        return out
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


def _render_audit(res: TaskResults, out: Rendered) -> None:
    """`bordia audit` extras: shards and tokens, skipped shards, the estimate's intervals over shards, and
    the most gendered words per context (from results.json; every word in ``<context>/bias.parquet``)."""
    shards = res.extra.get("shards") or {}
    tp = res.extra.get("throughput") or {}
    n_tok = res.metrics.get("n_tokens")
    rows = [
        {"what": "shards counted", "value": f"{shards.get('counted')} of {shards.get('total')}"},
        {"what": "tokens", "value": fmt(n_tok.value) if n_tok else "–"},
        {"what": "tokens/s per worker", "value": fmt(tp.get("tokens_per_second_per_worker"))},
        {"what": "shards skipped (unreadable)", "value": str(len(shards.get("skipped") or []))},
    ]
    est = res.extra.get("estimate")
    if isinstance(est, dict):
        tok = est.get("corpus_tokens") or [None, None, None]
        rows.append(
            {"what": "estimated corpus tokens", "value": f"{fmt(tok[0])} [{fmt(tok[1])}, {fmt(tok[2])}]"}
        )
        for ctx, b in (est.get("shard_bootstrap") or {}).items():
            for stat in ("mu", "sigma"):
                lo, hi = (b.get(stat) or [None, None])[:2]
                rows.append(
                    {"what": f"{ctx} {stat}: 95% interval over shards", "value": f"[{fmt(lo)}, {fmt(hi)}]"}
                )
        out.notes.append(
            f"Estimate from {est.get('shards_counted')} of {est.get('shards_total')} shards: the intervals "
            "over shards show how much μ and σ move with the sample of shards."
        )
    out.tables.append(TableView.from_records("Corpus audit", rows))
    skipped = shards.get("skipped") or []
    if skipped:
        out.tables.append(TableView.from_records("Shards left out (--skip-bad-shards)", skipped))
    for ctx, sides in res.extra["most_biased"].items():
        ext = (sides.get("male") or [])[:12] + list(reversed((sides.get("female") or [])[:12]))
        if ext:
            out.figures.append(
                Figure(
                    f"Most gendered words ({ctx} context)",
                    svg.point_plot(
                        [svg.Point(str(r["word"]), r["bias"]) for r in ext],
                        title=f"Most male-leaning (top) and female-leaning (bottom) words, {ctx} context",
                        xlabel="bias = ln P(w|F)/P(w|M)",
                        ref=0.0,
                        label_width=160,
                    ),
                    f"The 12 most male- and 12 most female-leaning scored words (all in {ctx}/bias.parquet).",
                )
            )
