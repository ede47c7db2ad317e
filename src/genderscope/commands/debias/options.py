"""Options of ``genderscope debias`` (routed like ``run``'s: ``--name value``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from genderscope.core.options import opt

METHODS = ("cda", "bordia", "leace", "self-debias")


@dataclass(frozen=True, kw_only=True)
class DebiasOptions:
    """``debias``: fine-tune ``--model`` with a debiasing method; the output folder is a model every task
    and backend accepts (``hf-causal:OUT/model`` or ``hf-mlm:OUT/model``) plus ``debias.json``."""

    method: str = opt(None, "cda (counterfactual data augmentation) | bordia (λ‖NB‖² on input embeddings) "
                      "| leace (linear erasure of gender from one layer's hidden states) "
                      "| self-debias (no training: the self-debias: wrapper's perplexity and audit)",
                      METHODS, argument=True)  # fmt: skip
    model: str = opt(None, "hf-causal:PATH or hf-mlm:PATH (a folder, a .gguf file)", required=True)
    out: Path = opt(None, "output folder (model/, debias.json; resumes from checkpoint.pt)", aliases=("-o",),
                    required=True)  # fmt: skip
    corpus: str = opt(
        "wikitext-2:valid", "fine-tuning text: a registry corpus (ptb:valid, wikitext-2:valid) or a file"
    )
    eval_corpus: str = opt("wikitext-2:test", "held-out text for the perplexity before and after ('' = none)")
    eval_tokens: int = opt(8000, "tokens of the held-out text scored for perplexity")
    pairs: str = opt(
        "wiki", "gender pair list: penn | wiki | dm | FILE (swapped by cda, B's pairs for bordia)"
    )
    adapter: str = opt("lora", "what is trained: lora (adapters; bordia also trains the input embeddings) "
                       "| embeddings (the input embeddings alone)", ("lora", "embeddings"))  # fmt: skip
    lam: float = opt(1.0, "bordia: weight λ of the regulariser", aliases=("--lambda",))
    steps: int = opt(100, "optimiser steps")
    batch_size: int = opt(8, "blocks per step")
    seq_len: int = opt(64, "tokens per block")
    lr: float = opt(5e-4, "AdamW learning rate")
    lora_r: int = opt(8, "LoRA rank")
    seed: int = opt(0, "seed of the block order, masking and initialisation")
    checkpoint_every: int = opt(25, "steps between checkpoints")
    max_train_texts: int = opt(0, "use only the first N training lines (0 = all)")
    layer: int = opt(-1, "leace: the transformer block whose output is erased (-1 = the middle one)")
    leace_lines: int = opt(1000, "leace: fit on at most the first N labelled lines (gendered training lines "
                           "and their swaps, kept in pairs; 0 = all)")  # fmt: skip
    threads: int | None = opt(None, "torch CPU threads (default: env GENDERSCOPE_TORCH_THREADS, else all "
                              "available cores; 0 = the free cores, for a shared machine)")  # fmt: skip
    audit: str = opt("", "tasks to run on the model before and after, compared with paired intervals "
                     "(comma-separated, e.g. crows-pairs,stereoset; '' = none)")  # fmt: skip
    audit_limit: int = opt(0, "first N items of each audited task (0 = all)")

    def __post_init__(self) -> None:
        for name in ("steps", "batch_size", "seq_len", "lora_r", "checkpoint_every"):
            if getattr(self, name) < 1:
                raise ValueError(f"--{name.replace('_', '-')} must be >= 1, got {getattr(self, name)}")
        if self.lr <= 0:
            raise ValueError(f"--lr must be > 0, got {self.lr}")
        if self.eval_tokens < 0 or self.max_train_texts < 0 or self.audit_limit < 0 or self.leace_lines < 0:
            raise ValueError("--eval-tokens, --max-train-texts, --audit-limit and --leace-lines must be >= 0")
        if self.threads is not None and self.threads < 0:
            raise ValueError(f"--threads must be >= 0, got {self.threads}")
