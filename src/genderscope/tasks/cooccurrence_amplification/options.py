"""Options of task ``cooccurrence-amplification``: bordia's counting and scoring options plus the sampling.

The run-level flags set the rest: ``--max-tokens`` (tokens per continuation, default 100; words for
word-level LMs, and the length in words of the reference continuation), ``--temperature`` (default 1.0)
and ``--seed`` (prefix sampling; sample j is generated with seed ``seed + j``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from genderscope.bordia.options import CONTEXTS, CountingOptions
from genderscope.core.options import opt
from genderscope.tasks.cooccurrence_amplification.normalise import STYLES


@dataclass(frozen=True, kw_only=True)
class CooccurrenceOptions(CountingOptions):
    """``genderscope run cooccurrence-amplification``: options (``--name value``)."""

    corpus: str = opt(
        "ptb:valid",
        "reference corpus the prefixes come from: ptb[:SPLIT], wikitext-2[:SPLIT], a file or a folder",
    )
    bias_corpus: Optional[str] = opt(
        None, "corpus whose per-word bias is the x of β (default: --corpus; e.g. ptb:train)"
    )
    bias_stats: Optional[str] = opt(
        None,
        "output folder of `genderscope bordia audit`: its corpus statistics are the x of β instead of "
        "counting --bias-corpus (same --pairs and counting options; e.g. the model's pretraining corpus)",
    )
    samples: int = opt(
        200, "generated samples (one prefix each; --limit caps it too)", minimum=1, maximum=10**7
    )
    prefix_tokens: int = opt(
        20, "corpus words in each prompt (0 = unconditional generation)", minimum=0, maximum=10**5
    )
    prefix_start: str = opt(
        "line", "prefixes start at a line start (line) or at any word (any)", ("line", "any")
    )
    top_p: float = opt(1.0, "nucleus sampling mass")
    context: str = opt("both", "fixed | infinite | both", CONTEXTS)
    normalise: str = opt(
        "auto",
        "tokenisation of generated text: auto (by corpus) | split | ptb | wikitext",
        STYLES,
    )
    outliers: str = opt("none", "none | residual (drop |residual| > 3 sd, refit once)", ("none", "residual"))
    bootstrap_seed: int = opt(
        0, "seed of the μ, σ and β bootstraps (NumPy PCG64)", minimum=0, maximum=2**63 - 1
    )
    scatter_words: int = opt(
        1500, "words kept for the report's scatter plot (most frequent first)", minimum=0, maximum=10**7
    )

    def __post_init__(self) -> None:
        if self.samples < 1:
            raise ValueError("--samples must be ≥ 1")
        if self.prefix_tokens < 0:
            raise ValueError("--prefix-tokens must be ≥ 0")
        if not 0 < self.top_p <= 1:
            raise ValueError("--top-p must lie in (0, 1]")
