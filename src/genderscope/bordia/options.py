"""The options of ``bordia score`` and ``bordia sweep``, declared once (spec §12).

Each field carries its help text, allowed choices and command-line flags in its metadata (the keys of
:func:`genderscope.core.options.opt`, plus ``flags`` and ``argument``); ``bordia/cli.py`` builds its typer
options from these dataclasses and the library (:func:`~genderscope.bordia.score.score_corpus`,
:func:`~genderscope.bordia.sweep.run_sweep`) takes them as they are.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any, List, Optional, Tuple

from genderscope.bordia.bias import ScoreOptions
from genderscope.bordia.cooccurrence import CountConfig
from genderscope.core.errors import UsageError

MODES = ("paper", "reference")
CONTEXTS = ("fixed", "infinite", "both")
DEFAULT_LAMBDAS = (0.0, 0.001, 0.01, 0.1, 0.5, 0.8, 1.0)


def field(
    default: Any,
    help: str,
    *flags: str,
    choices: tuple[str, ...] | None = None,
    argument: bool = False,
) -> Any:
    """A dataclass field with help text, choices and flags (default flag: ``--name-with-dashes``)."""
    meta = {"help": help, "choices": choices, "flags": flags, "argument": argument}
    if argument:  # a required positional argument
        return dataclasses.field(metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


def flag_of(f: dataclasses.Field) -> str:
    """The first command-line flag of a field (for messages)."""
    return (f.metadata.get("flags") or ("--" + f.name.replace("_", "-"),))[0]


def check_choices(options: Any) -> None:
    """Raise :class:`UsageError` when a field with ``choices`` holds another value."""
    for f in dataclasses.fields(options):
        choices = f.metadata.get("choices")
        value = getattr(options, f.name)
        if choices and value not in choices:
            raise UsageError(f"{flag_of(f)} must be {' or '.join(choices)}, got {value!r}")


def parse_max_distance(value: str) -> int | None:
    """``--max-distance``: a positive integer, or ``none``/``inf``/``infinite`` for no cut-off."""
    if value.lower() in ("none", "inf", "infinite"):
        return None
    try:
        d = int(value)
    except ValueError:
        raise UsageError(f"--max-distance must be an integer or 'none', got {value!r}") from None
    if d < 1:
        raise UsageError(f"--max-distance must be ≥ 1, got {d}")
    return d


def csv_set(value: Optional[str]) -> frozenset[str]:
    """``"a,b"`` -> {"a", "b"}; None or "" -> empty."""
    return frozenset(v for v in (value or "").split(",") if v)


@dataclass(frozen=True, kw_only=True)
class CountingOptions:
    """Window geometry and word selection shared by ``score`` and ``sweep`` (spec §3, §4, §12)."""

    pairs: Optional[str] = field(
        None, "penn | wiki | dm | FILE (column 1 male, 2 female); default from a registry corpus"
    )
    mode: str = field(
        "paper",
        "paper (the paper's definitions) | reference (the authors' scripts' window geometry)",
        choices=MODES,
    )
    k: int = field(10, "paper fixed window: k words on each side", "-k")
    W: Optional[int] = field(None, "reference window: n-gram length (default 21 fixed, 201 infinite)", "-W")
    beta: float = field(0.95, "infinite context: decay ρ per word of distance")
    max_distance: str = field("100", "paper infinite: cut-off D in words, or 'none'")
    boundary: str = field(
        "document",
        "document | line (lines and `<eos>` end windows; paper mode)",
        choices=("document", "line"),
    )
    drop_tokens: Optional[str] = field(
        None,
        "comma list removed before windowing (default `<eos>` in paper mode, none in reference mode; "
        "'' = none)",
    )
    fix_wife_husband: bool = field(
        False, "swap the inverted 'wife husband' lines of the pair files (counting and regulariser)"
    )
    stopwords: str = field("nltk", "nltk (pinned 178 words) | none | FILE")
    exclude: Optional[str] = field(None, "comma list of extra words not to score")
    min_count: int = field(1, "score only words with at least this frequency")
    drop_non_alpha: bool = field(False, "do not score tokens without a letter")
    normalise_over: str = field("eligible", "eligible | scored | all", choices=("eligible", "scored", "all"))
    paper_formula_shift: bool = field(False, "add ln(n_M/n_F) to every bias (the paper's printed formula)")
    smoothing: float = field(0.0, "add-α smoothing of the counts (0 = off)")
    bootstrap: int = field(1000, "bootstrap resamples for μ, σ and β intervals (0 = off)")

    def count_config(self) -> CountConfig:
        """The base :class:`CountConfig` (context filled in per context type)."""
        check_choices(self)
        if self.mode == "reference" and self.boundary != "document":
            raise UsageError(
                "--boundary line needs --mode paper (the reference geometry always uses whole files)"
            )
        return CountConfig(
            geometry=self.mode,
            k=self.k,
            W=self.W,
            decay=self.beta,
            max_distance=parse_max_distance(self.max_distance),
            boundary=self.boundary,
            drop_tokens=None if self.drop_tokens is None else csv_set(self.drop_tokens),
        )

    def score_options(self) -> ScoreOptions:
        """Which words are scored and how (:class:`genderscope.bordia.bias.ScoreOptions`)."""
        from genderscope.bordia.pairs import load_stopwords

        return ScoreOptions(
            stopwords=load_stopwords(self.stopwords),
            extra_exclude=csv_set(self.exclude),
            min_count=self.min_count,
            drop_non_alpha=self.drop_non_alpha,
            normalise_over=self.normalise_over,
            paper_formula_shift=self.paper_formula_shift,
            smoothing=self.smoothing,
            bootstrap=self.bootstrap,
        )


@dataclass(frozen=True, kw_only=True)
class CorpusScoreOptions(CountingOptions):
    """``bordia score``: co-occurrence counts and per-word bias (μ, σ) of corpora."""

    corpora: List[str] = field(
        None,
        "files, directories (one document per file, README skipped) "
        "or registry corpora: ptb[:SPLIT], wikitext-2[:SPLIT]",
        argument=True,
    )
    context: str = field("both", "fixed | infinite | both", choices=CONTEXTS)
    authors_format: bool = field(False, "also write all_words.json in the authors' key layout")
    out: Path = field(Path("runs/bordia-score"), "output folder", "--out", "-o")


@dataclass(frozen=True, kw_only=True)
class SweepOptions(CountingOptions):
    """``bordia sweep``: train, generate and score per λ, regress generated on training bias (spec §9)."""

    dataset: Optional[str] = field(
        None,
        "ptb | wikitext-2 (needs the train split) | cnn_dailymail (with files)",
    )
    train: Optional[str] = field(None, "training text (file or registry name, e.g. wikitext-2:valid)")
    valid: Optional[str] = field(None, "validation text")
    test: Optional[str] = field(None, "test text (default: the validation text)")
    lambdas: Tuple[float, ...] = field(DEFAULT_LAMBDAS, "comma-separated λ values ≥ 0")
    preset: str = field("tiny", "tiny (CPU, ~1 min) | paper | reproduction")
    kappa: Optional[str] = field(
        None,
        "variance (κ by explained variance, default) | reference (κ = 1, the authors' code) | an integer; "
        "--mode reference sets reference unless given",
    )
    epochs: Optional[int] = field(None, "training epochs (default: the preset's)")
    batch_size: Optional[int] = field(None, "training batch size (default: the preset's)")
    eval_batch_size: Optional[int] = field(None, "validation batch size (default: the preset's)")
    test_batch_size: Optional[int] = field(None, "test batch size (default: the preset's)")
    seed: Optional[int] = field(None, "training seed (default: the preset's)")
    samples: int = field(2000, "generated samples per λ")
    words: int = field(500, "words per sample")
    temperature: float = field(1.0, "sampling temperature")
    seed_offset: int = field(500, "sample j uses seed seed_offset + j")
    outliers: str = field(
        "none", "none | residual (drop |residual| > 3 sd, refit once)", choices=("none", "residual")
    )
    null_baseline: bool = field(
        True,
        "add a row 'null': β of an i.i.d. unigram sample of the training text (samples × words), "
        "the β the estimator gives without any association",
        "--null-baseline/--no-null-baseline",
    )
    device: str = field("cpu", "cpu | cuda | cuda:N")
    force: bool = field(False, "retrain λ runs / regenerate samples whose configuration changed")
    out: Path = field(Path("runs/bordia-sweep"), "output folder", "--out", "-o")

    def lambda_values(self) -> list[float]:
        """The λ grid as floats (at least one, all ≥ 0)."""
        values = [float(x) for x in self.lambdas]
        if not values or any(x < 0 for x in values):
            raise UsageError("--lambdas needs at least one value ≥ 0")
        return values

    def train_overrides(self) -> dict[str, Any]:
        """TrainConfig overrides (None = the preset's value); reference mode defaults κ to 1."""
        kappa = self.kappa if self.kappa is not None or self.mode != "reference" else "reference"
        values = {
            "epochs": self.epochs,
            "batch_size": self.batch_size,
            "eval_batch_size": self.eval_batch_size,
            "test_batch_size": self.test_batch_size,
            "seed": self.seed,
            "kappa": kappa,
        }
        return {k: v for k, v in values.items() if v is not None}
