"""Forward tokens saved by sharing each item's context across its continuations (bbq-likelihood,
discrim-eval-likelihood), counted with a real tokenizer over the whole data sets.

Run: ``GENDERSCOPE_DATA_MIRROR=../shared/data .venv/bin/python benchmarks/bench_context_sharing.py TOKENIZER``
(``TOKENIZER``: a Hugging Face model folder, or ``FOLDER:FILE.gguf``); ``--run RUN_DIR`` instead reads a run's
measured counters (run.json ``backend_stats.context_tokens_shared``, attempts' ``n_tokens``).

Per item with context c and continuations x¹…x^K (lm-eval's encoding), the forward tokens are
* naive: one row c + x^k[:-1] per continuation, Σ_k (|c| + |x^k| − 1);
* lm-eval 0.4.13 (HFLM, ``logits_cache``): equal rows computed once (one-token continuations after the
  same context collapse into one row);
* genderscope (hf-causal, shared route when K ≥ 2 and |c| ≥ 8): |c| once + Σ_k (|x^k| − 1).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from genderscope.backends.continuations import encode_pairs
from genderscope.backends.hf.loglikelihood import SHARE_MIN_SAVED
from genderscope.data.registry import DataRegistry
from genderscope.tasks.bbq_likelihood.task import DATA as BBQ, item_of as bbq_item
from genderscope.tasks.discrim_eval_likelihood.task import DATA as DISCRIM, item_of as de_item
from genderscope.tasks.scored.jsonl_rows import each_row


def tokenizer(spec: str):  # noqa: ANN201 - a transformers tokenizer
    from transformers import AutoTokenizer

    folder, _, gguf = spec.partition(":")
    return AutoTokenizer.from_pretrained(folder, **({"gguf_file": gguf} if gguf else {}))


def count(path: Path, make, tok) -> tuple[int, int, int, int]:  # noqa: ANN001
    """(items, naive, lm-eval, genderscope) forward tokens over the file."""
    naive = lmeval = ours = 0
    items = each_row(path, make)
    for it in items:
        enc = lambda t: tok(t, add_special_tokens=False)["input_ids"]  # noqa: E731
        c, xs = encode_pairs(enc, it.candidates.context, list(it.candidates.continuations), tok.bos_token_id)
        rows = [tuple(c + x[:-1]) for x in xs]
        naive += sum(map(len, rows))
        lmeval += sum(map(len, set(rows)))
        shared = len(xs) >= 2 and len(c) * (len(xs) - 1) >= SHARE_MIN_SAVED  # the backend's rule
        ours += len(c) + sum(len(x) - 1 for x in xs) if shared else sum(map(len, rows))
    return len(items), naive, lmeval, ours


def from_run(run: Path) -> str:
    """The measured share of a run: context_tokens_shared over the naive forward tokens."""
    stats = json.loads((run / "run.json").read_text())["backend_stats"]
    att = [json.loads(x) for x in (run / "attempts.jsonl").read_text().splitlines() if x.strip()]
    k, n = len(att[0]["response"]["n_tokens"]), len(att)
    shared = stats["context_tokens_shared"]
    naive = k * shared / (k - 1) + sum(sum(a["response"]["n_tokens"]) for a in att) - n * k
    head = f"{run}: {n} items × {k} continuations, forward passes {stats['forward_passes']}"
    return f"{head}, context_tokens_shared {shared:,}, naive {naive:,.0f}: saved {shared / naive:.1%}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tokenizer", nargs="?", help="HF folder, or FOLDER:FILE.gguf")
    ap.add_argument("--run", type=Path, action="append", default=[], help="a genderscope run folder")
    args = ap.parse_args()
    for run in args.run:
        print(from_run(run))
    if args.tokenizer:
        tok, data = tokenizer(args.tokenizer), DataRegistry()
        for name, file, make in (
            ("bbq-likelihood", BBQ, bbq_item),
            ("discrim-eval-likelihood", DISCRIM, de_item),
        ):
            n, naive, lmeval, ours = count(data.path(file), make, tok)
            print(
                f"{name}: {n} items; forward tokens naive {naive:,}, lm-eval {lmeval:,}, genderscope {ours:,}"
            )
            print(f"  saved vs naive {1 - ours / naive:.1%}, vs lm-eval {1 - ours / lmeval:.1%}")


if __name__ == "__main__":
    main()
