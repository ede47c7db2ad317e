"""Bordia & Bowman (2019): corpus co-occurrence bias, debiased word-level LMs, bias amplification.

Spec: ``shared/specs/bordia_bowman.md``. Public API (lazy: nothing here imports torch)::

    from genderscope.bordia import load_gender_pairs, count_cooccurrences, bias_scores, amplification

The commands as functions: ``score_corpus(CorpusScoreOptions(...))`` and ``run_sweep(SweepOptions(...))``.
"""

from __future__ import annotations

from genderscope.bordia.amplification import AmplificationResult, amplification
from genderscope.bordia.bias import BiasResult, ScoreOptions, bias_scores
from genderscope.bordia.cooccurrence import CountConfig, Counts, count_cooccurrences
from genderscope.bordia.options import CorpusScoreOptions, SweepOptions
from genderscope.bordia.pairs import GenderPairs, load_gender_pairs, load_stopwords
from genderscope.bordia.scoring import score_corpus
from genderscope.bordia.text import Document, TokenStream, read_corpus, tokenize_documents

#: torch-dependent names of the spec's Python API (§13), imported on first use
_LAZY = {
    "BiasRegularizer": "genderscope.bordia.lm.regularizer",
    "AWDLSTM": "genderscope.bordia.lm.model",
    "train_lm": "genderscope.bordia.lm.train",
    "generate_samples": "genderscope.bordia.lm.generate",
    "run_sweep": "genderscope.bordia.sweep",
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'genderscope.bordia' has no attribute {name!r}")


__all__ = [
    "BiasRegularizer",
    "AWDLSTM",
    "train_lm",
    "generate_samples",
    "run_sweep",
    "score_corpus",
    "CorpusScoreOptions",
    "SweepOptions",
    "AmplificationResult",
    "amplification",
    "BiasResult",
    "ScoreOptions",
    "bias_scores",
    "CountConfig",
    "Counts",
    "count_cooccurrences",
    "GenderPairs",
    "load_gender_pairs",
    "load_stopwords",
    "Document",
    "TokenStream",
    "read_corpus",
    "tokenize_documents",
]
