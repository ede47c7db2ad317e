"""Benchmark: GenDa Lens ABC scoring, genderscope's batched engine vs the per-sentence procedures.

Model: one fixed random-initialised BERT-style masked LM (4 layers, hidden 256, vocabulary 8,000,
built on the fly, nothing downloaded).  Two comparisons, each printed with its ratio:

1. compat ABC (4,560 triplets): the abc task's rounds of primitive requests (``tokenize``, then
   ``masked_logprobs`` with nothing masked), answered in batches, vs GenDa Lens's procedure, one
   unpadded sentence per forward pass (3 passes per triplet).  The baseline runs on the first
   ``--baseline-triplets`` triplets (all 4,560 with ``--baseline-triplets 4560``; otherwise extrapolated
   linearly, said in the output).  On those triplets it prints how many per-sentence cross-entropies are
   bit-identical, how many per-sentence PPLs differ after GenDa Lens's 2-decimal rounding, and whether the
   rounded compat outputs (6 ``median (IQR)`` strings + GES, computed from those triplets) are identical.
   Note: with more than one torch thread the *baseline* changes with the thread count (MKL's threaded
   small-matrix kernels), while the batched values equal the one-thread baseline bit for bit.
2. default-mode PLL over all 13,680 ABC sentences: batched PLL (one stream of masked copies, head only at
   the masked positions) vs a per-sentence batched loop (all masked copies of one sentence per forward,
   full MLM head, as common PLL libraries do), on ``--baseline-sentences`` sentences, extrapolated.

Usage: .venv/bin/python benchmarks/bench_genda_lens.py [--threads N] [--baseline-triplets 150]
       [--baseline-sentences 150] [--pll-sentences N]
Full runs reported in docs/decisions.md ("GenDa Lens / HF backends"):
       ... --threads 1 --baseline-triplets 4560 --baseline-sentences 1000
"""

from __future__ import annotations

import argparse
import math
import os
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("GENDERSCOPE_DATA_MIRROR", str((ROOT / ".." / "shared" / "data").resolve()))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--baseline-triplets", type=int, default=150)
    ap.add_argument("--baseline-sentences", type=int, default=150)
    ap.add_argument(
        "--pll-sentences", type=int, default=None, help="limit the batched PLL run (default: all)"
    )
    args = ap.parse_args()

    import numpy as np
    import torch
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    from genderscope.backends.hf.mlm import HFMaskedLMBackend, MLMOptions
    from genderscope.demo_models import TinySize, build_tiny_mlm, genda_lens_texts, words_of
    from genderscope.core.primitives import MASKED_LOGPROBS
    from genderscope.core.requests import Job
    from genderscope.core.request_value import Request
    from genderscope.core.runner import execute_task
    from genderscope.core.task import RunContext
    from genderscope.tasks.abc.task import ABCOptions, ABCTask
    from genderscope.tasks.scoring import sentence_score
    from genderscope.data.registry import DataRegistry
    from genderscope.tasks.abc import data as D

    os.environ.setdefault("GENDERSCOPE_HOME", tempfile.mkdtemp(prefix="gs-bench-"))
    data = DataRegistry()
    model_dir = build_tiny_mlm(
        Path(tempfile.mkdtemp(prefix="gs-bench-mlm-")),
        words_of(genda_lens_texts(data)),
        size=TinySize(hidden=256, layers=4, heads=4),
        vocab_size=8000,
        seed=0,
    )
    default_triplets = [t for g in D.GROUPS for t in D.parse_triplets(D.read_text(data, g), g)]
    b = HFMaskedLMBackend(str(model_dir), MLMOptions(threads=args.threads, batch_tokens=4096))
    b.load()
    threads = torch.get_num_threads()
    print(
        f"model: BERT 4x256, vocab {b.tok.vocab_size}, "
        f"{sum(p.numel() for p in b.model.parameters()) / 1e6:.1f}M "
        f"params; torch threads {threads}; split head: {b.encoder is not None}"
    )

    # ---------------------------------------------------------------- 1. compat ABC
    # the abc task's own rounds (tokenize specials, tokenize S text E, masked_logprobs with nothing masked),
    # answered by the loaded backend without the response store
    task = ABCTask(ABCOptions(mode="genda-lens"), RunContext(data=data, request_kinds=b.request_kinds))
    t0 = time.perf_counter()
    ex = execute_task(task, b, None, use_cache=False)
    recs = [r for r in task.score(ex.results).records if "ce" in r]
    t_batched = time.perf_counter() - t0
    triplets = [D.Triplet(r["occupations"], r["triplet"], (r["text"], "", ""), "", "") for r in recs[::3]]
    out = {i: [recs[3 * i + v]["ce"] for v in range(3)] for i in range(len(triplets))}

    tok = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForMaskedLM.from_pretrained(model_dir).eval()
    n_base = min(args.baseline_triplets, len(triplets))
    loss = torch.nn.CrossEntropyLoss()
    base_ce = []
    t0 = time.perf_counter()
    with torch.inference_mode():
        for t in triplets[:n_base]:  # GenDa Lens: one unpadded sentence per forward, no attention mask
            toks = tok.tokenize(tok.cls_token + " " + t.lines[0] + " " + tok.sep_token)
            k = next(i for i, x in enumerate(toks) if x in D.COMPAT_FIND)
            target = torch.tensor(tok.convert_tokens_to_ids(toks))
            row = []
            for word in (None, "hans", "hendes"):
                tv = list(toks)
                if word:
                    tv[k] = word
                logits = model(torch.tensor([tok.convert_tokens_to_ids(tv)])).logits[0]
                row.append(float(loss(logits, target)))  # float32 CE, as GenDa Lens
            base_ce.append(row)
    t_base = (time.perf_counter() - t0) * len(triplets) / n_base
    batched_ce = [out[i] for i in range(n_base)]
    n_vals = 3 * n_base
    n_bits = sum(a != b for ra, rb in zip(batched_ce, base_ce) for a, b in zip(ra, rb))
    maxrel = max(
        abs(math.exp(a) - math.exp(b)) / math.exp(b)
        for ra, rb in zip(batched_ce, base_ce)
        for a, b in zip(ra, rb)
    )
    r2 = lambda x: float(np.rint(np.float64(x) * 100.0) / 100.0)  # noqa: E731 - GenDa Lens's .round(2)
    n_ppl_2dp = sum(
        r2(math.exp(a)) != r2(math.exp(b)) for ra, rb in zip(batched_ce, base_ce) for a, b in zip(ra, rb)
    )
    tables_b = compat_tables(batched_ce, triplets[:n_base])
    tables_s = compat_tables(base_ce, triplets[:n_base])
    print(
        f"\ncompat ABC, {len(triplets)} triplets ({3 * len(triplets)} sentences), {threads} torch thread(s):"
    )
    print(
        f"  batched (genderscope):          {t_batched:8.2f} s  "
        f"({3 * len(triplets) / t_batched:8.1f} sentences/s)"
    )
    extrap = "measured" if n_base == len(triplets) else f"extrapolated from {n_base} triplets"
    print(f"  one sentence per forward:       {t_base:8.2f} s  ({extrap})")
    print(f"  speed-up: {t_base / t_batched:.1f}x")
    print(
        f"  values on the {n_base} compared triplets: {n_vals - n_bits}/{n_vals} cross-entropies "
        "bit-identical, "
        f"max relative PPL difference {maxrel:.2e}; per-sentence PPLs differing after r2np: {n_ppl_2dp}; "
        f"compat tables (6 median (IQR) strings + GES) identical: {tables_b == tables_s}"
    )
    if tables_b != tables_s:
        for k in tables_b:
            if tables_b[k] != tables_s[k]:
                print(f"    {k}: batched {tables_b[k]!r} vs one-per-forward {tables_s[k]!r}")

    # ---------------------------------------------------------------- 2. default-mode PLL
    sents = [s for t in default_triplets for s in t.lines]
    if args.pll_sentences:
        sents = sents[: args.pll_sentences]
    uniq = list(dict.fromkeys(sents))
    n_copies = sum(len(b._encode({"text": s})[1]) for s in uniq)
    fw0 = b.counters["forward_passes"]
    got: dict[int, object] = {}
    t0 = time.perf_counter()
    jobs = [
        Job(i, Request(MASKED_LOGPROBS, {"text": s, "mask": "each"}), 1, str(i)) for i, s in enumerate(uniq)
    ]
    b.answer(jobs, lambda j, o: got.__setitem__(j.index, o))
    pll = {s: sentence_score(got[i].response).loglik for i, s in enumerate(uniq)}  # type: ignore[attr-defined]
    res = [{"loglik": pll[s]} for s in sents]
    t_pll = time.perf_counter() - t0
    fw = b.counters["forward_passes"] - fw0
    n_b = min(args.baseline_sentences, len(sents))
    base_vals = []
    base_copies = 0
    t0 = time.perf_counter()
    with torch.inference_mode():
        for s in sents[:n_b]:  # all masked copies of one sentence in one forward, full head (B x T x V)
            ids, scored = b._encode({"text": s})
            x = torch.tensor([ids] * len(scored))
            x[torch.arange(len(scored)), torch.tensor(scored)] = tok.mask_token_id
            logp = torch.log_softmax(
                model(input_ids=x).logits[torch.arange(len(scored)), torch.tensor(scored)], -1
            )
            base_vals.append(
                float(logp[torch.arange(len(scored)), torch.tensor([ids[t] for t in scored])].double().sum())
            )
            base_copies += len(scored)
    t_b = time.perf_counter() - t0
    t_b_full = t_b * len(sents) / n_b
    maxrel = max(abs(res[i]["loglik"] - base_vals[i]) / abs(base_vals[i]) for i in range(n_b))
    print(
        f"\ndefault-mode PLL, {len(sents)} sentences ({len(dict.fromkeys(sents))} distinct), "
        f"{n_copies} masked copies:"
    )
    print(
        f"  batched stream (genderscope):   {t_pll:8.2f} s  ({n_copies / t_pll:9.0f} masked tokens/s, "
        f"{fw} forwards)"
    )
    print(
        f"  per-sentence batched loop:      {t_b_full:8.2f} s  ({base_copies / t_b:9.0f} masked tokens/s, "
        f"{'measured' if n_b == len(sents) else f'extrapolated from {n_b} sentences'})"
    )
    print(
        f"  speed-up: {t_b_full / t_pll:.1f}x; "
        f"max relative PLL difference on the compared sentences: {maxrel:.2e}"
    )


def compat_tables(ce: list[list[float]], triplets: list) -> dict[str, object]:
    """GenDa Lens's rounded compat outputs from per-sentence CEs: 6 summary strings and the GES."""
    import numpy as np

    from genderscope.tasks.abc import metrics as M

    ppl = np.exp(np.array(ce, dtype=np.float64))
    rel = {"female": ppl[:, 2] - ppl[:, 0], "male": ppl[:, 1] - ppl[:, 0]}
    fem = np.array([t.group == "female" for t in triplets])
    out: dict[str, object] = {}
    for occ, idx in (("all", np.ones_like(fem)), ("femocc", fem), ("maleocc", ~fem)):
        for pron in ("female", "male"):
            if idx.any():
                out[f"{pron}_{occ}"] = M.compat_summary(rel[pron][idx])[3]
    out["ges"] = M.compat_ges(M.compat_summary(rel["female"])[0], M.compat_summary(rel["male"])[0])[:2]
    return out


if __name__ == "__main__":
    main()
