"""The declarative layer of scored (likelihood) benchmarks: see :mod:`.benchmark`."""

from genderscope.tasks.scored.benchmark import ScoredBenchmark, ScoredOptions
from genderscope.tasks.scored.items import Choice, ScoredItem, Scores
from genderscope.tasks.scored.weights import wmean, wshare, wsum

__all__ = ["Choice", "ScoredBenchmark", "ScoredItem", "ScoredOptions", "Scores", "wmean", "wshare", "wsum"]
