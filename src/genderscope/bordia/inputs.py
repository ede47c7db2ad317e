"""Resolving the corpus and pair-list arguments of ``bordia score``, ``train`` and ``sweep``."""

from __future__ import annotations

from pathlib import Path
from typing import Optional, Sequence

from genderscope.bordia.pairs import DATASET_PAIRS
from genderscope.bordia.text import REGISTRY_CORPORA, resolve_corpus_paths
from genderscope.common.errors import UsageError

DATASETS = ("ptb", "wikitext-2", "cnn_dailymail")


def one_path(spec: str) -> Path:
    """The single file a corpus argument names (a file or a registry split such as ``ptb:valid``)."""
    paths = resolve_corpus_paths([spec])
    if len(paths) != 1:
        raise UsageError(f"{spec}: expected one file, found {len(paths)}")
    return paths[0]


def default_pairs(corpora: Sequence[str], pairs: Optional[str]) -> str:
    """``pairs`` if given, else the pair list of a registry corpus (``penn`` for PTB, ``wiki`` for
    WikiText-2)."""
    if pairs:
        return pairs
    names = {c.partition(":")[0] for c in corpora}
    if len(names) == 1 and next(iter(names)) in DATASET_PAIRS and not Path(corpora[0]).exists():
        return DATASET_PAIRS[next(iter(names))]
    raise UsageError(
        "--pairs is required (penn for PTB, wiki for WikiText-2, dm for CNN/Daily Mail, or a file)"
    )


def split_specs(
    dataset: Optional[str], train: Optional[str], valid: Optional[str], test: Optional[str]
) -> tuple[str, str, Optional[str]]:
    """The train, valid and test corpus arguments, ``--dataset`` filling in its registry splits."""
    if dataset is not None and dataset not in DATASETS:
        raise UsageError(f"--dataset must be ptb, wikitext-2 or cnn_dailymail, got {dataset!r}")
    if dataset and not train:
        if dataset == "cnn_dailymail":
            raise UsageError("cnn_dailymail is not distributed: pass --train/--valid/--test files")
        train, valid, test = f"{dataset}:train", valid or f"{dataset}:valid", test or f"{dataset}:test"
    if not train or not valid:
        raise UsageError("give --dataset ptb|wikitext-2 or --train FILE --valid FILE [--test FILE]")
    return train, valid, test


def resolve_splits(
    dataset: Optional[str], train: Optional[str], valid: Optional[str], test: Optional[str]
) -> tuple[str, Path, Path, Optional[Path]]:
    """(dataset label, train, valid, test) from ``--dataset`` and/or explicit files (or registry names)."""
    train, valid, test = split_specs(dataset, train, valid, test)
    name = train.partition(":")[0]
    label = dataset or (name if name in REGISTRY_CORPORA and not Path(train).exists() else Path(train).stem)
    return label, one_path(train), one_path(valid), one_path(test) if test else None


def input_datasets(specs: Sequence[str | Path]) -> dict[str, str]:
    """sha256 of every file of the corpus arguments ``specs``, keyed by the logical data-registry name for
    registry corpora (``corpora/ptb/ptb.valid.txt``) and by the path otherwise."""
    from genderscope.bordia.text import registry_corpus_file
    from genderscope.data.pins import sha256_file

    out: dict[str, str] = {}
    for spec in specs:
        paths = resolve_corpus_paths([spec])
        logical = None if Path(spec).exists() else registry_corpus_file(str(spec))
        for path in paths:
            out[logical or str(path)] = sha256_file(path)
    return out
