"""Bordia & Bowman (2019): corpus co-occurrence bias, debiased word-level LMs, bias amplification.

Spec: ``shared/specs/bordia_bowman.md``. Public API (lazy: nothing here imports torch)::

    from genderscope.bordia import load_gender_pairs, count_cooccurrences, bias_scores, amplification

A library: tasks and backends import it, it imports none of them (nor the engine, the CLI or the
commands). The commands as functions, ``score_corpus(CorpusScoreOptions(...))`` and
``run_sweep(SweepOptions(...))``, are in :mod:`genderscope.commands.bordia`.
"""

from __future__ import annotations

from genderscope.bordia.amplification import AmplificationResult, amplification
from genderscope.bordia.bias import BiasResult, ScoreOptions, bias_scores
from genderscope.bordia.cooccurrence import CountConfig, Counts, count_cooccurrences
from genderscope.bordia.options import CountingOptions
from genderscope.bordia.pairs import GenderPairs, load_gender_pairs, load_stopwords
from genderscope.bordia.scoring import ContextScore, score_documents
from genderscope.bordia.text import Document, TokenStream, read_corpus, tokenize_documents

#: torch-dependent names of the spec's Python API (§13), imported on first use
_LAZY = {
    "BiasRegularizer": "genderscope.bordia.lm.regularizer",
    "AWDLSTM": "genderscope.bordia.lm.model",
    "train_lm": "genderscope.bordia.lm.train",
    "generate_samples": "genderscope.bordia.lm.generate",
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
    "CountingOptions",
    "ContextScore",
    "score_documents",
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
