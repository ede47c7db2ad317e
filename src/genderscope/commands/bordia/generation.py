"""The generation and scoring step of one λ of ``bordia sweep``, through the task machinery.

The λ's trained LM is the model ``word-lm:<lambda_dir>/model``; the samples are the attempts of task
``cooccurrence-amplification`` with no prefix (``--prefix-tokens 0``: the LM starts from a random word,
exactly like ``bordia generate``), ``--max-tokens`` = words per sample and sample j's seed =
``seed_offset + j``, run by :func:`genderscope.core.engine.run_tasks`: answers go through the response
store (a rerun or an interrupted run generates nothing twice) and ``<lambda_dir>/generation/`` gets the
run log (run.json, results.json, attempts.jsonl) like every task. The samples are also written as the
spec's files ``<lambda_dir>/samples/NNNNN.txt`` (+ manifest.json, samples.jsonl; a file is rewritten only
when its text changed). Scoring is the task's
(:func:`genderscope.tasks.cooccurrence_amplification.task.score_all`) against the training corpus's
scores, so the λ table and the task share one code path.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any, Callable

from genderscope.bordia.cooccurrence import atomic_write_json, atomic_write_text
from genderscope.bordia.lm.samples import check_sample_settings
from genderscope.bordia.options import CountingOptions
from genderscope.bordia.pairs import GenderPairs
from genderscope.bordia.scoring import ContextScore
from genderscope.bordia.text import Document
from genderscope.core.engine import run_tasks
from genderscope.common.errors import UsageError
from genderscope.tasks.cooccurrence_amplification.task import score_all

TASK = "cooccurrence-amplification"


def task_options(plan: Any) -> dict[str, Any]:
    """The task options of a sweep: its counting options, the training text as corpus, no prefix, text
    kept as the LM wrote it (``--normalise split``)."""
    o = plan.options
    counting = {f.name: getattr(o, f.name) for f in dataclasses.fields(CountingOptions)}
    return {
        **counting,
        "pairs": plan.pairs,
        "corpus": str(plan.train),
        "bias_corpus": str(plan.train),
        "samples": o.samples,
        "prefix_tokens": 0,
        "normalise": "split",
        "outliers": o.outliers,
        "bootstrap_seed": plan.score_options.seed,
    }


def write_sample_files(samples_dir: Path, texts: list[str], manifest: dict[str, Any]) -> None:
    """``NNNNN.txt`` per sample (only when its text changed), ``samples.jsonl`` and ``manifest.json``."""
    samples_dir.mkdir(parents=True, exist_ok=True)
    for f in samples_dir.glob("[0-9]*.txt"):
        if int(f.stem) >= len(texts):
            f.unlink()
    lines = []
    for j, text in enumerate(texts):
        f = samples_dir / f"{j:05d}.txt"
        body = text.strip() + "\n"
        if not f.exists() or f.read_text(encoding="utf-8") != body:
            atomic_write_text(f, body)
        seed = manifest["seed_offset"] + j
        lines.append(json.dumps({"sample": j, "seed": seed, "text": text.strip()}, ensure_ascii=False))
    atomic_write_text(samples_dir / "samples.jsonl", "\n".join(lines) + "\n")
    atomic_write_json(samples_dir / "manifest.json", manifest)


def generate_and_score(
    plan: Any,
    lam: float,
    lam_dir: Path,
    pairs: GenderPairs,
    train_docs: list[Document],
    train_scores: dict[str, ContextScore],
    log: Callable[[str], None],
) -> Any:
    """Generate the λ's samples via the runner and score them; returns the task's ``Scored``."""
    o = plan.options
    settings = {"words": o.words, "temperature": o.temperature, "seed_offset": o.seed_offset}
    check_sample_settings(lam_dir / "samples", settings, o.force)
    out = run_tasks(
        [TASK],
        f"word-lm:{lam_dir / 'model'}",
        options={**task_options(plan), "device": o.device},
        seed=o.seed_offset,
        max_tokens=o.words,
        temperature=o.temperature,
        out=lam_dir / "generation",
        progress=False,
        label=f"AWD-LSTM {plan.dataset} λ = {lam:g}",  # the checkpoint folder is always called "model"
    )
    run = out.runs[0]
    failed = [r.error for r in run.results if not r.ok]
    if failed:
        raise UsageError(f"λ = {lam:g}: {len(failed)} samples failed to generate (first: {failed[0]})")
    texts = [run.task.continuation(r) or "" for r in run.results]
    model = out.manifest.model
    manifest = {
        "checkpoint_sha256": model.fingerprint.partition(":")[2] if model else None,
        "n_samples": len(texts),
        **settings,
        "seeds": [o.seed_offset + j for j in range(len(texts))],
        "lambda": lam,
        "run_log": str(lam_dir / "generation"),
    }
    write_sample_files(lam_dir / "samples", texts, manifest)
    log(f"λ = {lam:g}: {len(texts)} samples ({run.counts.cache_hits} from the response store)")
    references = [r.attempt.meta["reference"] for r in run.results]
    return score_all(texts, references, train_docs, pairs, run.task.options, plan.score_options, train_scores)
