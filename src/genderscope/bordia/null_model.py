"""The unigram null model for β (spec §13 acceptance check; a genderscope baseline in the sweep).

Null text = ``n_samples`` documents of ``words`` tokens drawn i.i.d. (with replacement) from the token
stream of the training corpus, i.e. from its unigram distribution: it keeps every word's frequency
but carries no co-occurrence association. Scoring it exactly like generated text and regressing its
bias on the training bias gives β_null, the β the estimator produces when the "model" has learned
nothing but word frequencies. β_null is not exactly 0: only words with both counts > 0 are scored,
and the mean of a log-ratio of small counts depends on a word's frequency in the same way in both
corpora, so frequency acts as a common cause of x and y (docs/decisions.md, "Bordia & Bowman").
"""

from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np

from genderscope.bordia.amplification import AmplificationResult, amplification
from genderscope.bordia.bias import ScoreOptions
from genderscope.bordia.cooccurrence import CountConfig
from genderscope.bordia.pairs import GenderPairs
from genderscope.bordia.scoring import ContextScore, score_documents
from genderscope.bordia.text import EOS, Document, documents_from_texts

#: seed of the sweep's null baseline (recorded in results.json)
NULL_SEED = 0


def unigram_sample_texts(
    docs: Sequence[Document],
    n_samples: int,
    words: int,
    seed: int = NULL_SEED,
    drop_tokens: Iterable[str] = (EOS,),
) -> list[str]:
    """``n_samples`` texts of ``words`` tokens drawn i.i.d. from the tokens of ``docs``
    (minus ``drop_tokens``)."""
    drop = frozenset(drop_tokens)
    tokens = np.array([t for d in docs for t in d.text.split() if t not in drop], dtype=object)
    if tokens.size == 0:
        return ["" for _ in range(n_samples)]
    rng = np.random.default_rng(seed)
    draws = tokens[rng.integers(0, tokens.size, size=(n_samples, words))]
    return [" ".join(row) for row in draws]


def null_amplification(
    train_docs: Sequence[Document],
    train_scores: dict[str, ContextScore],
    pairs: GenderPairs,
    configs: Sequence[CountConfig],
    options: ScoreOptions,
    n_samples: int,
    words: int,
    seed: int = NULL_SEED,
    outliers: str | None = None,
) -> dict[str, tuple[ContextScore, AmplificationResult]]:
    """Per context: (scores of the unigram null text, β of null bias on training bias)."""
    drop = set()
    for cfg in configs:
        drop |= set(cfg.resolved().drop_tokens or ())
    texts = unigram_sample_texts(train_docs, n_samples, words, seed, drop)
    null_scores = score_documents(documents_from_texts(texts, prefix="null"), pairs, configs, options)
    out = {}
    for ctx, sc in null_scores.items():
        amp = amplification(
            train_scores[ctx].bias.as_dict(),
            sc.bias.as_dict(),
            outliers=outliers,
            bootstrap=options.bootstrap,
            seed=options.seed,
        )
        out[ctx] = (sc, amp)
    return out
