"""``genderscope debias``: load the model, build the training text, fine-tune, save, measure the cost."""

from __future__ import annotations

import json
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from genderscope.commands.debias.options import DebiasOptions
from genderscope.common.errors import UsageError
from genderscope.core.progress import step_done

#: model kinds each method fits (fine-tuning needs the weights)
FITS = {"cda": ("hf-causal", "hf-mlm"), "bordia": ("hf-causal", "hf-mlm"), "leace": ("hf-causal", "hf-mlm"),
        "self-debias": ("hf-causal",)}


def model_kind(spec: str, method: str) -> tuple[str, str]:
    """(kind, target) of ``--model``; a kind the method does not fit is one line naming those that do."""
    kind, _, target = spec.partition(":")
    if kind not in FITS[method] or not target:
        what = "wraps a causal LM's decoding" if method == "self-debias" else "fine-tunes local weights"
        kinds = " or ".join(k + ":PATH" for k in FITS[method])
        raise UsageError(f"--model {spec!r}: debias {method} {what} and fits {kinds}")
    return kind, target


def training_texts(spec: str, limit: int) -> list[str]:
    """Non-empty lines of a registry corpus or a file (the first ``limit`` when > 0)."""
    from genderscope.bordia.text import read_corpus

    lines = [ln.strip() for d in read_corpus([spec]) for ln in d.text.splitlines() if ln.strip()]
    return lines[:limit] if limit else lines


def load_model(kind: str, target: str) -> tuple[Any, Any]:
    """(model in float32 on the CPU, tokenizer); GGUF files are converted as the hf backends do."""
    import torch
    from transformers import AutoModelForCausalLM, AutoModelForMaskedLM

    from genderscope.backends.hf.models import load_pretrained, locate

    auto = AutoModelForCausalLM if kind == "hf-causal" else AutoModelForMaskedLM
    model, tok, _info = load_pretrained(auto, locate(target), torch.float32, "cpu", None)
    return model, tok


def erase_gender(
    model: Any, tok: Any, texts: list[str], pairs: Any, layer: int, folder: Path, max_lines: int = 0
) -> tuple[dict[str, Any], dict[str, Any]]:
    """LEACE: fit the eraser on gendered lines and their swaps (the first ``max_lines`` when > 0, rounded
    down to whole pairs), save the model with ``leace.pt`` and apply it to ``model`` in memory; returns
    (statistics, hyper-parameters)."""
    import torch

    from genderscope.debias import leace

    n_blocks = len(leace.blocks(model))
    layer = n_blocks // 2 if layer < 0 else layer
    if layer >= n_blocks:
        raise UsageError(f"--layer {layer}: the model has {n_blocks} blocks (0 … {n_blocks - 1})")
    lines = leace.labelled_lines(texts, pairs)
    found = len(lines)
    if max_lines:
        lines = lines[: max_lines - max_lines % 2]
    if len(lines) < 4:
        raise UsageError("leace needs training lines with gendered words of the pair list (found too few)")
    t0 = time.perf_counter()
    state = leace.fit(model, tok, lines, layer)
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    torch.save(state, folder / leace.FILE)
    leace.attach(model, folder)
    stats = {"lines": len(lines), "labelled_lines_found": found, "tokens": state["n_tokens"],
             "seconds": round(time.perf_counter() - t0, 3)}  # fmt: skip
    return stats, {"layer": layer, "blocks": n_blocks, "max_lines": max_lines}


def debias(o: DebiasOptions) -> dict[str, Any]:
    """Run the method; returns debias.json's content (also written to ``o.out``)."""
    from genderscope._version import __version__
    from genderscope.bordia.pairs import load_gender_pairs
    from genderscope.debias.cda import augment, swap_table
    from genderscope.debias.embedding_reg import token_regularizer
    from genderscope.debias.finetune import FinetuneConfig, finetune
    from genderscope.debias.perplexity import perplexity

    import torch

    from genderscope.backends.hf.runtime import resolve_threads

    kind, target = model_kind(o.model, o.method)
    torch.set_num_threads(resolve_threads(o.threads))
    out = Path(o.out)
    out.mkdir(parents=True, exist_ok=True)
    if o.method == "self-debias":
        return self_debias(o, out)
    pairs = load_gender_pairs(o.pairs)
    texts = training_texts(o.corpus, o.max_train_texts)
    model, tok = load_model(kind, target)
    masked = kind == "hf-mlm"
    reg = None
    if o.method == "cda":
        texts = augment(texts, swap_table(pairs.pairs))
    elif o.method == "bordia":
        reg = token_regularizer(tok, pairs.pairs, o.lam)
    held_out = training_texts(o.eval_corpus, 0) if o.eval_corpus else []
    t0 = time.perf_counter()
    before = perplexity(model, tok, held_out, masked, max_tokens=o.eval_tokens) if held_out else None
    if before:
        step_done(
            f"perplexity before: {before['ppl']:.2f} on {before['tokens']} tokens", time.perf_counter() - t0
        )
    if o.method == "leace":
        stats, hyper = erase_gender(model, tok, texts, pairs.pairs, o.layer, out / "model", o.leace_lines)
    else:
        cfg = FinetuneConfig(o.adapter, o.steps, o.batch_size, o.seq_len, o.lr, o.lora_r, o.seed,
                             o.checkpoint_every, masked)  # fmt: skip
        model, stats = finetune(model, tok, texts, cfg, out, reg, progress=lambda s: step_done(s))
        model.save_pretrained(out / "model")
        tok.save_pretrained(out / "model")
        hyper = {k: v for k, v in asdict(cfg).items() if k != "extra"}
    after = perplexity(model, tok, held_out, masked, max_tokens=o.eval_tokens) if held_out else None
    record = {
        "method": o.method,
        "base_model": o.model,
        "model": f"{kind}:{out / 'model'}",
        "data": {"corpus": o.corpus, "texts": len(texts), "pairs": pairs.describe()},
        "hyperparameters": hyper
        | (
            {"lambda": o.lam, "defining_pairs": reg.n_defining, "neutral_tokens": int(reg.neutral.numel())}
            if reg is not None
            else {}
        ),  # fmt: skip
        "training": stats,
        "perplexity": {"corpus": o.eval_corpus, "before": before, "after": after},
        "seed": o.seed,
        "num_threads": torch.get_num_threads(),
        "genderscope_version": __version__,
    }
    if o.audit:
        record["audit"] = audit(o, record["model"], out / "audit", record["perplexity"])
    (out / "debias.json").write_text(json.dumps(record, indent=1, default=str))
    return record


def audit(o: DebiasOptions, debiased: str, folder: Path, ppl: dict[str, Any]) -> dict[str, Any]:
    """Run ``--audit`` tasks on the original and the debiased model; their paired changes, also written as
    the HTML before/after view ``folder/report.html`` (with the perplexity ``ppl`` as the cost)."""
    from genderscope.core.engine import run_tasks
    from genderscope.core.paired import paired_changes
    from genderscope.report.before_after import cost_rows, write_before_after

    tasks = [t.strip() for t in o.audit.split(",") if t.strip()]
    limit = o.audit_limit or None
    for name, spec in (("before", o.model), ("after", debiased)):
        run_tasks(tasks, spec, limit=limit, out=folder / name, label=f"{name} {o.method}", progress=False)
    changes = paired_changes(folder / "before", folder / "after")
    page = write_before_after(folder / "before", folder / "after", folder / "report.html", changes,
                              cost_rows(ppl), f"debias {o.method}: before and after")  # fmt: skip
    return {"tasks": tasks, "limit": limit, "runs": [str(folder / "before"), str(folder / "after")],
            "report": str(page), "changes": [asdict(c) for c in changes]}  # fmt: skip


def self_debias(o: DebiasOptions, out: Path) -> dict[str, Any]:
    """Self-Debias trains nothing: the debiased model is the wrapper spec ``self-debias:MODEL`` (its default
    λ, ε and prefix).  Its cost is the perplexity of ln p̃ against the plain model's on the same held-out
    windows; ``--audit`` runs the tasks with the plain and the wrapped model.  Returns debias.json."""
    import torch

    from genderscope._version import __version__
    from genderscope.backends.self_debias import SelfDebiasBackend, SelfDebiasOptions
    from genderscope.debias.perplexity import perplexity, perplexity_of_scores

    backend = SelfDebiasBackend(o.model, SelfDebiasOptions(threads=torch.get_num_threads()))
    backend.load()
    held_out = training_texts(o.eval_corpus, 0) if o.eval_corpus else []
    ppl: dict[str, Any] = {"corpus": o.eval_corpus, "before": None, "after": None}
    if held_out:
        t0 = time.perf_counter()
        ppl["before"] = perplexity(backend.model, backend.tok, held_out, False, max_tokens=o.eval_tokens)
        step_done(f"perplexity before: {ppl['before']['ppl']:.2f} on {ppl['before']['tokens']} tokens",
                  time.perf_counter() - t0)  # fmt: skip
        ppl["after"] = perplexity_of_scores(
            lambda rows: backend.debiased_many([(r, 1) for r in rows]), backend.tok, held_out,
            max_tokens=o.eval_tokens,
        )  # fmt: skip
    record = {
        "method": "self-debias",
        "base_model": o.model,
        "model": f"self-debias:{o.model}",
        "data": {"corpus": None, "texts": 0},
        "hyperparameters": backend.describe()["self_debias"],
        "training": None,
        "perplexity": ppl,
        "seed": o.seed,
        "num_threads": torch.get_num_threads(),
        "genderscope_version": __version__,
    }
    if o.audit:
        record["audit"] = audit(o, record["model"], out / "audit", ppl)
    (out / "debias.json").write_text(json.dumps(record, indent=1, default=str))
    return record
