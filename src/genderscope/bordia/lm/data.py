"""LM data (spec §7.2): dictionary over train, valid, test (first-appearance order); each line is
``line.split()`` plus one ``<eos>``; batchify lays a stream out as ``batch`` contiguous columns.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import torch

from genderscope.bordia.text import EOS, read_text_file


@dataclass
class LMCorpus:
    """Vocabulary (id order) and the id streams of the three splits."""

    vocab: list[str]
    train: torch.Tensor
    valid: torch.Tensor
    test: torch.Tensor

    @property
    def index(self) -> dict[str, int]:
        return {w: i for i, w in enumerate(self.vocab)}


def _lines(text: str) -> list[str]:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # a final newline ends the last line, it does not open a new one
    return lines


def build_corpus(
    train_text: str, valid_text: str, test_text: str, vocab: Sequence[str] | None = None
) -> LMCorpus:
    """Tokenise the three splits; build the dictionary (or use a saved ``vocab``; unknown words are
    an error)."""
    index: dict[str, int] = {w: i for i, w in enumerate(vocab)} if vocab is not None else {}
    fixed = vocab is not None
    streams = []
    for text in (train_text, valid_text, test_text):
        ids: list[int] = []
        for line in _lines(text):
            for w in line.split() + [EOS]:
                i = index.get(w)
                if i is None:
                    if fixed:
                        raise KeyError(w)
                    i = index[w] = len(index)
                ids.append(i)
        streams.append(torch.tensor(ids, dtype=torch.long))
    return LMCorpus(list(index), *streams)


def load_corpus(
    train: Path, valid: Path, test: Path | None = None, vocab: Sequence[str] | None = None
) -> LMCorpus:
    """Read split files (test defaults to valid)."""
    texts = [read_text_file(p) for p in (train, valid, test or valid)]
    return build_corpus(*texts, vocab=vocab)


def batchify(stream: torch.Tensor, batch: int) -> torch.Tensor:
    """Trim to a multiple of ``batch`` and lay out as ``batch`` contiguous columns (T × batch)."""
    n = stream.numel() // batch
    return stream[: n * batch].view(batch, n).t().contiguous()
