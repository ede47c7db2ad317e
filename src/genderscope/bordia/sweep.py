"""The λ-sweep experiment (spec §9): score the training corpus, then for every λ train (or reuse), generate,
score the generated text and regress its bias on the training bias (β), for fixed and infinite context.

Layout under ``out``: ``<dataset>/train_bias/<context>/``, ``<dataset>/null_bias/<context>/`` (the unigram null
baseline, row ``null``), ``<dataset>/lambda_<λ>/{model,samples,bias/<context>}/``, and ``results.json``,
``results.csv``, ``table.md`` at the top. Finished stages are
reused: training when ``model/metrics.json`` carries the same configuration hash (a different hash is an
error unless ``force``), generation per sample file; scoring is recomputed (it is cheap).
"""

from __future__ import annotations

import csv
import io
import json
import math
import shutil
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Sequence

from genderscope.bordia.amplification import AmplificationResult, amplification
from genderscope.bordia.bias import ScoreOptions
from genderscope.bordia.cooccurrence import CountConfig, atomic_write_json, atomic_write_text
from genderscope.bordia.null_model import NULL_SEED, null_amplification
from genderscope.bordia.pairs import load_gender_pairs
from genderscope.bordia.scoring import context_configs, score_documents, write_score_outputs
from genderscope.bordia.text import documents_from_texts, read_corpus
from genderscope.core.errors import UsageError

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
DEFAULT_LAMBDAS = (0.0, 0.001, 0.01, 0.1, 0.5, 0.8, 1.0)
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


def lambda_label(lam: float) -> str:
    """0 -> '0', 0.001 -> '0.001', 1.0 -> '1'."""
    return f"{lam:g}"


@dataclass
class SweepSpec:
    """What a sweep runs: corpus files, pairs, λ grid, LM settings, generation and scoring settings."""

    train: Path
    valid: Path
    test: Path | None
    dataset: str
    pairs: str
    lambdas: Sequence[float] = DEFAULT_LAMBDAS
    preset: str = "tiny"
    train_overrides: dict[str, Any] = field(default_factory=dict)
    n_samples: int = 2000
    words: int = 500
    temperature: float = 1.0
    seed_offset: int = 500
    count_config: CountConfig = field(default_factory=CountConfig)
    score_options: ScoreOptions = field(default_factory=ScoreOptions)
    fix_wife_husband: bool = False
    outliers: str | None = None
    null_baseline: bool = True
    device: str = "cpu"
    force: bool = False

    @property
    def model_label(self) -> str:
        """What results.json calls the model: the LM family, dataset and preset."""
        return f"bordia-awd-lstm:{self.dataset}:{self.preset}"


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


def run_sweep(spec: SweepSpec, out: Path, log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Run (or resume) the sweep; returns results.json's content."""
    from genderscope.bordia.lm.generate import generate_samples, read_samples
    from genderscope.bordia.lm.train import preset_config, train_lm

    log = log or (lambda s: None)
    out = Path(out)
    base = out / spec.dataset
    configs = context_configs(spec.count_config, "both")
    gp = load_gender_pairs(spec.pairs, spec.fix_wife_husband)
    log(f"scoring the training corpus {spec.train}")
    train_docs = read_corpus([spec.train])
    train_scores = score_documents(train_docs, gp, configs, spec.score_options)
    write_score_outputs(base / "train_bias", train_scores, [str(spec.train)])  # train_bias/{fixed,infinite}/
    rows: list[dict[str, Any]] = []
    for ctx, sc in train_scores.items():
        s = sc.bias.summary
        rows.append(
            {
                "dataset": spec.dataset,
                "lambda": "train",
                "context": ctx,
                "mu": s["mu"],
                "sigma": s["sigma"],
                "n_scored": s["n_scored"],
                **_cis(s),
            }
        )
    if spec.null_baseline:
        log(f"scoring the unigram null baseline ({spec.n_samples} × {spec.words} words)")
        null = null_amplification(
            train_docs,
            train_scores,
            gp,
            configs,
            spec.score_options,
            spec.n_samples,
            spec.words,
            NULL_SEED,
            spec.outliers,
        )
        write_score_outputs(
            base / "null_bias",
            {ctx: sc for ctx, (sc, _) in null.items()},
            ["unigram sample of " + str(spec.train)],
            model=f"unigram-null:{spec.dataset}",
            extra={
                "amplification": {ctx: amp.as_dict() for ctx, (_, amp) in null.items()},
                "null_seed": NULL_SEED,
            },
        )
        rows += [_row(spec, "null", ctx, sc.bias.summary, amp) for ctx, (sc, amp) in null.items()]
    runs: dict[str, Any] = {}
    for lam in spec.lambdas:
        label = lambda_label(lam)
        lam_dir = base / f"lambda_{label}"
        cfg = preset_config(
            spec.preset,
            spec.dataset,
            train=str(spec.train),
            valid=str(spec.valid),
            test=str(spec.test) if spec.test else None,
            pairs=spec.pairs,
            fix_wife_husband=spec.fix_wife_husband,
            lam=float(lam),
            device=spec.device,
            **spec.train_overrides,
        )
        _check_model_dir(lam_dir / "model", cfg.config_hash(), spec.force)
        log(f"λ = {label}: training ({spec.preset} preset)")
        metrics = train_lm(cfg, lam_dir / "model", log=lambda s, label=label: log(f"λ = {label}: {s}"))
        log(f"λ = {label}: generating {spec.n_samples} × {spec.words} words")
        generate_samples(
            lam_dir / "model",
            lam_dir / "samples",
            spec.n_samples,
            spec.words,
            spec.temperature,
            spec.seed_offset,
            device=spec.device,
            force=spec.force,
        )
        docs = documents_from_texts(
            read_samples(lam_dir / "samples", spec.n_samples), prefix=f"lambda_{label}"
        )
        gen_scores = score_documents(docs, gp, configs, spec.score_options)
        amps = {
            ctx: amplification(
                train_scores[ctx].bias.as_dict(),
                sc.bias.as_dict(),
                outliers=spec.outliers,
                bootstrap=spec.score_options.bootstrap,
                seed=spec.score_options.seed,
            )
            for ctx, sc in gen_scores.items()
        }
        write_score_outputs(
            lam_dir / "bias",
            gen_scores,
            [str(lam_dir / "samples")],  # bias/{fixed,infinite}/
            extra={"amplification": {ctx: a.as_dict() for ctx, a in amps.items()}},
            model=f"{spec.model_label}:lambda_{label}",
        )
        for ctx, sc in gen_scores.items():
            amp = amps[ctx]
            rows.append(
                {
                    **_row(spec, label, ctx, sc.bias.summary, amp),
                    "valid_ppl": metrics["valid_ppl"],
                    "test_ppl": metrics["test_ppl"],
                    "kappa_counts": json.dumps(metrics.get("kappa_counts", {}), sort_keys=True),
                }
            )
        runs[label] = metrics
    results = _results_json(spec, rows, runs)
    atomic_write_json(out / "results.json", results)
    atomic_write_text(out / "results.csv", rows_to_csv(rows))
    atomic_write_text(out / "table.md", table_markdown(rows, spec.dataset))
    return results


def _row(
    spec: SweepSpec, label: str, ctx: str, s: dict[str, Any], amp: AmplificationResult
) -> dict[str, Any]:
    """One results row: μ, σ of the scored text and β of its bias on the training bias."""
    return {
        "dataset": spec.dataset,
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


def _results_json(spec: SweepSpec, rows: list[dict[str, Any]], runs: dict[str, Any]) -> dict[str, Any]:
    from genderscope import __version__

    metrics: dict[str, dict[str, Any]] = {}
    for r in rows:
        key = f"{r['context']}.{r['lambda'] if r['lambda'] in ('train', 'null') else 'lambda_' + r['lambda']}"
        metrics[f"{key}.mu"] = {"value": r["mu"], "ci_low": r["mu_ci_low"], "ci_high": r["mu_ci_high"]}
        metrics[f"{key}.sigma"] = {
            "value": r["sigma"],
            "ci_low": r["sigma_ci_low"],
            "ci_high": r["sigma_ci_high"],
        }
        if "beta" in r:
            metrics[f"{key}.beta"] = {
                "value": r["beta"],
                "ci_low": r["beta_ci_low"],
                "ci_high": r["beta_ci_high"],
            }
            metrics[f"{key}.intercept"] = {"value": r["intercept"]}
    for label, m in runs.items():
        metrics[f"lambda_{label}.test_ppl"] = {"value": m["test_ppl"]}
        metrics[f"lambda_{label}.valid_ppl"] = {"value": m["valid_ppl"]}
    return {
        "genderscope_version": __version__,
        "model": spec.model_label,
        "tasks": {
            "bordia-sweep": {
                "metrics": metrics,
                "rows": rows,
                "runs": runs,
                "dataset": spec.dataset,
                "train": str(spec.train),
                "valid": str(spec.valid),
                "test": str(spec.test) if spec.test else None,
                "pairs": spec.pairs,
                "preset": spec.preset,
                "lambdas": [float(x) for x in spec.lambdas],
                "n_samples": spec.n_samples,
                "words": spec.words,
                "seed_offset": spec.seed_offset,
                "temperature": spec.temperature,
                "fix_wife_husband": spec.fix_wife_husband,
                "outliers": spec.outliers,
                "null_baseline": {"enabled": spec.null_baseline, "seed": NULL_SEED},
                "count_config": spec.count_config.describe(),
                "score_options": spec.score_options.describe(),
            }
        },
    }


def rows_to_csv(rows: list[dict[str, Any]]) -> str:
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


def with_overrides(spec: SweepSpec, **changes: Any) -> SweepSpec:
    return replace(spec, **changes)
