"""``bordia score``: corpus -> counts -> bias for one or both context types, with its run log.

Output folder: ``<context>/counts.tsv``, ``<context>/bias.tsv``, optional ``<context>/all_words.json``
(authors' key layout) for each context, and the run log (``run.json``, ``results.json``; sub-folders of a
sweep have results.json only).
"""

from __future__ import annotations

import shlex
import time
from pathlib import Path
from typing import Any, Sequence

from genderscope.bordia.inputs import default_pairs, input_datasets
from genderscope.bordia.pairs import load_gender_pairs
from genderscope.bordia.scoring import ContextScore, context_configs, score_documents, write_score_tables
from genderscope.bordia.text import read_corpus, resolve_corpus_paths
from genderscope.commands.bordia.glossary import METRIC_DOCS, REFERENCES
from genderscope.commands.bordia.options import CorpusScoreOptions
from genderscope.commands.bordia.runlog import command_manifest, score_metrics
from genderscope.common.errors import UsageError
from genderscope.core.command import Command
from genderscope.core.evidence import ReportFacts
from genderscope.core.options import check_choices
from genderscope.core.results_file import ResultsFile, TaskResults
from genderscope.core.runlog import write_run_log

COMMAND = Command(
    "bordia-score",
    "co-occurrence gender bias of every word of a corpus: μ, σ of ln P(w|F)/P(w|M) (Bordia & Bowman)",
    METRIC_DOCS,
    ReportFacts(evidence=("metrics.fixed.n_scored",), evidence_unit="scored words"),
    references=REFERENCES,
)


def score_corpus(options: CorpusScoreOptions) -> dict[str, ContextScore]:
    """``bordia score``: count and score ``options.corpora`` per context type; write the TSVs and the run
    log (run.json, results.json) into ``options.out``.

    Returns {context: counts and bias}; μ = mean |bias| and σ = population sd of the signed bias over the
    scored words, bias(w) = ln(P(w|F)/P(w|M)) in nats (positive = female-leaning).
    """
    started = time.time()
    check_choices(options)
    base, score_options = options.count_config(), options.score_options()
    pairs = load_gender_pairs(
        default_pairs(options.corpora, options.pairs), fix_wife_husband=options.fix_wife_husband
    )
    check_size(options)
    docs = read_corpus(options.corpora)
    scores = score_documents(docs, pairs, context_configs(base, options.context), score_options)
    inputs = [d.name for d in docs]
    write_score_tables(options.out, scores, options.authors_format)
    resolved = {
        "pairs": pairs.describe(),
        "count_configs": {ctx: sc.counts.config.describe() for ctx, sc in scores.items()},
        "score_options": score_options.describe(),
    }
    datasets = {**input_datasets(options.corpora), f"pairs:{pairs.name}": pairs.sha256}
    results = score_results(scores, inputs, {"mode": options.mode})
    manifest = command_manifest(COMMAND.name, options, resolved, datasets, started)
    model = "corpus:" + ",".join(options.corpora)
    write_run_log(options.out, manifest, ResultsFile(model=model, tasks={COMMAND.name: results}))
    return scores


#: memory `bordia score` needs per byte of corpus text (measured: 4.8 GB for a 190 MB, 32 M-token file)
MEMORY_PER_BYTE = 25


def check_size(options: CorpusScoreOptions) -> None:
    """UsageError before reading a corpus larger than ``--max-bytes``: `bordia audit` streams it."""
    if not options.max_bytes:
        return
    size = sum(p.stat().st_size for p in resolve_corpus_paths(options.corpora))
    if size > options.max_bytes:
        args = " ".join(shlex.quote(str(c)) for c in options.corpora)
        raise UsageError(
            f"the corpus is {_size(size)}: `bordia score` holds it in memory (about "
            f"{_size(size * MEMORY_PER_BYTE)}); `genderscope bordia audit {args} --pairs ...` counts it in "
            f"bounded memory with the same numbers (or raise --max-bytes, now {options.max_bytes:,})"
        )


def _size(n: float) -> str:
    return f"{n / 1e9:.1f} GB" if n >= 1e9 else f"{n / 1e6:.0f} MB" if n >= 1e6 else f"{n:,.0f} bytes"


def score_results(
    scores: dict[str, ContextScore], inputs: Sequence[str], extra: dict[str, Any] | None = None
) -> TaskResults:
    """A score's results.json block: metrics (μ, σ with intervals; word counts), the inputs, per-context
    count and bias summaries, and ``extra``."""
    contexts = {ctx: {"counts": sc.counts.summary(), "bias": sc.bias.summary} for ctx, sc in scores.items()}
    return TaskResults(
        metrics=score_metrics(scores),
        extra={"inputs": list(inputs), "contexts": contexts, **(extra or {})},
        headline=[f"{ctx}.{stat}" for ctx in scores for stat in ("mu", "sigma")],
    )


def write_score_outputs(
    out: Path,
    scores: dict[str, ContextScore],
    inputs: Sequence[str],
    extra: dict[str, Any] | None = None,
    model: str | None = None,
) -> None:
    """The TSVs and results.json of a scored text inside a sweep (``model``: what produced the text,
    default ``corpus:<inputs>``)."""
    write_score_tables(out, scores)
    model = model or "corpus:" + ",".join(map(str, inputs))
    results = ResultsFile(model=model, tasks={COMMAND.name: score_results(scores, inputs, extra)})
    write_run_log(Path(out), None, results)
