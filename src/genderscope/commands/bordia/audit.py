"""``bordia audit``: co-occurrence bias of a pretraining-scale corpus, streamed shard by shard.

The map (count a shard, write its partial counts to ``<out>/partials/``) runs on local processes or a Ray
cluster (:mod:`genderscope.bordia.audit`); the reduce adds the partial counts in shard order; the bias,
μ and σ are then computed exactly as ``bordia score`` does. Output folder: ``<context>/counts.parquet``,
``<context>/bias.parquet``, ``corpus_stats.json`` (:mod:`genderscope.bordia.corpus_stats`: the reference
corpus of task ``cooccurrence-amplification`` via ``--bias-stats``), ``partials/`` and the run log
(run.json, results.json: μ, σ with intervals, the most biased words, shards, tokens, throughput).
"""

from __future__ import annotations

import shutil
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional

from genderscope.bordia.audit import (
    AuditRun,
    CountPlan,
    Progress,
    merge_partials,
    run_map,
    shard_bootstrap,
    shard_order,
)
from genderscope.bordia.bias import bias_scores
from genderscope.bordia.corpus_stats import write_corpus_stats
from genderscope.bordia.inputs import default_pairs
from genderscope.bordia.pairs import load_gender_pairs
from genderscope.bordia.scoring import ContextScore, context_configs
from genderscope.bordia.shards import Shard, resolve_shards
from genderscope.commands.bordia.glossary import METRIC_DOCS, REFERENCES
from genderscope.commands.bordia.options import CorpusAuditOptions
from genderscope.commands.bordia.runlog import command_manifest, interval_entry, score_metrics
from genderscope.core.command import Command
from genderscope.common.errors import DataError
from genderscope.core.evidence import ReportFacts
from genderscope.core.options import check_choices
from genderscope.core.metrics import MetricEntry
from genderscope.core.results_file import ResultsFile, TaskResults
from genderscope.core.runlog import write_run_log

COMMAND = Command(
    "bordia-audit",
    "co-occurrence gender bias of a sharded (pretraining-scale) corpus, streamed: μ, σ of "
    "ln P(w|F)/P(w|M) (Bordia & Bowman)",
    METRIC_DOCS,
    ReportFacts(evidence=("metrics.fixed.n_scored",), evidence_unit="scored words"),
    references=REFERENCES,
)


@dataclass
class AuditResult:
    """Scores per context, the map's outcome and whether this is an estimate (a subset of shards)."""

    scores: dict[str, ContextScore]
    run: AuditRun
    estimate: Optional[dict[str, Any]]
    results: TaskResults


def selected_shards(options: CorpusAuditOptions, shards: list[Shard]) -> list[Shard]:
    """All shards, or for an estimate the seeded random order (first ``sample_shards`` of it)."""
    if options.sample_shards is None and options.max_tokens is None:
        return shards
    order = shard_order(shards, options.sample_seed)
    return order[: options.sample_shards] if options.sample_shards else order


def audit_corpus(
    options: CorpusAuditOptions, progress: Callable[[Progress], None] | None = None
) -> AuditResult:
    """``bordia audit``: count the shards (resuming), add the counts, score, write tables and run log."""
    started = time.time()
    check_choices(options)
    base, score_options = options.count_config(), options.score_options()
    pairs = load_gender_pairs(
        default_pairs(options.corpora, options.pairs), fix_wife_husband=options.fix_wife_husband
    )
    configs = tuple(context_configs(base, options.context))
    shards = resolve_shards(options.corpora)
    out = Path(options.out)
    if options.fresh and (out / "partials").exists():
        shutil.rmtree(out / "partials")
    plan = CountPlan(
        pairs, configs, str(out / "partials"), options.text_field, options.batch_chars, options.range_bytes
    )
    cfg0 = configs[-1]
    if (
        cfg0.geometry == "paper"
        and cfg0.context == "infinite"
        and cfg0.max_distance is None
        and cfg0.boundary == "document"
    ):
        warnings.warn(
            "untruncated infinite context with document boundaries: μ, σ depend on document length "
            "(spec §3.3); consider --max-distance or --boundary line",
            stacklevel=2,
        )
    chosen = selected_shards(options, shards)
    run = run_map(
        chosen,
        plan,
        options.executor,
        options.workers,
        options.skip_bad_shards,
        options.max_tokens,
        options.ray_address,
        progress,
    )
    if run.failed is not None:
        kept = len(run.counted)
        whose = "1 finished shard's" if kept == 1 else f"{kept} finished shards'"
        raise DataError(
            f"{run.failed.error}; stopped ({whose} counts kept in {plan.partials}: rerun to resume, or add "
            "--skip-bad-shards)"
        )
    acc = merge_partials(plan, run.done_shards(), run.units)
    scores = {}
    for cfg in configs:
        counts = acc.counts(cfg.context, cfg, pairs)
        scores[cfg.context] = ContextScore(counts, bias_scores(counts, score_options))
    is_estimate = len(run.counted) < len(shards) - len(run.skipped)
    estimate = None
    if is_estimate:
        boot = shard_bootstrap(plan, run.done_shards(), score_options, seed=options.sample_seed)
        per_shard = acc.totals["n_tokens"] / max(1, len(run.counted))
        lo, hi = boot.pop("tokens_per_shard")["mean"]
        estimate = {
            "shards_counted": len(run.counted),
            "shards_total": len(shards),
            "shard_bootstrap": boot,
            "corpus_tokens": [per_shard * len(shards), lo * len(shards), hi * len(shards)],
        }
    results = audit_results(scores, run, shards, estimate, options.top)
    extra = {"totals": acc.totals, "shards": len(shards), "shards_counted": len(run.counted)}
    write_corpus_stats(out, scores, extra)
    resolved = {
        "pairs": pairs.describe(),
        "count_configs": {ctx: sc.counts.config.describe() for ctx, sc in scores.items()},
        "score_options": score_options.describe(),
    }
    datasets = {f"pairs:{pairs.name}": pairs.sha256}
    manifest = command_manifest(COMMAND.name, options, resolved, datasets, started)
    model = "corpus:" + ",".join(options.corpora)
    write_run_log(out, manifest, ResultsFile(model=model, tasks={COMMAND.name: results}))
    return AuditResult(scores, run, estimate, results)


def most_biased(scores: dict[str, ContextScore], top: int) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """The ``top`` most male- and female-leaning scored words per context (word, bias, counts)."""
    out: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for ctx, sc in scores.items():
        b = sc.bias
        rows = [
            {"word": w, "bias": float(v), "freq": int(n), "male": m.item(), "female": f.item()}
            for w, v, n, m, f in zip(b.words, b.bias, b.freq, b.c_male, b.c_female)
        ]
        out[ctx] = {"male": rows[:top], "female": rows[::-1][:top]}
    return out


def audit_results(
    scores: dict[str, ContextScore],
    run: AuditRun,
    shards: list[Shard],
    estimate: Optional[dict[str, Any]],
    top: int,
) -> TaskResults:
    """results.json block: ``bordia score``'s metrics (+ shard-bootstrap intervals for an estimate),
    tokens, shards, throughput, skipped shards, the most biased words."""
    metrics = score_metrics(scores)
    if estimate:
        for ctx in scores:
            for stat in ("mu", "sigma"):
                lo_hi = estimate["shard_bootstrap"][ctx][stat]
                metrics[f"{ctx}.{stat}_over_shards"] = interval_entry(
                    scores[ctx].bias.summary[stat], lo_hi, "fewer than 2 shards counted"
                )
    first = next(iter(scores.values())).counts
    metrics["n_tokens"] = MetricEntry(first.n_tokens, no_ci="an exact count")
    counted = [o for o in run.counted if not o.reused]
    secs = sum(o.seconds for o in counted)
    cpu = sum(o.cpu_seconds for o in counted)
    names = {s.index: s.path for s in shards}
    extra = {
        "inputs": [s.path for s in run.done_shards()],
        "contexts": {c: {"counts": sc.counts.summary(), "bias": sc.bias.summary} for c, sc in scores.items()},
        "shards": {
            "total": len(shards),
            "counted": len(run.counted),
            "reused": len(run.counted) - len(counted),
            "skipped": [{"shard": names[o.index], "error": o.error, "tokens": o.tokens} for o in run.skipped],
        },
        "ranges": {"total": sum(len(u) for u in run.units.values()), "reused": run.units_reused},
        "throughput": {
            "wall_seconds": round(run.seconds, 3),
            "tokens_counted_now": run.tokens_now,
            "tokens_per_second_per_worker": (run.tokens_now / secs) if secs else None,
            "tokens_per_cpu_second_per_worker": (run.tokens_now / cpu) if cpu else None,
        },
        "estimate": estimate,
        "most_biased": most_biased(scores, top),
    }
    return TaskResults(
        metrics=metrics, extra=extra, headline=[f"{c}.{s}" for c in scores for s in ("mu", "sigma")]
    )


def print_audit(result: AuditResult, console: Any) -> None:
    """Shards, tokens, throughput, skipped shards and the estimate's intervals over shards (≤ 80 columns)."""
    from rich.markup import escape

    ex = result.results.extra
    sh, tp = ex["shards"], ex["throughput"]
    rate = tp["tokens_per_second_per_worker"]
    console.print(
        f"shards: {sh['counted']}/{sh['total']} counted ({sh['reused']} reused), "
        f"{result.results.metrics['n_tokens'].value:,} tokens; "
        + (f"{rate / 1e6:.2f}M tokens/s per worker" if rate else "nothing counted now")
    )
    for s in sh["skipped"]:
        console.print(f"[yellow]skipped[/yellow] {escape(s['error'])} ({s['tokens']:,} tokens)")
    if result.estimate:
        boot = result.estimate["shard_bootstrap"]
        for ctx in result.scores:
            mu, sd = boot[ctx]["mu"], boot[ctx]["sigma"]
            console.print(
                f"estimate ({ctx}): 95% interval over shards μ [{mu[0]:.3f}, {mu[1]:.3f}], "
                f"σ [{sd[0]:.3f}, {sd[1]:.3f}]"
            )
        tok = result.estimate.get("corpus_tokens")
        if tok:
            console.print(f"estimated corpus tokens: {tok[0]:,.0f} [{tok[1]:,.0f}, {tok[2]:,.0f}]")
