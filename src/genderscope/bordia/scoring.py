"""Documents -> counts -> bias for one or both context types (:func:`score_documents`), and their tables.

Tables of a scored text: ``<context>/counts.tsv``, ``<context>/bias.tsv`` and optional
``<context>/all_words.json`` (authors' key layout) for each context (:func:`write_score_tables`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Sequence

from genderscope.bordia.bias import BiasResult, ScoreOptions, bias_scores
from genderscope.bordia.cooccurrence import CountConfig, Counts, atomic_write_json, count_cooccurrences
from genderscope.bordia.pairs import GenderPairs
from genderscope.bordia.text import Document, TokenStream, tokenize_documents


@dataclass
class ContextScore:
    """Counts and bias of one context type."""

    counts: Counts
    bias: BiasResult


def context_configs(base: CountConfig, context: str) -> list[CountConfig]:
    """``fixed``, ``infinite`` or ``both`` -> resolved configs."""
    names = ["fixed", "infinite"] if context == "both" else [context]
    return [replace(base, context=c).resolved() for c in names]


def score_documents(
    docs: Sequence[Document], pairs: GenderPairs, configs: Sequence[CountConfig], options: ScoreOptions
) -> dict[str, ContextScore]:
    """Count and score ``docs`` once per config (tokenising once per boundary/drop set)."""
    streams: dict[tuple[str, frozenset[str]], TokenStream] = {}
    out: dict[str, ContextScore] = {}
    for cfg in configs:
        cfg = cfg.resolved()
        key = (cfg.boundary, cfg.drop_tokens or frozenset())
        if key not in streams:
            streams[key] = tokenize_documents(docs, cfg.boundary, cfg.drop_tokens or ())
        counts = count_cooccurrences(streams[key], pairs, cfg)
        out[cfg.context] = ContextScore(counts, bias_scores(counts, options))
    return out


def write_score_tables(out: Path, scores: dict[str, ContextScore], authors_format: bool = False) -> None:
    """``<context>/counts.tsv``, ``<context>/bias.tsv`` (and ``all_words.json``) under ``out``."""
    out = Path(out)
    for ctx, sc in scores.items():
        sc.counts.write_tsv(out / ctx / "counts.tsv")
        sc.bias.write_tsv(out / ctx / "bias.tsv")
        if authors_format:
            atomic_write_json(out / ctx / "all_words.json", sc.counts.authors_json())
