"""The Bordia & Bowman commands as functions (spec §13): ``score_corpus(CorpusScoreOptions(...))`` is
``genderscope bordia score``, ``run_sweep(SweepOptions(...))`` is ``genderscope bordia sweep``.

The measurement itself (counts, bias, β, the word-level LMs) is the library :mod:`genderscope.bordia`.
Importing this package does not import torch.
"""

from __future__ import annotations

from genderscope.commands.bordia.options import CorpusScoreOptions, SweepOptions
from genderscope.commands.bordia.score import score_corpus


def __getattr__(name: str):
    if name == "run_sweep":  # imports the engine and the task (still no torch)
        from genderscope.commands.bordia.sweep import run_sweep

        return run_sweep
    raise AttributeError(f"module 'genderscope.commands.bordia' has no attribute {name!r}")


__all__ = ["CorpusScoreOptions", "SweepOptions", "score_corpus", "run_sweep"]
