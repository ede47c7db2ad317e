"""The counting and scoring options every Bordia & Bowman measurement shares (spec §3, §4, §12).

:class:`CountingOptions` is declared with :func:`genderscope.core.options.opt`, like every task's options:
task ``cooccurrence-amplification`` and the ``bordia score`` / ``bordia sweep`` commands
(:mod:`genderscope.commands.bordia.options`) extend it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from genderscope.bordia.bias import ScoreOptions
from genderscope.bordia.cooccurrence import CountConfig
from genderscope.common.errors import UsageError
from genderscope.core.options import check_choices, opt

MODES = ("paper", "reference")
CONTEXTS = ("fixed", "infinite", "both")


def parse_max_distance(value: str) -> int | None:
    """``--max-distance``: a positive integer, or ``none``/``inf``/``infinite`` for no cut-off."""
    if value.lower() in ("none", "inf", "infinite"):
        return None
    try:
        d = int(value)
    except ValueError:
        raise UsageError(f"--max-distance must be an integer or 'none', got {value!r}") from None
    if not 1 <= d <= 10**9:
        raise UsageError(f"--max-distance must be from 1 to 1,000,000,000 or 'none' (no cut-off), got {d}")
    return d


def csv_set(value: Optional[str]) -> frozenset[str]:
    """``"a,b"`` -> {"a", "b"}; None or "" -> empty."""
    return frozenset(v for v in (value or "").split(",") if v)


@dataclass(frozen=True, kw_only=True)
class CountingOptions:
    """Window geometry and word selection shared by ``score`` and ``sweep`` (spec §3, §4, §12)."""

    pairs: Optional[str] = opt(
        None, "penn | wiki | dm | FILE (column 1 male, 2 female); default from a registry corpus"
    )
    mode: str = opt(
        "paper",
        "paper (the paper's definitions) | reference (the authors' scripts' window geometry)",
        MODES,
    )
    k: int = opt(10, "paper fixed window: k words on each side", aliases=("-k",), minimum=1, maximum=10**6)
    W: Optional[int] = opt(
        None,
        "reference window: n-gram length (default 21 fixed, 201 infinite)",
        aliases=("-W",),
        minimum=1,
        maximum=10**6,
    )
    beta: float = opt(0.95, "infinite context: decay ρ per word of distance", minimum=0, maximum=1)
    max_distance: str = opt("100", "paper infinite: cut-off D in words, or 'none'")
    boundary: str = opt(
        "document",
        "document | line (lines and `<eos>` end windows; paper mode)",
        ("document", "line"),
    )
    drop_tokens: Optional[str] = opt(
        None,
        "comma list removed before windowing (default `<eos>` in paper mode, none in reference mode; "
        "'' = none)",
    )
    fix_wife_husband: bool = opt(
        False, "swap the inverted 'wife husband' lines of the pair files (counting and regulariser)"
    )
    stopwords: str = opt("nltk", "nltk (pinned 178 words) | none | FILE")
    exclude: Optional[str] = opt(None, "comma list of extra words not to score")
    min_count: int = opt(1, "score only words with at least this frequency", minimum=0)
    drop_non_alpha: bool = opt(False, "do not score tokens without a letter")
    normalise_over: str = opt("eligible", "eligible | scored | all", ("eligible", "scored", "all"))
    paper_formula_shift: bool = opt(False, "add ln(n_M/n_F) to every bias (the paper's printed formula)")
    smoothing: float = opt(0.0, "add-α smoothing of the counts (0 = off)", minimum=0)
    bootstrap: int = opt(
        1000, "bootstrap resamples for μ, σ and β intervals (0 = off)", minimum=0, maximum=10**6
    )

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
