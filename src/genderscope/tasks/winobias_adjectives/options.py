"""Options of task ``winobias-adjectives``: defaults, the ``replicate`` preset, validation."""

from __future__ import annotations

from dataclasses import dataclass

from genderscope.core.options import opt
from genderscope.data.winobias_tables import RELEASES
from genderscope.data.winobias import parse_exclude_flags
from genderscope.data.winobias_conditions import PLACEMENTS

DEFAULTS = {
    "release": "head",
    "type": 1,
    "split": "dev",
    "placement": "position",
    "parser": "robust",
    "stats": "default",
    "exclude": "not_minimal_pair",
    "ci_method": "jackknife-t",
}
PRESETS = {
    "replicate": {
        "release": "2018-03-authors",
        "type": 1,
        "split": "test",
        "placement": "position",
        "parser": "strict",
        "stats": "replicate",
        "exclude": "none",
        "ci_method": "percentile",
    }
}


@dataclass
class WinoBiasAdjectivesOptions:
    preset: str | None = opt(
        None,
        "replicate = release 2018-03-authors, type 1, test, strict parser, replicate "
        "statistics, nothing excluded (explicit options still win)",
        ("replicate",),
    )
    release: str | None = opt(None, "WinoBias release (default head)", RELEASES)
    type: int | None = opt(None, "WinoBias type 1 or 2 (default 1)")
    split: str | None = opt(None, "dev or test (default dev)", ("dev", "test"))
    conditions: str = opt("all", "comma-separated condition slugs (the baseline none_none is always added)")
    placement: str | None = opt(None, "which mention gets which adjective (default position)", PLACEMENTS)
    parser: str | None = opt(None, "answer parser driving the metrics (default robust)", ("robust", "strict"))
    stats: str | None = opt(None, "statistics reported (default default)", ("default", "replicate"))
    exclude: str | None = opt(
        None, "comma-separated flags whose pairs are dropped, or none (default not_minimal_pair)"
    )
    on_parse_error: str = opt("raise", "what to do with unparseable lines", ("raise", "exclude"))
    bootstrap_samples: int = opt(
        10_000, "item-level paired bootstrap replicates (0 = no CIs)", minimum=0, maximum=10**6
    )
    ci_method: str | None = opt(
        None,
        "interval of bias and diff: jackknife-t (Student's t over lines, calibrated at 30 lines; "
        "default) or percentile (the item-level paired bootstrap; the replicate preset's)",
        ("jackknife-t", "percentile"),
    )
    bootstrap_seed: int = opt(0, "seed of the bootstrap (NumPy PCG64)", minimum=0, maximum=2**63 - 1)
    alpha: float = opt(0.05, "significance level")
    map_adjective_echo: bool = opt(False, "robust parser: map an echoed adjective to the entity carrying it")

    def __post_init__(self) -> None:
        preset = PRESETS.get(self.preset or "", {})
        for name, default in DEFAULTS.items():
            if getattr(self, name) is None:
                setattr(self, name, preset.get(name, default))
        if self.type not in (1, 2):
            raise ValueError("--type must be 1 or 2")
        if self.bootstrap_samples < 0:
            raise ValueError("--bootstrap-samples must be >= 0")
        if not 0 < self.alpha < 1:
            raise ValueError("--alpha must be between 0 and 1")

    @property
    def exclude_set(self) -> frozenset[str]:
        return parse_exclude_flags(self.exclude)
