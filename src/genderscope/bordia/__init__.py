"""Bordia & Bowman (2019): corpus co-occurrence bias, debiased word-level LMs, bias amplification.

Spec: ``shared/specs/bordia_bowman.md``. Public API (lazy: nothing here imports torch)::

    from genderscope.bordia import load_gender_pairs, count_cooccurrences, bias_scores, amplification
"""

from __future__ import annotations

from genderscope.bordia.amplification import AmplificationResult, amplification
from genderscope.bordia.bias import BiasResult, ScoreOptions, bias_scores
from genderscope.bordia.cooccurrence import CountConfig, Counts, count_cooccurrences
from genderscope.bordia.pairs import GenderPairs, load_gender_pairs, load_stopwords
from genderscope.bordia.text import Document, TokenStream, read_corpus, tokenize_documents

__all__ = ["AmplificationResult", "amplification", "BiasResult", "ScoreOptions", "bias_scores", "CountConfig",
           "Counts", "count_cooccurrences", "GenderPairs", "load_gender_pairs", "load_stopwords", "Document",
           "TokenStream", "read_corpus", "tokenize_documents"]
