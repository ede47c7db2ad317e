"""Corpus -> counts -> bias for one or both context types, and the ``score`` output folder.

Layout of an output folder: ``<context>/counts.tsv``, ``<context>/bias.tsv``, optional
``<context>/all_words.json`` (authors' key layout) for each context, and ``results.json``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Sequence

from genderscope.bordia.bias import BiasResult, ScoreOptions, bias_scores
from genderscope.bordia.cooccurrence import CountConfig, Counts, atomic_write_json, count_cooccurrences
from genderscope.bordia.pairs import GenderPairs
from genderscope.bordia.text import Document, TokenStream, tokenize_documents

TASK_NAME = "bordia-score"


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


def metrics_of(scores: dict[str, ContextScore]) -> dict[str, dict[str, Any]]:
    """genderscope-style metrics: ``<context>.mu`` (with bootstrap CI), ``.sigma``, counts of words."""
    metrics: dict[str, dict[str, Any]] = {}
    for ctx, sc in scores.items():
        s = sc.bias.summary
        metrics[f"{ctx}.mu"] = {"value": s["mu"], "ci_low": s["mu_ci"][0], "ci_high": s["mu_ci"][1]}
        metrics[f"{ctx}.sigma"] = {
            "value": s["sigma"],
            "ci_low": s["sigma_ci"][0],
            "ci_high": s["sigma_ci"][1],
        }
        for name in ("n_scored", "n_dropped", "n_eligible", "n_only_male", "n_only_female", "n_no_gender"):
            metrics[f"{ctx}.{name}"] = {"value": s[name]}
    return metrics


def results_json(
    scores: dict[str, ContextScore],
    inputs: Sequence[str],
    task: str = TASK_NAME,
    extra: dict[str, Any] | None = None,
    model: str | None = None,
) -> dict[str, Any]:
    """genderscope's results.json shape; ``model`` (what was scored) defaults to ``corpus:<inputs>``."""
    from genderscope import __version__

    return {
        "genderscope_version": __version__,
        "model": model or "corpus:" + ",".join(map(str, inputs)),
        "tasks": {
            task: {
                "metrics": metrics_of(scores),
                "inputs": list(inputs),
                "contexts": {
                    ctx: {"counts": sc.counts.summary(), "bias": sc.bias.summary}
                    for ctx, sc in scores.items()
                },
                **(extra or {}),
            }
        },
    }


def write_score_outputs(
    out: Path,
    scores: dict[str, ContextScore],
    inputs: Sequence[str],
    authors_format: bool = False,
    extra: dict[str, Any] | None = None,
    model: str | None = None,
) -> None:
    """Write counts.tsv, bias.tsv (and all_words.json) per context and results.json."""
    out = Path(out)
    for ctx, sc in scores.items():
        sc.counts.write_tsv(out / ctx / "counts.tsv")
        sc.bias.write_tsv(out / ctx / "bias.tsv")
        if authors_format:
            atomic_write_json(out / ctx / "all_words.json", sc.counts.authors_json())
    atomic_write_json(out / "results.json", results_json(scores, inputs, extra=extra, model=model))
