"""Corpus -> counts -> bias for one or both context types (:func:`score_corpus`), and the output folder.

Layout of an output folder: ``<context>/counts.tsv``, ``<context>/bias.tsv``, optional
``<context>/all_words.json`` (authors' key layout) for each context, and the run log (``run.json``,
``results.json``; sub-folders of a sweep have results.json only).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Sequence

from genderscope.bordia.bias import BiasResult, ScoreOptions, bias_scores
from genderscope.bordia.cooccurrence import CountConfig, Counts, atomic_write_json, count_cooccurrences
from genderscope.bordia.options import CorpusScoreOptions, check_choices
from genderscope.bordia.pairs import GenderPairs, load_gender_pairs
from genderscope.bordia.text import Document, TokenStream, read_corpus, tokenize_documents
from genderscope.core.runlog import TaskResults

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


def score_corpus(options: CorpusScoreOptions) -> dict[str, ContextScore]:
    """``bordia score``: count and score ``options.corpora`` per context type; write the TSVs and the run
    log (run.json, results.json) into ``options.out``.

    Returns {context: counts and bias}; μ = mean |bias| and σ = population sd of the signed bias over the
    scored words, bias(w) = ln(P(w|F)/P(w|M)) in nats (positive = female-leaning).
    """
    from genderscope.bordia.inputs import default_pairs
    from genderscope.bordia.runlog import input_datasets, write_bordia_log

    started = time.time()
    check_choices(options)
    base, score_options = options.count_config(), options.score_options()
    pairs = load_gender_pairs(
        default_pairs(options.corpora, options.pairs), fix_wife_husband=options.fix_wife_husband
    )
    docs = read_corpus(options.corpora)
    scores = score_documents(docs, pairs, context_configs(base, options.context), score_options)
    inputs = [d.name for d in docs]
    write_score_tables(options.out, scores, options.authors_format)
    resolved = {
        "pairs": pairs.describe(),
        "count_configs": {ctx: sc.counts.config.describe() for ctx, sc in scores.items()},
        "score_options": score_options.describe(),
    }
    write_bordia_log(
        options.out,
        TASK_NAME,
        options,
        resolved,
        {**input_datasets(options.corpora), f"pairs:{pairs.name}": pairs.sha256},
        score_results(scores, inputs, {"mode": options.mode}),
        model="corpus:" + ",".join(options.corpora),
        started=started,
    )
    return scores


def score_results(
    scores: dict[str, ContextScore], inputs: Sequence[str], extra: dict[str, Any] | None = None
) -> TaskResults:
    """A score's results.json block: metrics (μ, σ with intervals; word counts), the inputs, per-context
    count and bias summaries, and ``extra``."""
    from genderscope.bordia.runlog import score_metrics

    contexts = {ctx: {"counts": sc.counts.summary(), "bias": sc.bias.summary} for ctx, sc in scores.items()}
    return TaskResults(
        metrics=score_metrics(scores),
        extra={"inputs": list(inputs), "contexts": contexts, **(extra or {})},
        headline=[f"{ctx}.{stat}" for ctx in scores for stat in ("mu", "sigma")],
    )


def write_score_tables(out: Path, scores: dict[str, ContextScore], authors_format: bool = False) -> None:
    """``<context>/counts.tsv``, ``<context>/bias.tsv`` (and ``all_words.json``) under ``out``."""
    out = Path(out)
    for ctx, sc in scores.items():
        sc.counts.write_tsv(out / ctx / "counts.tsv")
        sc.bias.write_tsv(out / ctx / "bias.tsv")
        if authors_format:
            atomic_write_json(out / ctx / "all_words.json", sc.counts.authors_json())


def write_score_outputs(
    out: Path,
    scores: dict[str, ContextScore],
    inputs: Sequence[str],
    extra: dict[str, Any] | None = None,
    model: str | None = None,
) -> None:
    """The TSVs and results.json of a scored text inside a sweep (``model``: what produced the text,
    default ``corpus:<inputs>``)."""
    from genderscope.bordia.runlog import write_results_only

    write_score_tables(out, scores)
    model = model or "corpus:" + ",".join(map(str, inputs))
    write_results_only(Path(out), TASK_NAME, score_results(scores, inputs, extra), model)
