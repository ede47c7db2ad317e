"""Tiny stand-in scorers for the generation layer's tests (the contract of genderscope.scorers.base)."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from genderscope.scorers.base import Scorer, ScorerInfo, ratio


class WordsScorer(Scorer):
    """Words per text (``str.split``), the share of empty texts and the share of texts with 'bad'."""

    info = ScorerInfo("words", "1", "public domain", "whitespace words per text")

    def __init__(self) -> None:
        self.fields = ("texts", "words", "empty", "bad")
        self.metric_docs = {
            "mean": "mean words per text",
            "share_empty": "share of empty texts",
            "share_bad": "share of texts with the word 'bad'",
        }

    def score(self, texts: Sequence[str]) -> np.ndarray:
        return np.array(
            [[1.0, len(t.split()), float(not t.strip()), float("bad" in t.split())] for t in texts]
        ).reshape(-1, 4)

    def metrics(self, sums: np.ndarray) -> dict[str, np.ndarray]:
        s = np.asarray(sums, dtype=np.float64)
        return {
            "mean": ratio(s[..., 1], s[..., 0]),
            "share_empty": ratio(s[..., 2], s[..., 0]),
            "share_bad": ratio(s[..., 3], s[..., 0]),
        }


class RefusalStandIn(Scorer):
    """1 when a text starts with 'I cannot' (a stand-in of the refusal scorer's per-text verdict)."""

    info = ScorerInfo("refusal-standin", "1", "public domain", "starts with 'I cannot'")

    def __init__(self) -> None:
        self.fields = ("texts", "refused")
        self.metric_docs = {"refusal_rate": "share of texts that refuse"}

    def score(self, texts: Sequence[str]) -> np.ndarray:
        return np.array([[1.0, float(t.strip().startswith("I cannot"))] for t in texts]).reshape(-1, 2)

    def metrics(self, sums: np.ndarray) -> dict[str, np.ndarray]:
        s = np.asarray(sums, dtype=np.float64)
        return {"refusal_rate": ratio(s[..., 1], s[..., 0])}
