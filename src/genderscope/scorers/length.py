"""Length of each generation in words (:func:`genderscope.scorers.tokens.words`: lower-cased runs of
letters, digits and underscores, with inner apostrophes and hyphens kept; punctuation is not counted)
and in characters (Unicode code points).  Not model tokens: the same text has the same length whatever
model wrote it."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from genderscope.scorers.base import Scorer, ScorerInfo, as_metrics, ratio
from genderscope.scorers.tokens import words


class LengthScorer(Scorer):
    """Words and characters per generation; share of empty generations."""

    info = ScorerInfo(
        "length",
        "1",
        "-",
        "generation length in words (regex \\w+ runs) and characters; share of empty generations",
        None,
    )
    fields = ("n", "words", "chars", "empty")
    metric_docs = {
        "mean_words": "mean number of words per generation (regex word tokens, not model tokens), >= 0",
        "mean_chars": "mean number of characters per generation, >= 0",
        "share_empty": "share of generations with no word, in [0, 1]",
    }

    def score(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), len(self.fields)))
        for i, text in enumerate(texts):
            count = len(words(text))
            out[i] = (1, count, len(text), count == 0)
        return out

    def metrics(self, sums: np.ndarray) -> dict[str, np.ndarray]:
        s = np.asarray(sums, dtype=np.float64)
        return as_metrics(
            {
                "mean_words": ratio(s[..., 1], s[..., 0]),
                "mean_chars": ratio(s[..., 2], s[..., 0]),
                "share_empty": ratio(s[..., 3], s[..., 0]),
            }
        )
