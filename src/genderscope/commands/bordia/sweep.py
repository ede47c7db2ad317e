"""The λ-sweep experiment (spec §9): score the training corpus, then for every λ train (or reuse), generate,
score the generated text and regress its bias on the training bias (β), for fixed and infinite context.

Layout under ``out``: ``<dataset>/train_bias/<context>/``, ``<dataset>/null_bias/<context>/`` (the unigram
null baseline, row ``null``), ``<dataset>/lambda_<λ>/{model,generation,samples,bias/<context>}/``, and
``results.json``, ``results.csv``, ``table.md`` at the top. Generation and scoring are task
``cooccurrence-amplification`` run on ``word-lm:<lambda dir>/model``
(:mod:`genderscope.commands.bordia.generation`; ``generation/`` holds its run log). Finished stages are
reused: training when ``model/metrics.json`` carries the same configuration hash (a different hash is an
error unless ``force``), samples through the response store; scoring is recomputed (it is cheap).
"""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from genderscope.bordia.amplification import AmplificationResult
from genderscope.bordia.bias import ScoreOptions, bootstrap_why_not
from genderscope.bordia.cooccurrence import CountConfig, atomic_write_text
from genderscope.bordia.inputs import input_datasets, resolve_splits, split_specs
from genderscope.bordia.null_model import NULL_SEED, null_amplification
from genderscope.bordia.pairs import GenderPairs, load_gender_pairs
from genderscope.bordia.scoring import ContextScore, context_configs, score_documents
from genderscope.bordia.tables import rows_to_csv, table_markdown
from genderscope.bordia.text import Document, read_corpus
from genderscope.commands.bordia.generation import generate_and_score
from genderscope.commands.bordia.glossary import METRIC_DOCS, REFERENCES
from genderscope.commands.bordia.options import SweepOptions
from genderscope.commands.bordia.runlog import command_manifest, interval_entry
from genderscope.commands.bordia.score import write_score_outputs
from genderscope.core.command import Command
from genderscope.common.errors import UsageError
from genderscope.core.options import check_choices
from genderscope.core.metrics import MetricEntry
from genderscope.core.results_file import ResultsFile, TaskResults
from genderscope.core.runlog import write_run_log

COMMAND = Command(
    "bordia-sweep",
    "bias amplification over a λ-sweep of debiased word-level LMs: μ, σ of their samples' word bias and "
    "β, the slope of that bias on the training corpus's (Bordia & Bowman)",
    METRIC_DOCS,
    references=REFERENCES,
)
NO_BETA = "β undefined: fewer than 3 words scored in both texts, or no variance in their training bias"
Log = Callable[[str], None]


def lambda_label(lam: float) -> str:
    """0 -> '0', 0.001 -> '0.001', 1.0 -> '1'."""
    return f"{lam:g}"


@dataclass(frozen=True)
class SweepPlan:
    """A sweep's options resolved: corpus files, dataset label, pair list, λ grid, counting and scoring."""

    options: SweepOptions
    dataset: str
    train: Path
    valid: Path
    test: Path | None
    pairs: str
    lambdas: list[float]
    count_config: CountConfig
    score_options: ScoreOptions

    @property
    def outliers(self) -> str | None:
        return None if self.options.outliers == "none" else self.options.outliers

    @property
    def model_label(self) -> str:
        """What results.json calls the model: the LM family, dataset and preset."""
        return f"bordia-awd-lstm:{self.dataset}:{self.options.preset}"


@dataclass
class SweepResult:
    """The rows of results.csv (one per λ label and context), the per-λ LM metrics and the results block."""

    plan: SweepPlan
    rows: list[dict[str, Any]]
    runs: dict[str, Any]
    results: TaskResults


def plan_sweep(options: SweepOptions) -> SweepPlan:
    """Check ``options`` and resolve files, pairs and configurations (raises :class:`UsageError`)."""
    from genderscope.bordia.pairs import DATASET_PAIRS

    check_choices(options)
    label, train, valid, test = resolve_splits(options.dataset, options.train, options.valid, options.test)
    lambdas = options.lambda_values()
    pairs = options.pairs or DATASET_PAIRS.get(label)
    if pairs is None:
        raise UsageError("--pairs is required (penn, wiki, dm or a file)")
    return SweepPlan(
        options, label, train, valid, test, pairs, lambdas, options.count_config(), options.score_options()
    )


def run_sweep(options: SweepOptions, log: Log | None = None) -> SweepResult:
    """Run (or resume) the sweep into ``options.out``; writes run.json, results.json, results.csv and
    table.md there."""
    started = time.time()
    plan = plan_sweep(options)
    log = log or (lambda s: None)
    base = options.out / plan.dataset
    configs = context_configs(plan.count_config, "both")
    gp = load_gender_pairs(plan.pairs, options.fix_wife_husband)
    log(f"scoring the training corpus {plan.train}")
    train_docs = read_corpus([plan.train])
    train_scores = score_documents(train_docs, gp, configs, plan.score_options)
    write_score_outputs(base / "train_bias", train_scores, [str(plan.train)])  # train_bias/{fixed,infinite}/
    rows: list[dict[str, Any]] = []
    for ctx, sc in train_scores.items():
        s = sc.bias.summary
        rows.append(
            {
                "dataset": plan.dataset,
                "lambda": "train",
                "context": ctx,
                "mu": s["mu"],
                "sigma": s["sigma"],
                "n_scored": s["n_scored"],
                **_cis(s),
            }
        )
    if options.null_baseline:
        log(f"scoring the unigram null baseline ({options.samples} × {options.words} words)")
        null = null_amplification(
            train_docs,
            train_scores,
            gp,
            configs,
            plan.score_options,
            options.samples,
            options.words,
            NULL_SEED,
            plan.outliers,
        )
        write_score_outputs(
            base / "null_bias",
            {ctx: sc for ctx, (sc, _) in null.items()},
            ["unigram sample of " + str(plan.train)],
            model=f"unigram-null:{plan.dataset}",
            extra={
                "amplification": {ctx: amp.as_dict() for ctx, (_, amp) in null.items()},
                "null_seed": NULL_SEED,
            },
        )
        rows += [_row(plan, "null", ctx, sc.bias.summary, amp) for ctx, (sc, amp) in null.items()]
    runs: dict[str, Any] = {}
    for lam in plan.lambdas:
        label = lambda_label(lam)
        lam_rows, runs[label] = _run_lambda(plan, lam, gp, train_docs, train_scores, log)
        rows += lam_rows
    results = _write_log(plan, gp, rows, runs, started)
    atomic_write_text(options.out / "results.csv", rows_to_csv(rows))
    atomic_write_text(options.out / "table.md", table_markdown(rows, plan.dataset))
    return SweepResult(plan, rows, runs, results)


def _run_lambda(
    plan: SweepPlan,
    lam: float,
    gp: GenderPairs,
    train_docs: list[Document],
    train_scores: dict[str, ContextScore],
    log: Log,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Train (or reuse), generate, score one λ; returns its rows and the LM's metrics."""
    from genderscope.bordia.lm.config import preset_config
    from genderscope.bordia.lm.train import train_lm

    o = plan.options
    label = lambda_label(lam)
    lam_dir = o.out / plan.dataset / f"lambda_{label}"
    cfg = preset_config(
        o.preset,
        plan.dataset,
        train=str(plan.train),
        valid=str(plan.valid),
        test=str(plan.test) if plan.test else None,
        pairs=plan.pairs,
        fix_wife_husband=o.fix_wife_husband,
        lam=float(lam),
        device=o.device,
        **o.train_overrides(),
    )
    _check_model_dir(lam_dir / "model", cfg.config_hash(), o.force)
    log(f"λ = {label}: training ({o.preset} preset)")
    metrics = train_lm(cfg, lam_dir / "model", log=lambda s: log(f"λ = {label}: {s}"))
    log(f"λ = {label}: generating {o.samples} × {o.words} words (word-lm via the runner)")
    scored = generate_and_score(plan, float(lam), lam_dir, gp, train_docs, train_scores, log)
    gen_scores, amps = scored.generated.scores, scored.generated.amplification
    reference = {ctx: a.as_dict() for ctx, a in scored.reference.amplification.items()}
    write_score_outputs(
        lam_dir / "bias",
        gen_scores,
        [str(lam_dir / "samples")],  # bias/{fixed,infinite}/
        extra={
            "amplification": {ctx: a.as_dict() for ctx, a in amps.items()},
            "reference_amplification": reference,
            "run_log": str(lam_dir / "generation"),
        },
        model=f"{plan.model_label}:lambda_{label}",
    )
    rows = [
        {
            **_row(plan, label, ctx, sc.bias.summary, amps[ctx]),
            "valid_ppl": metrics["valid_ppl"],
            "test_ppl": metrics["test_ppl"],
            "kappa_counts": json.dumps(metrics.get("kappa_counts", {}), sort_keys=True),
        }
        for ctx, sc in gen_scores.items()
    ]
    return rows, metrics


def _check_model_dir(model_dir: Path, config_hash: str, force: bool) -> None:
    cfg_file = model_dir / "config.json"
    if not cfg_file.exists():
        return
    old = json.loads(cfg_file.read_text()).get("config_hash")
    if old != config_hash:
        if not force:
            raise UsageError(
                f"{model_dir} was trained with another configuration ({old} ≠ {config_hash}); "
                "use another --out or --force to retrain"
            )
        shutil.rmtree(model_dir)


def _row(
    plan: SweepPlan, label: str, ctx: str, s: dict[str, Any], amp: AmplificationResult
) -> dict[str, Any]:
    """One results row: μ, σ of the scored text and β of its bias on the training bias."""
    return {
        "dataset": plan.dataset,
        "lambda": label,
        "context": ctx,
        "mu": s["mu"],
        "sigma": s["sigma"],
        "beta": amp.beta,
        "intercept": amp.intercept,
        "se_beta": amp.se,
        "beta_ci_low": amp.ci[0],
        "beta_ci_high": amp.ci[1],
        "r": amp.r,
        "n_scored": s["n_scored"],
        "n_common": amp.n_common,
        "outliers_removed": len(amp.removed),
        **_cis(s),
    }


def _cis(s: dict[str, Any]) -> dict[str, float]:
    """Bootstrap intervals of μ and σ from a bias summary (NaN when bootstrapping is off)."""
    return {
        "mu_ci_low": s["mu_ci"][0],
        "mu_ci_high": s["mu_ci"][1],
        "sigma_ci_low": s["sigma_ci"][0],
        "sigma_ci_high": s["sigma_ci"][1],
    }


def sweep_metrics(rows: list[dict[str, Any]], runs: dict[str, Any], bootstrap: int) -> dict[str, MetricEntry]:
    """``<context>.<train|null|lambda_λ>.{mu,sigma,beta,intercept}`` and ``lambda_λ.{test,valid}_ppl``.

    μ, σ (nats) carry their bootstrap interval, β its OLS t-interval; the others say why they have none.
    """
    metrics: dict[str, MetricEntry] = {}
    for r in rows:
        key = f"{r['context']}.{r['lambda'] if r['lambda'] in ('train', 'null') else 'lambda_' + r['lambda']}"
        why = bootstrap_why_not({"bootstrap": bootstrap, "n_scored": r["n_scored"]})
        metrics[f"{key}.mu"] = interval_entry(r["mu"], (r["mu_ci_low"], r["mu_ci_high"]), why)
        metrics[f"{key}.sigma"] = interval_entry(r["sigma"], (r["sigma_ci_low"], r["sigma_ci_high"]), why)
        if "beta" in r:
            metrics[f"{key}.beta"] = interval_entry(r["beta"], (r["beta_ci_low"], r["beta_ci_high"]), NO_BETA)
            metrics[f"{key}.intercept"] = MetricEntry(r["intercept"], no_ci="interval not computed for c")
    for label, m in runs.items():
        for name in ("test_ppl", "valid_ppl"):
            metrics[f"lambda_{label}.{name}"] = MetricEntry(m[name], no_ci="one trained model, no resampling")
    return metrics


def sweep_settings(plan: SweepPlan) -> dict[str, Any]:
    """The resolved settings recorded next to the metrics (and in run.json)."""
    o = plan.options
    return {
        "dataset": plan.dataset,
        "train": str(plan.train),
        "valid": str(plan.valid),
        "test": str(plan.test) if plan.test else None,
        "pairs": plan.pairs,
        "preset": o.preset,
        "lambdas": plan.lambdas,
        "n_samples": o.samples,
        "words": o.words,
        "seed_offset": o.seed_offset,
        "temperature": o.temperature,
        "fix_wife_husband": o.fix_wife_husband,
        "outliers": plan.outliers,
        "null_baseline": {"enabled": o.null_baseline, "seed": NULL_SEED},
        "count_config": plan.count_config.describe(),
        "score_options": plan.score_options.describe(),
    }


def _write_log(
    plan: SweepPlan, gp: GenderPairs, rows: list[dict[str, Any]], runs: dict[str, Any], started: float
) -> TaskResults:
    """run.json and results.json of the sweep folder; returns the results block."""
    settings = sweep_settings(plan)
    metrics = sweep_metrics(rows, runs, plan.score_options.bootstrap)
    results = TaskResults(
        metrics=metrics,
        extra={"rows": rows, "runs": runs, **settings},
        headline=[n for n in metrics if n.endswith((".mu", ".sigma", ".beta"))],
    )
    o = plan.options
    specs = [x for x in split_specs(o.dataset, o.train, o.valid, o.test) if x]
    datasets = {**input_datasets(specs), f"pairs:{gp.name}": gp.sha256}
    resolved = {**settings, "train_overrides": plan.options.train_overrides()}
    manifest = command_manifest(COMMAND.name, plan.options, resolved, datasets, started)
    results_file = ResultsFile(model=plan.model_label, tasks={COMMAND.name: results})
    write_run_log(plan.options.out, manifest, results_file)
    return results
