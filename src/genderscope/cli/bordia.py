"""``genderscope bordia ...``: score corpora, train/evaluate/sample word-level LMs, run the λ-sweep.

A thin layer over the commands' functions: every subcommand's options are an ``opt(...)`` dataclass of
:mod:`genderscope.commands.bordia.options`, routed like ``genderscope run``'s task options
(:func:`genderscope.cli.options.routed_command`). Importing this module does not import torch; the LM
commands import it when they run.
"""

from __future__ import annotations

import typer

from genderscope.cli.console import err, out
from genderscope.cli.options import routed_command
from genderscope.commands.bordia.options import (
    CorpusAuditOptions,
    CorpusScoreOptions,
    EvalOptions,
    GenerateOptions,
    SweepOptions,
    TrainOptions,
)
from genderscope.common.errors import UsageError
from genderscope.core.validate import writable_path

bordia_app = typer.Typer(
    no_args_is_help=True,
    rich_markup_mode="markdown",
    help="Bordia & Bowman (2019): co-occurrence gender bias of corpora, debiased word-level "
    "LMs, bias amplification over a λ-sweep.",
)


@routed_command(
    bordia_app,
    "score",
    CorpusScoreOptions,
    "bordia score",
    top=(int, typer.Option(5, "--top", help="print this many most male/female words")),
)
def score_cmd(options: CorpusScoreOptions, top: int) -> None:
    """Count gendered co-occurrences in corpora and score every word's bias (μ, σ).

    Examples:

    * `genderscope bordia score ptb:valid --pairs penn --out runs/ptb-valid`

    * `genderscope bordia score wikitext-2:valid --pairs wiki --context infinite --max-distance 100`

    * `genderscope bordia score my_corpus/ --pairs my_pairs.txt --mode reference -W 21 --authors-format`
    """
    from genderscope.bordia.tables import print_scores
    from genderscope.commands.bordia.score import score_corpus

    writable_path("--out", options.out, folder=True)
    scores = score_corpus(options)
    print_scores(scores, top, out)
    out.print(f"results in [bold]{options.out}[/bold]")


@routed_command(bordia_app, "audit", CorpusAuditOptions, "bordia audit")
def audit_cmd(options: CorpusAuditOptions) -> None:
    """Audit a pretraining-scale corpus: co-occurrence bias streamed shard by shard in bounded memory.

    Resumable (finished shards' counts are kept in OUT/partials); `--workers N` local processes or
    `--executor ray`; `--sample-shards N` / `--max-tokens N` for a quick estimate with an interval over
    shards.

    Examples:

    * `genderscope bordia audit 'corpus/*.jsonl.zst' --pairs wiki --workers 8 --out runs/audit`

    * `genderscope bordia audit corpus/ --pairs wiki --sample-shards 16 --out runs/audit-estimate`

    * `genderscope bordia audit corpus/ --pairs wiki --executor ray --ray-address auto --out /shared/audit`
    """
    from genderscope.bordia.tables import print_scores
    from genderscope.commands.bordia.audit import audit_corpus, print_audit

    def progress(p) -> None:  # type: ignore[no-untyped-def]
        rate = f"{p.tokens_per_s / 1e6:.2f}M tokens/s" if p.tokens else "–"
        reused = f" ({p.reused} reused)" if p.reused else ""
        ranges = f", ranges {p.units_done}/{p.units_total}" if p.units_total > p.total else ""
        line = f"shards {p.done}/{p.total}{reused}{ranges}, {p.tokens:,} tokens counted, {rate}"
        err.print(f"[dim]{line}[/dim]")

    result = audit_corpus(options, progress)
    print_scores(result.scores, min(options.top, 5), out)
    print_audit(result, out)
    out.print(f"results in [bold]{options.out}[/bold]")


@routed_command(
    bordia_app,
    "sweep",
    SweepOptions,
    "bordia sweep",
    published=(
        bool,
        typer.Option(False, "--published", help="also print the paper's table for the dataset"),
    ),
)
def sweep_cmd(options: SweepOptions, published: bool) -> None:
    """The λ-sweep: train, generate, score fixed and infinite context, print the published-style table.

    Resumable: finished λ runs and samples are reused.

    Example: `genderscope bordia sweep --train wikitext-2:valid --valid wikitext-2:test --pairs wiki
    --lambdas 0,0.1 --preset tiny --samples 50 --words 100 --out runs/sweep`
    """
    from genderscope.bordia.tables import print_sweep_table
    from genderscope.commands.bordia.sweep import run_sweep

    writable_path("--out", options.out, folder=True)
    result = run_sweep(options, log=lambda s: err.print(f"[dim]{s}[/dim]"))
    print_sweep_table(result.rows, result.plan.dataset, out, published=published)
    out.print(f"results in [bold]{options.out}[/bold] (results.json, results.csv, table.md)")


# ------------------------------------------------------------------------------------------------ LM commands


@routed_command(bordia_app, "train", TrainOptions, "bordia train")
def train_cmd(options: TrainOptions) -> None:
    """Train a word-level AWD-LSTM, optionally with the debiasing regulariser λ‖NB‖²_F.

    Examples:

    * `genderscope bordia train --train wikitext-2:valid --valid wikitext-2:test --pairs wiki --lambda 0.1
      --preset tiny --out runs/wt2-l0.1`

    * `genderscope bordia train --dataset ptb --train ptb.train.txt --preset paper --device cuda --lambda 0.01
      --out runs/ptb-l0.01`
    """
    from genderscope.bordia.inputs import resolve_splits
    from genderscope.bordia.lm.config import preset_config
    from genderscope.bordia.lm.train import train_lm
    from genderscope.bordia.pairs import DATASET_PAIRS

    o = options
    writable_path("--out", o.out, folder=True)
    label, tr, va, te = resolve_splits(o.dataset, o.train, o.valid, o.test)
    pairs = o.pairs or DATASET_PAIRS.get(label) or ("penn" if o.lam == 0 else None)
    if pairs is None:
        raise UsageError("--pairs is required with --lambda > 0 (penn, wiki, dm or a file)")
    cfg = preset_config(
        o.preset,
        o.dataset,
        train=str(tr),
        valid=str(va),
        test=str(te) if te else None,
        pairs=pairs,
        lam=o.lam,
        device=o.device,
        **o.overrides(),
    )
    metrics = train_lm(cfg, o.out, log=out.print)
    out.print(
        f"valid ppl {metrics['valid_ppl']:.2f}, test ppl {metrics['test_ppl']:.2f} "
        f"(best epoch {metrics['best_epoch']}); run in [bold]{o.out}[/bold]"
    )


@routed_command(bordia_app, "eval", EvalOptions, "bordia eval")
def eval_cmd(options: EvalOptions) -> None:
    """Perplexity of a run's best checkpoint on its validation and test text.

    Example: `genderscope bordia eval runs/wt2-l0.1`
    """
    from genderscope.bordia.inputs import one_path
    from genderscope.bordia.lm.evaluation import evaluate_run

    o = options
    valid = one_path(o.valid) if o.valid else None
    m = evaluate_run(o.run_dir, o.device, valid, one_path(o.test) if o.test else None)
    out.print(
        f"valid ppl {m['valid_ppl']:.2f} (CE {m['valid_loss']:.4f}), test ppl {m['test_ppl']:.2f} "
        f"(CE {m['test_loss']:.4f})"
    )


@routed_command(bordia_app, "generate", GenerateOptions, "bordia generate")
def generate_cmd(options: GenerateOptions) -> None:
    """Sample text: one file per sample (RUN_DIR/samples/NNNNN.txt) and samples.jsonl (one record per sample).

    Example: `genderscope bordia generate runs/wt2-l0.1 --samples 100 --words 200`
    """
    from genderscope.bordia.lm.generate import generate_samples

    o = options
    target = writable_path("--out", o.out or o.run_dir / "samples", folder=True)
    generate_samples(
        o.run_dir, target, o.samples, o.words, o.temperature, o.seed_offset, o.batch, o.device, force=o.force
    )
    files = "NNNNN.txt, samples.jsonl, manifest.json"
    out.print(f"{o.samples} samples × {o.words} words in [bold]{target}[/bold] ({files})")
