"""``genderscope bordia ...``: score corpora, train/evaluate/sample word-level LMs, run the λ-sweep.

Importing this module does not import torch; the LM commands import it when they run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, List, Optional

import typer
from rich.console import Console
from rich.table import Table

from genderscope.core.errors import UsageError

bordia_app = typer.Typer(
    no_args_is_help=True,
    rich_markup_mode="markdown",
    help="Bordia & Bowman (2019): co-occurrence gender bias of corpora, debiased word-level "
    "LMs, bias amplification over a λ-sweep.",
)
out = Console()
err = Console(stderr=True)

MODES = ("paper", "reference")


def _parse_max_distance(value: str) -> int | None:
    if value.lower() in ("none", "inf", "infinite"):
        return None
    try:
        d = int(value)
    except ValueError:
        raise UsageError(f"--max-distance must be an integer or 'none', got {value!r}") from None
    if d < 1:
        raise UsageError(f"--max-distance must be ≥ 1, got {d}")
    return d


def _csv_set(value: Optional[str]) -> frozenset[str]:
    return frozenset(v for v in (value or "").split(",") if v)


def build_score_setup(
    mode: str,
    k: int,
    W: Optional[int],
    beta: float,
    max_distance: str,
    boundary: str,
    drop_tokens: Optional[str],
    stopwords: str,
    exclude: Optional[str],
    min_count: int,
    drop_non_alpha: bool,
    normalise_over: str,
    paper_formula_shift: bool,
    smoothing: float,
    bootstrap: int,
):
    """CLI options -> (base CountConfig, ScoreOptions)."""
    from genderscope.bordia.bias import ScoreOptions
    from genderscope.bordia.cooccurrence import CountConfig
    from genderscope.bordia.pairs import load_stopwords

    if mode not in MODES:
        raise UsageError(f"--mode must be paper or reference, got {mode!r}")
    drop = None if drop_tokens is None else _csv_set(drop_tokens)
    base = CountConfig(
        geometry=mode,
        k=k,
        W=W,
        decay=beta,
        max_distance=_parse_max_distance(max_distance),
        boundary=boundary,
        drop_tokens=drop,
    )
    if mode == "reference" and boundary != "document":
        raise UsageError(
            "--boundary line needs --mode paper (the reference geometry always uses whole files)"
        )
    opts = ScoreOptions(
        stopwords=load_stopwords(stopwords),
        extra_exclude=_csv_set(exclude),
        min_count=min_count,
        drop_non_alpha=drop_non_alpha,
        normalise_over=normalise_over,
        paper_formula_shift=paper_formula_shift,
        smoothing=smoothing,
        bootstrap=bootstrap,
    )
    return base, opts


def _default_pairs(corpora: List[str], pairs: Optional[str]) -> str:
    from genderscope.bordia.pairs import DATASET_PAIRS

    if pairs:
        return pairs
    names = {c.partition(":")[0] for c in corpora}
    if len(names) == 1 and next(iter(names)) in DATASET_PAIRS and not Path(corpora[0]).exists():
        return DATASET_PAIRS[next(iter(names))]
    raise UsageError(
        "--pairs is required (penn for PTB, wiki for WikiText-2, dm for CNN/Daily Mail, or a file)"
    )


def print_scores(scores, top: int = 5) -> None:
    table = Table(title="Bordia & Bowman co-occurrence bias")
    for col in (
        "context",
        "μ",
        "σ",
        "scored",
        "dropped",
        "only male",
        "only female",
        "no gender",
        "male tok",
        "female tok",
    ):
        table.add_column(col)
    for ctx, sc in scores.items():
        s = sc.bias.summary
        table.add_row(
            ctx,
            f"{s['mu']:.3f}",
            f"{s['sigma']:.3f}",
            str(s["n_scored"]),
            str(s["n_dropped"]),
            str(s["n_only_male"]),
            str(s["n_only_female"]),
            str(s["n_no_gender"]),
            str(s["n_male_tokens"]),
            str(s["n_female_tokens"]),
        )
    out.print(table)
    if top > 0:
        for ctx, sc in scores.items():
            b = sc.bias
            if not b.words:
                continue
            male = ", ".join(f"{w} ({v:.2f})" for w, v in zip(b.words[:top], b.bias[:top].tolist()))
            female = ", ".join(
                f"{w} ({v:.2f})" for w, v in zip(b.words[::-1][:top], b.bias[::-1][:top].tolist())
            )
            out.print(f"[bold]{ctx}[/bold] most male: {male}")
            out.print(f"[bold]{ctx}[/bold] most female: {female}")


@bordia_app.command("score")
def score_cmd(
    corpora: List[str] = typer.Argument(
        ...,
        help="files, directories (one document per file, README skipped) "
        "or registry corpora: ptb[:SPLIT], wikitext-2[:SPLIT]",
    ),
    pairs: Optional[str] = typer.Option(
        None, "--pairs", help="penn | wiki | dm | FILE (column 1 male, 2 female)"
    ),
    context: str = typer.Option("both", "--context", help="fixed | infinite | both"),
    mode: str = typer.Option(
        "paper",
        "--mode",
        help="paper (the paper's definitions) | reference (the authors' scripts' window geometry)",
    ),
    k: int = typer.Option(10, "-k", help="paper fixed window: k words on each side"),
    W: Optional[int] = typer.Option(
        None, "-W", help="reference window: n-gram length (default 21 fixed, 201 infinite)"
    ),
    beta: float = typer.Option(0.95, "--beta", help="infinite context: decay ρ per word of distance"),
    max_distance: str = typer.Option("100", "--max-distance", help="paper infinite: cut-off D, or 'none'"),
    boundary: str = typer.Option(
        "document", "--boundary", help="document | line (lines and <eos> end windows; paper mode)"
    ),
    drop_tokens: Optional[str] = typer.Option(
        None,
        "--drop-tokens",
        help="comma list removed before windowing (default <eos> in paper "
        "mode, none in reference mode; '' = none)",
    ),
    fix_wife_husband: bool = typer.Option(
        False, "--fix-wife-husband", help="swap the inverted 'wife husband' lines of the pair files"
    ),
    stopwords: str = typer.Option("nltk", "--stopwords", help="nltk (pinned 178 words) | none | FILE"),
    exclude: Optional[str] = typer.Option(None, "--exclude", help="comma list of extra words not to score"),
    min_count: int = typer.Option(1, "--min-count", help="score only words with at least this frequency"),
    drop_non_alpha: bool = typer.Option(
        False, "--drop-non-alpha", help="do not score tokens without a letter"
    ),
    normalise_over: str = typer.Option("eligible", "--normalise-over", help="eligible | scored | all"),
    paper_formula_shift: bool = typer.Option(
        False, "--paper-formula-shift", help="add ln(n_M/n_F) to every bias (the paper's printed formula)"
    ),
    smoothing: float = typer.Option(0.0, "--smoothing", help="add-α smoothing of the counts (0 = off)"),
    bootstrap: int = typer.Option(
        1000, "--bootstrap", help="bootstrap resamples for μ/σ intervals (0 = off)"
    ),
    authors_format: bool = typer.Option(
        False, "--authors-format", help="also write all_words.json in the authors' key layout"
    ),
    top: int = typer.Option(5, "--top", help="print this many most male/female words"),
    out_dir: Path = typer.Option(Path("runs/bordia-score"), "--out", "-o", help="output folder"),
) -> None:
    """Count gendered co-occurrences in corpora and score every word's bias (μ, σ).

    Examples:

    * `genderscope bordia score ptb:valid --pairs penn --out runs/ptb-valid`

    * `genderscope bordia score wikitext-2:valid --pairs wiki --context infinite --max-distance 100`

    * `genderscope bordia score my_corpus/ --pairs my_pairs.txt --mode reference -W 21 --authors-format`
    """
    from genderscope.bordia.pairs import load_gender_pairs
    from genderscope.bordia.scoring import context_configs, score_documents, write_score_outputs
    from genderscope.bordia.text import read_corpus

    if context not in ("fixed", "infinite", "both"):
        raise UsageError(f"--context must be fixed, infinite or both, got {context!r}")
    base, opts = build_score_setup(
        mode,
        k,
        W,
        beta,
        max_distance,
        boundary,
        drop_tokens,
        stopwords,
        exclude,
        min_count,
        drop_non_alpha,
        normalise_over,
        paper_formula_shift,
        smoothing,
        bootstrap,
    )
    gp = load_gender_pairs(_default_pairs(corpora, pairs), fix_wife_husband=fix_wife_husband)
    docs = read_corpus(corpora)
    scores = score_documents(docs, gp, context_configs(base, context), opts)
    write_score_outputs(
        out_dir,
        scores,
        [d.name for d in docs],
        authors_format=authors_format,
        extra={"mode": mode},
        model="corpus:" + ",".join(corpora),
    )
    print_scores(scores, top)
    out.print(f"results in [bold]{out_dir}[/bold]")


# ------------------------------------------------------------------------------------------------ LM commands


def _one_path(spec: str) -> Path:
    from genderscope.bordia.text import resolve_corpus_paths

    paths = resolve_corpus_paths([spec])
    if len(paths) != 1:
        raise UsageError(f"{spec}: expected one file, found {len(paths)}")
    return paths[0]


def resolve_splits(
    dataset: Optional[str], train: Optional[str], valid: Optional[str], test: Optional[str]
) -> tuple[str, Path, Path, Optional[Path]]:
    """(dataset label, train, valid, test) from ``--dataset`` and/or explicit files (or registry names)."""
    if dataset is not None and dataset not in ("ptb", "wikitext-2", "cnn_dailymail"):
        raise UsageError(f"--dataset must be ptb, wikitext-2 or cnn_dailymail, got {dataset!r}")
    if dataset and not train:
        if dataset == "cnn_dailymail":
            raise UsageError("cnn_dailymail is not distributed: pass --train/--valid/--test files")
        train, valid, test = f"{dataset}:train", valid or f"{dataset}:valid", test or f"{dataset}:test"
    if not train or not valid:
        raise UsageError("give --dataset ptb|wikitext-2 or --train FILE --valid FILE [--test FILE]")
    from genderscope.bordia.text import REGISTRY_CORPORA

    name = train.partition(":")[0]
    label = dataset or (name if name in REGISTRY_CORPORA and not Path(train).exists() else Path(train).stem)
    return label, _one_path(train), _one_path(valid), _one_path(test) if test else None


def _train_overrides(
    *, detach_subspace: bool = False, unnorm_bias: bool = False, untied: bool = False, **options: Any
) -> dict:
    """TrainConfig overrides from CLI options: None means "keep the preset"; the three flags map to
    ``detach_subspace=True``, ``normalize=False`` and ``tie_weights=False`` when set."""
    options.update(
        detach_subspace=detach_subspace or None,
        normalize=False if unnorm_bias else None,
        tie_weights=False if untied else None,
    )
    return {k: v for k, v in options.items() if v is not None}


_OPT = {
    "preset": lambda: typer.Option("tiny", "--preset", help="tiny (CPU, ~1 min) | paper | reproduction"),
    "kappa": lambda: typer.Option(
        None,
        "--kappa",
        help="variance (κ by explained variance, default) | reference "
        "(κ = 1, the authors' code) | an integer",
    ),
}


@bordia_app.command("train")
def train_cmd(
    dataset: Optional[str] = typer.Option(None, "--dataset", help="ptb | wikitext-2 (registry splits)"),
    train: Optional[str] = typer.Option(
        None, "--train", help="training text (file or registry name, e.g. wikitext-2:valid)"
    ),
    valid: Optional[str] = typer.Option(None, "--valid", help="validation text"),
    test: Optional[str] = typer.Option(None, "--test", help="test text (default: the validation text)"),
    pairs: Optional[str] = typer.Option(
        None, "--pairs", help="penn | wiki | dm | FILE (for the regulariser)"
    ),
    lam: float = typer.Option(
        0.0, "--lambda", help="weight λ of the debiasing regulariser (0 = plain AWD-LSTM)"
    ),
    preset: str = _OPT["preset"](),
    kappa: Optional[str] = _OPT["kappa"](),
    var_ratio: Optional[float] = typer.Option(
        None, "--var-ratio", help="τ for κ by explained variance (0.5)"
    ),
    detach_subspace: bool = typer.Option(False, "--detach-subspace", help="no gradient through the SVD"),
    unnorm_bias: bool = typer.Option(
        False, "--unnorm-bias", help="do not L2-normalise embedding rows in L_B"
    ),
    untied: bool = typer.Option(False, "--untied", help="do not tie decoder and embedding weights"),
    debias: Optional[str] = typer.Option(None, "--debias", help="encoder | decoder | both"),
    epochs: Optional[int] = typer.Option(None, "--epochs"),
    batch_size: Optional[int] = typer.Option(None, "--batch-size"),
    bptt: Optional[int] = typer.Option(None, "--bptt"),
    emsize: Optional[int] = typer.Option(None, "--emsize"),
    nhid: Optional[int] = typer.Option(None, "--nhid"),
    nlayers: Optional[int] = typer.Option(None, "--nlayers"),
    lr: Optional[float] = typer.Option(None, "--lr"),
    seed: Optional[int] = typer.Option(None, "--seed"),
    patience: Optional[int] = typer.Option(
        None, "--patience", help="early stopping after this many epochs without improvement"
    ),
    eval_batch_size: Optional[int] = typer.Option(None, "--eval-batch-size"),
    test_batch_size: Optional[int] = typer.Option(None, "--test-batch-size"),
    threads: Optional[int] = typer.Option(None, "--threads", help="torch CPU threads"),
    device: str = typer.Option("cpu", "--device", help="cpu | cuda | cuda:N"),
    out_dir: Path = typer.Option(..., "--out", "-o", help="run directory (resumes from last.pt if present)"),
) -> None:
    """Train a word-level AWD-LSTM, optionally with the debiasing regulariser λ‖NB‖²_F.

    Examples:

    * `genderscope bordia train --train wikitext-2:valid --valid wikitext-2:test --pairs wiki --lambda 0.1
      --preset tiny --out runs/wt2-l0.1`

    * `genderscope bordia train --dataset ptb --train ptb.train.txt --preset paper --device cuda --lambda 0.01
      --out runs/ptb-l0.01`
    """
    from genderscope.bordia.lm.train import preset_config, train_lm
    from genderscope.bordia.pairs import DATASET_PAIRS

    label, tr, va, te = resolve_splits(dataset, train, valid, test)
    pairs = pairs or DATASET_PAIRS.get(label) or ("penn" if lam == 0 else None)
    if pairs is None:
        raise UsageError("--pairs is required with --lambda > 0 (penn, wiki, dm or a file)")
    cfg = preset_config(
        preset,
        dataset,
        train=str(tr),
        valid=str(va),
        test=str(te) if te else None,
        pairs=pairs,
        lam=lam,
        device=device,
        **_train_overrides(
            epochs=epochs,
            batch_size=batch_size,
            bptt=bptt,
            emsize=emsize,
            nhid=nhid,
            nlayers=nlayers,
            lr=lr,
            seed=seed,
            kappa=kappa,
            var_ratio=var_ratio,
            detach_subspace=detach_subspace,
            unnorm_bias=unnorm_bias,
            untied=untied,
            debias=debias,
            patience=patience,
            eval_batch_size=eval_batch_size,
            test_batch_size=test_batch_size,
            threads=threads,
        ),
    )
    metrics = train_lm(cfg, out_dir, log=out.print)
    out.print(
        f"valid ppl {metrics['valid_ppl']:.2f}, test ppl {metrics['test_ppl']:.2f} "
        f"(best epoch {metrics['best_epoch']}); run in [bold]{out_dir}[/bold]"
    )


@bordia_app.command("eval")
def eval_cmd(
    run_dir: Path = typer.Argument(..., help="a run directory with best.pt"),
    valid: Optional[str] = typer.Option(None, "--valid", help="another validation text (same vocabulary)"),
    test: Optional[str] = typer.Option(None, "--test", help="another test text (same vocabulary)"),
    device: str = typer.Option("cpu", "--device"),
) -> None:
    """Perplexity of a run's best checkpoint on its validation and test text.

    Example: `genderscope bordia eval runs/wt2-l0.1`
    """
    from genderscope.bordia.lm.train import evaluate_run

    m = evaluate_run(run_dir, device, _one_path(valid) if valid else None, _one_path(test) if test else None)
    out.print(
        f"valid ppl {m['valid_ppl']:.2f} (CE {m['valid_loss']:.4f}), test ppl {m['test_ppl']:.2f} "
        f"(CE {m['test_loss']:.4f})"
    )


@bordia_app.command("generate")
def generate_cmd(
    run_dir: Path = typer.Argument(..., help="a run directory with best.pt"),
    samples: int = typer.Option(2000, "--samples", help="number of samples"),
    words: int = typer.Option(500, "--words", help="words per sample"),
    temperature: float = typer.Option(1.0, "--temperature"),
    seed_offset: int = typer.Option(500, "--seed-offset", help="sample j uses seed seed_offset + j"),
    batch: int = typer.Option(100, "--batch", help="samples computed in parallel"),
    device: str = typer.Option("cpu", "--device"),
    force: bool = typer.Option(
        False, "--force", help="replace existing samples made with other --words/--temperature/--seed-offset"
    ),
    out_dir: Optional[Path] = typer.Option(None, "--out", "-o", help="default RUN_DIR/samples"),
) -> None:
    """Sample text: one file per sample (RUN_DIR/samples/NNNNN.txt) and samples.jsonl (one record per sample).

    Example: `genderscope bordia generate runs/wt2-l0.1 --samples 100 --words 200`
    """
    from genderscope.bordia.lm.generate import generate_samples

    target = out_dir or run_dir / "samples"
    generate_samples(run_dir, target, samples, words, temperature, seed_offset, batch, device, force=force)
    out.print(
        f"{samples} samples × {words} words in [bold]{target}[/bold] (NNNNN.txt, samples.jsonl, manifest.json)"
    )


@bordia_app.command("sweep")
def sweep_cmd(
    dataset: Optional[str] = typer.Option(
        None, "--dataset", help="ptb | wikitext-2 (needs the train split) | cnn_dailymail (with files)"
    ),
    train: Optional[str] = typer.Option(
        None, "--train", help="training text (file or e.g. wikitext-2:valid)"
    ),
    valid: Optional[str] = typer.Option(None, "--valid", help="validation text"),
    test: Optional[str] = typer.Option(None, "--test", help="test text (default: the validation text)"),
    pairs: Optional[str] = typer.Option(None, "--pairs", help="penn | wiki | dm | FILE"),
    lambdas: str = typer.Option("0,0.001,0.01,0.1,0.5,0.8,1", "--lambdas", help="comma-separated λ values"),
    preset: str = _OPT["preset"](),
    kappa: Optional[str] = _OPT["kappa"](),
    epochs: Optional[int] = typer.Option(None, "--epochs"),
    batch_size: Optional[int] = typer.Option(None, "--batch-size"),
    test_batch_size: Optional[int] = typer.Option(None, "--test-batch-size"),
    seed: Optional[int] = typer.Option(None, "--seed"),
    samples: int = typer.Option(2000, "--samples", help="generated samples per λ"),
    words: int = typer.Option(500, "--words", help="words per sample"),
    temperature: float = typer.Option(1.0, "--temperature"),
    seed_offset: int = typer.Option(500, "--seed-offset", help="sample j uses seed seed_offset + j"),
    mode: str = typer.Option(
        "paper",
        "--mode",
        help="paper | reference (window geometry; reference also sets κ = 1 unless --kappa is given)",
    ),
    k: int = typer.Option(10, "-k"),
    W: Optional[int] = typer.Option(None, "-W"),
    beta: float = typer.Option(0.95, "--beta"),
    max_distance: str = typer.Option("100", "--max-distance"),
    boundary: str = typer.Option("document", "--boundary"),
    drop_tokens: Optional[str] = typer.Option(None, "--drop-tokens", help="as in `bordia score`"),
    fix_wife_husband: bool = typer.Option(
        False, "--fix-wife-husband", help="swap the inverted 'wife husband' lines (counting and regulariser)"
    ),
    stopwords: str = typer.Option("nltk", "--stopwords", help="nltk | none | FILE"),
    exclude: Optional[str] = typer.Option(None, "--exclude", help="comma list of extra words not to score"),
    min_count: int = typer.Option(1, "--min-count"),
    drop_non_alpha: bool = typer.Option(False, "--drop-non-alpha"),
    normalise_over: str = typer.Option("eligible", "--normalise-over", help="eligible | scored | all"),
    paper_formula_shift: bool = typer.Option(False, "--paper-formula-shift"),
    smoothing: float = typer.Option(0.0, "--smoothing"),
    outliers: str = typer.Option(
        "none", "--outliers", help="none | residual (drop |residual| > 3 sd, refit once)"
    ),
    null_baseline: bool = typer.Option(
        True,
        "--null-baseline/--no-null-baseline",
        help="add a row 'null': β of an i.i.d. unigram sample of the training text "
        "(samples × words), the β the estimator gives without any association",
    ),
    published: bool = typer.Option(False, "--published", help="also print the paper's table for the dataset"),
    bootstrap: int = typer.Option(1000, "--bootstrap"),
    device: str = typer.Option("cpu", "--device"),
    force: bool = typer.Option(
        False, "--force", help="retrain λ runs / regenerate samples whose configuration changed"
    ),
    out_dir: Path = typer.Option(Path("runs/bordia-sweep"), "--out", "-o"),
) -> None:
    """The λ-sweep: train, generate, score fixed and infinite context, print the published-style table.

    Resumable: finished λ runs and samples are reused.

    Example: `genderscope bordia sweep --train wikitext-2:valid --valid wikitext-2:test --pairs wiki
    --lambdas 0,0.1 --preset tiny --samples 50 --words 100 --out runs/sweep`
    """
    from genderscope.bordia.pairs import DATASET_PAIRS
    from genderscope.bordia.sweep import SweepSpec, run_sweep

    label, tr, va, te = resolve_splits(dataset, train, valid, test)
    try:
        lam_values = [float(x) for x in lambdas.split(",") if x.strip()]
    except ValueError:
        raise UsageError(f"--lambdas must be comma-separated numbers, got {lambdas!r}") from None
    if not lam_values or any(x < 0 for x in lam_values):
        raise UsageError("--lambdas needs at least one value ≥ 0")
    pairs = pairs or DATASET_PAIRS.get(label)
    if pairs is None:
        raise UsageError("--pairs is required (penn, wiki, dm or a file)")
    if outliers not in ("none", "residual"):
        raise UsageError(f"--outliers must be none or residual, got {outliers!r}")
    base, opts = build_score_setup(
        mode,
        k,
        W,
        beta,
        max_distance,
        boundary,
        drop_tokens,
        stopwords,
        exclude,
        min_count,
        drop_non_alpha,
        normalise_over,
        paper_formula_shift,
        smoothing,
        bootstrap,
    )
    if mode == "reference" and kappa is None:
        kappa = "reference"
    overrides = _train_overrides(
        epochs=epochs, batch_size=batch_size, seed=seed, kappa=kappa, test_batch_size=test_batch_size
    )
    spec = SweepSpec(
        tr,
        va,
        te,
        label,
        pairs,
        lam_values,
        preset,
        overrides,
        samples,
        words,
        temperature,
        seed_offset,
        count_config=base,
        score_options=opts,
        fix_wife_husband=fix_wife_husband,
        outliers=None if outliers == "none" else outliers,
        null_baseline=null_baseline,
        device=device,
        force=force,
    )
    results = run_sweep(spec, out_dir, log=lambda s: err.print(f"[dim]{s}[/dim]"))
    print_sweep_table(results["tasks"]["bordia-sweep"]["rows"], label, published=published)
    out.print(f"results in [bold]{out_dir}[/bold] (results.json, results.csv, table.md)")


def print_sweep_table(rows, dataset: str, console: Console | None = None, published: bool = False) -> None:
    """The published-style table (spec §9.2); with ``published``, the paper's table for the dataset after it."""
    from genderscope.bordia.sweep import PUBLISHED, TABLE_HEADER, published_rows, table_rows

    tables = [(f"Bordia & Bowman λ-sweep: {dataset}", table_rows(rows))]
    if published:
        if dataset in PUBLISHED:
            tables.append(
                (f"Published (Bordia & Bowman 2019, Tables 1–3): {dataset}", published_rows(dataset))
            )
        else:
            (console or out).print(f"no published table for {dataset!r} (published: {', '.join(PUBLISHED)})")
    for title, body in tables:
        table = Table(title=title)
        for col in TABLE_HEADER:
            table.add_column(col)
        for r in body:
            table.add_row(*r)
        (console or out).print(table)
