"""The options of the ``bordia`` commands, declared once with :func:`genderscope.core.options.opt`.

``genderscope bordia score|sweep|train|eval|generate`` route their ``--name value`` pairs to these
dataclasses through :func:`genderscope.core.options.build_options`, as ``genderscope run`` routes a
task's; the functions (:func:`~genderscope.commands.bordia.score.score_corpus`,
:func:`~genderscope.commands.bordia.sweep.run_sweep`, ...) take them as they are.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, List, Optional, Tuple

from genderscope.bordia.options import CONTEXTS, CountingOptions
from genderscope.common.errors import UsageError
from genderscope.core.options import opt

DEFAULT_LAMBDAS = (0.0, 0.001, 0.01, 0.1, 0.5, 0.8, 1.0)
#: the training presets of ``genderscope.bordia.lm.config.PRESETS`` (named here: that module imports torch)
PRESET_NAMES = ("tiny", "paper", "reproduction")


def check_device(device: str) -> None:
    """ValueError unless ``device`` reads as a torch device this command accepts: cpu, cuda, cuda:N."""
    import re

    if not re.fullmatch(r"cpu|cuda(:\d+)?", device):
        raise ValueError(f"--device {device!r}: give cpu, cuda or cuda:N")


@dataclass(frozen=True, kw_only=True)
class CorpusScoreOptions(CountingOptions):
    """``bordia score``: co-occurrence counts and per-word bias (μ, σ) of corpora."""

    corpora: List[str] = opt(
        None,
        "files, directories (one document per file, README skipped) "
        "or registry corpora: ptb[:SPLIT], wikitext-2[:SPLIT]",
        argument=True,
    )
    context: str = opt("both", "fixed | infinite | both", CONTEXTS)
    authors_format: bool = opt(False, "also write all_words.json in the authors' key layout")
    max_bytes: int = opt(
        1 << 28,
        "largest corpus read into memory (about 25 bytes of memory per byte of text); a larger one stops "
        "before reading, pointing to `bordia audit` (0 = no limit)",
        minimum=0,
        maximum=10**15,
    )
    out: Path = opt(Path("runs/bordia-score"), "output folder", aliases=("-o",))


@dataclass(frozen=True, kw_only=True)
class CorpusAuditOptions(CountingOptions):
    """``bordia audit``: streaming co-occurrence counts and per-word bias of a sharded corpus."""

    corpora: List[str] = opt(
        None,
        "shards: files (.txt = one document; .jsonl, .jsonl.gz, .jsonl.zst, .parquet = one document per "
        "record), folders, globs, or registry corpora ptb[:SPLIT], wikitext-2[:SPLIT]",
        argument=True,
    )
    context: str = opt("both", "fixed | infinite | both", CONTEXTS)
    text_field: str = opt("text", "JSONL field / Parquet column holding a document's text")
    workers: int = opt(
        1,
        "processes counting shards (local executor); Ray: tasks in flight (default 2 × CPUs)",
        minimum=1,
        maximum=4096,
    )
    executor: str = opt(
        "local", "local (processes on this machine) | ray (tasks on a Ray cluster)", ("local", "ray")
    )
    ray_address: Optional[str] = opt(None, "Ray cluster address (default: RAY_ADDRESS, else a new local Ray)")
    skip_bad_shards: bool = opt(False, "leave out shards that cannot be read (else stop with exit 2)")
    max_tokens: Optional[int] = opt(None, "estimate: stop starting shards after this many tokens")
    sample_shards: Optional[int] = opt(None, "estimate: count this many randomly chosen shards")
    sample_seed: int = opt(0, "seed of the shard order of estimates and of the shard bootstrap")
    top: int = opt(
        20,
        "most male/female words listed per context in results.json and the terminal",
        minimum=0,
        maximum=10**6,
    )
    batch_chars: int = opt(
        4_000_000, "bytes of text counted at once (bounds memory)", minimum=1, maximum=10**12
    )
    range_bytes: int = opt(
        1 << 26,
        "a text or JSONL file larger than this is counted in byte ranges of this size (workers share it; a "
        "rerun after a kill recounts only unfinished ranges)",
        minimum=1,
        maximum=10**15,
    )
    fresh: bool = opt(False, "recount every shard (default: reuse finished shards' partial counts)")
    out: Path = opt(Path("runs/bordia-audit"), "output folder", aliases=("-o",))

    def __post_init__(self) -> None:
        for name in ("workers", "batch_chars", "range_bytes"):
            if getattr(self, name) < 1:
                raise ValueError(f"--{name.replace('_', '-')} must be ≥ 1")
        for name in ("max_tokens", "sample_shards"):
            v = getattr(self, name)
            if v is not None and v < 1:
                raise ValueError(f"--{name.replace('_', '-')} must be ≥ 1")


@dataclass(frozen=True, kw_only=True)
class SweepOptions(CountingOptions):
    """``bordia sweep``: train, generate and score per λ, regress generated on training bias (spec §9)."""

    dataset: Optional[str] = opt(
        None,
        "ptb | wikitext-2 (needs the train split) | cnn_dailymail (with files)",
    )
    train: Optional[str] = opt(None, "training text (file or registry name, e.g. wikitext-2:valid)")
    valid: Optional[str] = opt(None, "validation text")
    test: Optional[str] = opt(None, "test text (default: the validation text)")
    lambdas: Tuple[float, ...] = opt(DEFAULT_LAMBDAS, "comma-separated λ values ≥ 0", minimum=0)
    preset: str = opt("tiny", "tiny (CPU, ~1 min) | paper | reproduction", PRESET_NAMES)
    kappa: Optional[str] = opt(
        None,
        "variance (κ by explained variance, default) | reference (κ = 1, the authors' code) | an integer; "
        "--mode reference sets reference unless given",
    )
    epochs: Optional[int] = opt(None, "training epochs (default: the preset's)", minimum=1, maximum=10**6)
    batch_size: Optional[int] = opt(
        None, "training batch size (default: the preset's)", minimum=1, maximum=10**6
    )
    eval_batch_size: Optional[int] = opt(
        None, "validation batch size (default: the preset's)", minimum=1, maximum=10**6
    )
    test_batch_size: Optional[int] = opt(
        None, "test batch size (default: the preset's)", minimum=1, maximum=10**6
    )
    seed: Optional[int] = opt(None, "training seed (default: the preset's)", minimum=0, maximum=2**63 - 1)
    samples: int = opt(2000, "generated samples per λ", minimum=1, maximum=10**7)
    words: int = opt(500, "words per sample", minimum=1, maximum=10**7)
    temperature: float = opt(1.0, "sampling temperature", minimum=0.001)
    seed_offset: int = opt(500, "sample j uses seed seed_offset + j", minimum=0, maximum=2**62)
    outliers: str = opt("none", "none | residual (drop |residual| > 3 sd, refit once)", ("none", "residual"))
    null_baseline: bool = opt(
        True,
        "add a row 'null': β of an i.i.d. unigram sample of the training text (samples × words), "
        "the β the estimator gives without any association (--no-null-baseline: none)",
    )
    device: str = opt("cpu", "cpu | cuda | cuda:N")
    force: bool = opt(False, "retrain λ runs / regenerate samples whose configuration changed")
    out: Path = opt(Path("runs/bordia-sweep"), "output folder", aliases=("-o",))

    def __post_init__(self) -> None:
        check_device(self.device)

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


@dataclass(frozen=True, kw_only=True)
class TrainOptions:
    """``bordia train``: one word-level AWD-LSTM, optionally with the debiasing regulariser (spec §6, §7)."""

    dataset: Optional[str] = opt(None, "ptb | wikitext-2 (registry splits)")
    train: Optional[str] = opt(None, "training text (file or registry name, e.g. wikitext-2:valid)")
    valid: Optional[str] = opt(None, "validation text")
    test: Optional[str] = opt(None, "test text (default: the validation text)")
    pairs: Optional[str] = opt(None, "penn | wiki | dm | FILE (for the regulariser)")
    lam: float = opt(
        0.0, "weight λ of the debiasing regulariser (0 = plain AWD-LSTM)", aliases=("--lambda",), minimum=0
    )
    preset: str = opt("tiny", "tiny (CPU, ~1 min) | paper | reproduction", PRESET_NAMES)
    kappa: Optional[str] = opt(
        None,
        "variance (κ by explained variance, default) | reference (κ = 1, the authors' code) | an integer",
    )
    var_ratio: Optional[float] = opt(None, "τ for κ by explained variance (0.5)", minimum=0, maximum=1)
    detach_subspace: bool = opt(False, "no gradient through the SVD")
    unnorm_bias: bool = opt(False, "do not L2-normalise embedding rows in L_B")
    untied: bool = opt(False, "do not tie decoder and embedding weights")
    debias: Optional[str] = opt(None, "encoder | decoder | both")
    epochs: Optional[int] = opt(None, "training epochs (default: the preset's)", minimum=1, maximum=10**6)
    batch_size: Optional[int] = opt(
        None, "training batch size (default: the preset's)", minimum=1, maximum=10**6
    )
    bptt: Optional[int] = opt(
        None, "back-propagation-through-time length (default: the preset's)", minimum=1, maximum=10**6
    )
    emsize: Optional[int] = opt(None, "embedding size (default: the preset's)", minimum=1, maximum=10**6)
    nhid: Optional[int] = opt(None, "hidden size (default: the preset's)", minimum=1, maximum=10**6)
    nlayers: Optional[int] = opt(None, "LSTM layers (default: the preset's)", minimum=1, maximum=1000)
    lr: Optional[float] = opt(None, "learning rate (default: the preset's)", minimum=0)
    seed: Optional[int] = opt(None, "training seed (default: the preset's)", minimum=0, maximum=2**63 - 1)
    patience: Optional[int] = opt(
        None, "early stopping after this many epochs without improvement", minimum=0, maximum=10**6
    )
    eval_batch_size: Optional[int] = opt(
        None, "validation batch size (default: the preset's)", minimum=1, maximum=10**6
    )
    test_batch_size: Optional[int] = opt(
        None, "test batch size (default: the preset's)", minimum=1, maximum=10**6
    )
    threads: Optional[int] = opt(None, "torch CPU threads", minimum=1, maximum=4096)
    device: str = opt("cpu", "cpu | cuda | cuda:N")
    out: Path = opt(None, "run directory (resumes from last.pt if present)", aliases=("-o",), required=True)

    def __post_init__(self) -> None:
        check_device(self.device)

    def overrides(self) -> dict[str, Any]:
        """TrainConfig overrides (None = keep the preset); the three flags map to ``detach_subspace=True``,
        ``normalize=False`` and ``tie_weights=False`` when set."""
        names = (
            "epochs batch_size bptt emsize nhid nlayers lr seed kappa var_ratio debias patience "
            "eval_batch_size test_batch_size threads"
        ).split()
        values = {name: getattr(self, name) for name in names}
        values.update(
            detach_subspace=self.detach_subspace or None,
            normalize=False if self.unnorm_bias else None,
            tie_weights=False if self.untied else None,
        )
        return {k: v for k, v in values.items() if v is not None}


@dataclass(frozen=True, kw_only=True)
class EvalOptions:
    """``bordia eval``: perplexity of a run's best checkpoint."""

    run_dir: Path = opt(None, "a run directory with best.pt", argument=True)
    valid: Optional[str] = opt(None, "another validation text (same vocabulary)")
    test: Optional[str] = opt(None, "another test text (same vocabulary)")
    device: str = opt("cpu", "cpu | cuda | cuda:N")

    def __post_init__(self) -> None:
        check_device(self.device)


@dataclass(frozen=True, kw_only=True)
class GenerateOptions:
    """``bordia generate``: samples of a run's best checkpoint (spec §8)."""

    run_dir: Path = opt(None, "a run directory with best.pt", argument=True)
    samples: int = opt(2000, "number of samples", minimum=1, maximum=10**7)
    words: int = opt(500, "words per sample", minimum=1, maximum=10**7)
    temperature: float = opt(1.0, "sampling temperature", minimum=0.001)
    seed_offset: int = opt(500, "sample j uses seed seed_offset + j", minimum=0, maximum=2**62)
    batch: int = opt(100, "samples computed in parallel", minimum=1, maximum=10**6)
    device: str = opt("cpu", "cpu | cuda | cuda:N")
    force: bool = opt(False, "replace existing samples made with other --words/--temperature/--seed-offset")
    out: Optional[Path] = opt(None, "output folder (default RUN_DIR/samples)", aliases=("-o",))

    def __post_init__(self) -> None:
        check_device(self.device)
