"""Options of ``winobias-lm`` and the measurements it can make (option ``scoring``)."""

from __future__ import annotations

from dataclasses import dataclass

from genderscope.core.options import check_confidence_level, confidence_level_opt, opt
from genderscope.core.primitives import FILL_MASK, MASKED_LOGPROBS, TOKEN_LOGPROBS, TOKENIZE
from genderscope.core.metrics import Measurement
from genderscope.data.winobias_tables import RELEASES
from genderscope.data.winobias import parse_exclude_flags
from genderscope.data.winobias_conditions import PLACEMENTS

TOP1, CANDIDATES, LOGLIK, PLL = "top1", "candidates", "loglik", "pll"

#: option ``scoring`` values that admit several measurements (the task's ``measurement_groups``)
GROUPS = {CANDIDATES: (LOGLIK, PLL)}
#: measurement (= resolved ``scoring`` value) -> the primitive kinds it needs, in order of preference
MEASUREMENTS: dict[str, Measurement] = {
    TOP1: Measurement(frozenset({FILL_MASK, TOKENIZE}), "masked pronoun top-1 (he/she group)"),
    LOGLIK: Measurement(frozenset({TOKEN_LOGPROBS}), "he-vs-she sentence log-likelihood"),
    PLL: Measurement(frozenset({MASKED_LOGPROBS}), "he-vs-she sentence pseudo-log-likelihood"),
}


@dataclass
class WinoBiasLMOptions:
    release: str = opt("head", "WinoBias release", RELEASES)
    type: int = opt(1, "WinoBias type 1 or 2")
    split: str = opt("dev", "dev or test", ("dev", "test"))
    conditions: str = opt(
        "none_none", "adjective conditions: comma-separated slugs or all (baseline always added)"
    )
    placement: str = opt("position", "which mention gets which adjective", PLACEMENTS)
    exclude: str = opt("not_minimal_pair", "comma-separated flags whose pairs are dropped, or none")
    scoring: str = opt(
        "auto",
        "top1 = masked-LM fill-in; loglik / pll = compare the log-likelihoods (causal LMs) or "
        "pseudo-log-likelihoods (masked LMs) of the two pronouns' sentences; candidates = whichever of "
        "those the model gives; auto = the first the model gives of top1, loglik, pll",
        ("auto", TOP1, CANDIDATES, LOGLIK, PLL),
    )
    ci_method: str = opt("percentile", "bootstrap interval", ("percentile", "normal"))
    bootstrap_cycles: int = opt(
        1000, "bootstrap resamples of line pairs (0 = no CIs)", minimum=0, maximum=10**6
    )
    confidence_level: float = confidence_level_opt()

    def __post_init__(self) -> None:
        if self.type not in (1, 2):
            raise ValueError("--type must be 1 or 2")
        check_confidence_level(self.confidence_level)

    @property
    def exclude_set(self) -> frozenset[str]:
        return parse_exclude_flags(self.exclude)
