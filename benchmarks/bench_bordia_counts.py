"""Bordia & Bowman co-occurrence counting: linear-time counters vs the direct windowed definition.

Run: ``GENDERSCOPE_DATA_MIRROR=../shared/data .venv/bin/python benchmarks/bench_bordia_counts.py``

1. End to end (read, tokenise, count, score) on WikiText-2 valid+test repeated to ~4.5M tokens, fixed
   (k = 10) and infinite (ρ = 0.95, D = 100) context, wiki pairs: tokens/s.
2. The direct O(n·window) definition, written plainly (a Python loop over positions and window offsets), on
   2M tokens of WikiText-2 valid repeated (``BENCH_PREFIX`` changes the size; the plain loops take minutes);
   the fast counters on the same prefix; ratio and agreement (fixed: identical
   integers; infinite: relative difference ≤ 1e-10 and the same zero pattern).
3. Training throughput of the tiny LM preset on CPU (tokens/s, one thread).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path


from genderscope.bordia.cooccurrence import CountConfig, count_cooccurrences
from genderscope.bordia.text import Document
from genderscope.bordia.bias import ScoreOptions, bias_scores
from genderscope.bordia.pairs import load_gender_pairs, load_stopwords
from genderscope.bordia.text import read_corpus, tokenize_documents


def direct_counts(
    tokens: list[str],
    male: frozenset[str],
    female: frozenset[str],
    context: str,
    k: int = 10,
    rho: float = 0.95,
    D: int = 100,
) -> dict[str, list[float]]:
    """The definition, literally: for every position, walk its window."""
    n = len(tokens)
    is_m = [t in male for t in tokens]
    is_f = [t in female for t in tokens]
    out: dict[str, list[float]] = {}
    reach = k if context == "fixed" else D
    for p in range(n):
        m = f = 0.0 if context == "infinite" else 0
        for j in range(max(0, p - reach), min(n, p + reach + 1)):
            if j == p:
                continue
            w = 1 if context == "fixed" else rho ** abs(j - p)
            if is_m[j]:
                m += w
            if is_f[j]:
                f += w
        acc = out.setdefault(tokens[p], [0, 0])
        acc[0] += m
        acc[1] += f
    return out


def end_to_end(path: Path, gp, stop, context: str) -> tuple[float, float, int, float]:
    """(wall seconds, CPU seconds of this process, tokens, μ). On a shared machine the CPU time is the
    one-core figure: wall time also counts the time other processes held the core."""
    t0 = time.perf_counter()
    c0 = time.process_time()
    docs = read_corpus([str(path)])
    cfg = CountConfig(context=context).resolved()
    stream = tokenize_documents(docs, cfg.boundary, cfg.drop_tokens or ())
    counts = count_cooccurrences(stream, gp, cfg)
    b = bias_scores(counts, ScoreOptions(stopwords=stop, bootstrap=0))
    return time.perf_counter() - t0, time.process_time() - c0, stream.n_tokens, b.mu


def main() -> None:
    from genderscope.data.registry import DataRegistry

    reg = DataRegistry()
    gp = load_gender_pairs("wiki")
    stop = load_stopwords("nltk")
    valid = reg.path("corpora/wikitext-2/valid.txt").read_text(encoding="utf-8")
    test = reg.path("corpora/wikitext-2/test.txt").read_text(encoding="utf-8")
    base = valid + test
    reps = max(1, round(4.5e6 / len(base.split())))
    with tempfile.TemporaryDirectory() as tmp:
        big = Path(tmp) / "wt2x.txt"
        big.write_text(base * reps, encoding="utf-8")
        small = Path(tmp) / "small.txt"
        small.write_text(valid[:20000], encoding="utf-8")
        for context in ("fixed", "infinite"):  # warm-up: one-time imports (pandas, scipy.signal) not timed
            end_to_end(small, gp, stop, context)
        print(f"1. end to end on WikiText-2 valid+test x{reps} (warm process; one core)")
        for context in ("fixed", "infinite"):
            secs, cpu, n, mu = end_to_end(big, gp, stop, context)
            print(
                f"   {context:8s}: {n:,} tokens in {secs:.2f} s wall = {n / secs / 1e6:.2f} M tokens/s; "
                f"{cpu:.2f} s CPU = {n / cpu / 1e6:.2f} M tokens/CPU-s (μ = {mu:.3f})"
            )
        print(f"   (load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)")

    n_prefix = int(os.environ.get("BENCH_PREFIX", "2000000"))  # spec §13: at least 2M tokens
    valid_tokens = valid.split()
    tokens = (valid_tokens * (n_prefix // len(valid_tokens) + 1))[:n_prefix]
    print(f"2. fast vs direct definition on {len(tokens):,} tokens (WikiText-2 valid repeated)")
    for context in ("fixed", "infinite"):
        cfg = CountConfig(context=context).resolved()
        stream = tokenize_documents([Document("v", " ".join(tokens))], cfg.boundary, cfg.drop_tokens or ())
        t0 = time.perf_counter()
        fast = count_cooccurrences(
            stream, gp, cfg
        )  # counting only (the direct loop gets tokens for free too)
        t_fast = time.perf_counter() - t0
        t0 = time.perf_counter()
        direct = direct_counts(tokens, gp.male, gp.female, context)
        t_direct = time.perf_counter() - t0
        fd = fast.as_dict()
        if context == "fixed":
            same = fd == {w: tuple(v) for w, v in direct.items()}
            verdict = "identical" if same else "DIFFERENT"
        else:
            worst = 0.0
            zeros_ok = set(fd) == set(direct)
            for w, (m, f) in fd.items():
                dm, df = direct[w]
                zeros_ok &= (m == 0) == (dm == 0) and (f == 0) == (df == 0)
                for a, b in ((m, dm), (f, df)):
                    if b:
                        worst = max(worst, abs(a - b) / abs(b))
            verdict = f"max rel. diff {worst:.1e}, zero pattern {'identical' if zeros_ok else 'DIFFERENT'}"
        print(
            f"   {context:8s}: fast {t_fast * 1e3:.1f} ms, direct {t_direct:.2f} s, "
            f"ratio {t_direct / t_fast:,.0f}x; "
            f"{verdict}"
        )

    print("3. tiny LM preset training throughput (CPU, 1 thread)")
    from genderscope.bordia.lm.train import Trainer
    from genderscope.bordia.lm.config import preset_config

    lines = reg.path("corpora/ptb/ptb.valid.txt").read_text().split("\n")
    tlines = reg.path("corpora/ptb/ptb.test.txt").read_text().split("\n")
    with tempfile.TemporaryDirectory() as tmp:
        tr, va = Path(tmp) / "train.txt", Path(tmp) / "valid.txt"
        tr.write_text("\n".join(lines[:300]) + "\n")
        va.write_text("\n".join(tlines[:100]) + "\n")
        for lam in (0.0, 1.0):
            t = Trainer(preset_config("tiny", train=str(tr), valid=str(va), lam=lam), Path(tmp) / f"run{lam}")
            stats = t.train_epoch()
            print(
                f"   λ = {lam:g}: {stats['train_tokens']:,} tokens in {stats['train_seconds']:.2f} s = "
                f"{stats['tokens_per_s']:,.0f} tokens/s (|V| = {len(t.corpus.vocab):,})"
            )


if __name__ == "__main__":
    sys.exit(main())
