"""``genderscope bordia ...``: score corpora, train/evaluate/sample word-level LMs, run the λ-sweep.

A thin layer over the library: ``score`` and ``sweep`` take their options from the dataclasses in
:mod:`genderscope.bordia.options` (one typer option per field, see :func:`options_command`) and call
:func:`~genderscope.bordia.scoring.score_corpus` and :func:`~genderscope.bordia.sweep.run_sweep`.
Importing this module does not import torch; the LM commands import it when they run.
"""

from __future__ import annotations

import dataclasses
import inspect
import typing
from pathlib import Path
from typing import Any, Callable, Optional

import typer
from rich.console import Console

from genderscope.bordia.options import CorpusScoreOptions, SweepOptions, flag_of
from genderscope.core.errors import UsageError

bordia_app = typer.Typer(
    no_args_is_help=True,
    rich_markup_mode="markdown",
    help="Bordia & Bowman (2019): co-occurrence gender bias of corpora, debiased word-level "
    "LMs, bias amplification over a λ-sweep.",
)
out = Console()
err = Console(stderr=True)


def _tuple_reader(f: dataclasses.Field, item: type) -> Callable[[str], tuple]:
    def read(value: str) -> tuple:
        try:
            return tuple(item(x) for x in value.split(",") if x.strip())
        except ValueError:
            raise UsageError(f"{flag_of(f)} must be a comma-separated list, got {value!r}") from None

    return read


def options_command(
    app: typer.Typer, name: str, options_cls: type, **shown: tuple[type, Any]
) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Register ``body(options, **shown)`` as command ``name``: one typer option (or argument) per field of
    ``options_cls`` with the field's flags, default and help; tuples are read as comma lists. ``shown``
    adds display-only options, name -> (type, typer.Option)."""

    def register(body: Callable[..., None]) -> Callable[..., None]:
        hints = typing.get_type_hints(options_cls)
        params, readers = [], {}
        for f in dataclasses.fields(options_cls):
            tp, default, meta = hints[f.name], f.default, f.metadata
            if typing.get_origin(tp) is tuple:
                readers[f.name] = _tuple_reader(f, typing.get_args(tp)[0])
                tp, default = str, ",".join(f"{x:g}" for x in default)
            if meta.get("argument"):
                info = typer.Argument(..., metavar=f.name.upper(), help=meta["help"])
            else:
                info = typer.Option(default, *(meta.get("flags") or (flag_of(f),)), help=meta["help"])
            params.append(
                inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=info, annotation=tp)
            )
        for key, (tp, info) in shown.items():
            params.append(inspect.Parameter(key, inspect.Parameter.KEYWORD_ONLY, default=info, annotation=tp))

        def command(**values: Any) -> None:
            extra = {k: values.pop(k) for k in shown}
            values.update({k: read(values[k]) for k, read in readers.items()})
            body(options_cls(**values), **extra)

        command.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
        command.__annotations__ = {p.name: p.annotation for p in params}
        command.__doc__, command.__name__ = body.__doc__, body.__name__
        app.command(name)(command)
        return body

    return register


@options_command(
    bordia_app,
    "score",
    CorpusScoreOptions,
    top=(int, typer.Option(5, "--top", help="print this many most male/female words")),
)
def score_cmd(options: CorpusScoreOptions, top: int) -> None:
    """Count gendered co-occurrences in corpora and score every word's bias (μ, σ).

    Examples:

    * `genderscope bordia score ptb:valid --pairs penn --out runs/ptb-valid`

    * `genderscope bordia score wikitext-2:valid --pairs wiki --context infinite --max-distance 100`

    * `genderscope bordia score my_corpus/ --pairs my_pairs.txt --mode reference -W 21 --authors-format`
    """
    from genderscope.bordia.scoring import score_corpus
    from genderscope.bordia.tables import print_scores

    scores = score_corpus(options)
    print_scores(scores, top, out)
    out.print(f"results in [bold]{options.out}[/bold]")


@options_command(
    bordia_app,
    "sweep",
    SweepOptions,
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
    from genderscope.bordia.sweep import run_sweep
    from genderscope.bordia.tables import print_sweep_table

    result = run_sweep(options, log=lambda s: err.print(f"[dim]{s}[/dim]"))
    print_sweep_table(result.rows, result.plan.dataset, out, published=published)
    out.print(f"results in [bold]{options.out}[/bold] (results.json, results.csv, table.md)")


# ------------------------------------------------------------------------------------------------ LM commands


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
    preset: str = typer.Option("tiny", "--preset", help="tiny (CPU, ~1 min) | paper | reproduction"),
    kappa: Optional[str] = typer.Option(
        None,
        "--kappa",
        help="variance (κ by explained variance, default) | reference (κ = 1, the authors' code) "
        "| an integer",
    ),
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
    from genderscope.bordia.inputs import resolve_splits
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
    run_dir: Path = typer.Argument(..., metavar="RUN_DIR", help="a run directory with best.pt"),
    valid: Optional[str] = typer.Option(None, "--valid", help="another validation text (same vocabulary)"),
    test: Optional[str] = typer.Option(None, "--test", help="another test text (same vocabulary)"),
    device: str = typer.Option("cpu", "--device"),
) -> None:
    """Perplexity of a run's best checkpoint on its validation and test text.

    Example: `genderscope bordia eval runs/wt2-l0.1`
    """
    from genderscope.bordia.inputs import one_path
    from genderscope.bordia.lm.train import evaluate_run

    m = evaluate_run(run_dir, device, one_path(valid) if valid else None, one_path(test) if test else None)
    out.print(
        f"valid ppl {m['valid_ppl']:.2f} (CE {m['valid_loss']:.4f}), test ppl {m['test_ppl']:.2f} "
        f"(CE {m['test_loss']:.4f})"
    )


@bordia_app.command("generate")
def generate_cmd(
    run_dir: Path = typer.Argument(..., metavar="RUN_DIR", help="a run directory with best.pt"),
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
