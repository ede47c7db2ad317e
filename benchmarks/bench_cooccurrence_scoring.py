"""Scoring 1 M generated tokens for task cooccurrence-amplification, vs the current bordia scoring path.

Run: ``GENDERSCOPE_DATA_MIRROR=../shared/data .venv/bin/python benchmarks/bench_cooccurrence_scoring.py``

Text: 2000 samples × 500 words drawn i.i.d. from PTB valid (the unigram null model; ``BENCH_SAMPLES``,
``BENCH_WORDS`` change the size), penn pairs, NLTK stop words, 1000 bootstrap resamples, paper geometry.

* ``bordia path``: ``documents_from_texts`` + ``bordia.scoring.score_documents`` (``str.split`` per
  document, ``tokenize_documents``, counts, bias): what ``bordia sweep`` did with its samples.
* ``task path``: ``score_texts`` (PTB-style normalisation of each distinct token once, ids laid out with
  array operations, counts, bias) + β against the corpus bias (``amplify``): what the task does.

Both are timed per context (fixed, infinite, both together) by wall clock and process CPU time (the shared
box is loaded; CPU time is the one-core figure). The per-word biases of the two paths must agree exactly
(the text is already in corpus form, so normalisation changes nothing).
"""

from __future__ import annotations

import os
import time
import warnings

from genderscope.bordia.bias import ScoreOptions
from genderscope.bordia.cooccurrence import CountConfig
from genderscope.bordia.null_model import unigram_sample_texts
from genderscope.bordia.pairs import load_gender_pairs, load_stopwords
from genderscope.bordia.scoring import context_configs, score_documents
from genderscope.bordia.text import documents_from_texts, read_corpus
from genderscope.tasks.cooccurrence_amplification.normalise import Normaliser, vocabulary
from genderscope.tasks.cooccurrence_amplification.scoring import amplify, score_texts


def timed(fn):
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w, time.process_time() - c


def main() -> None:
    warnings.simplefilter("ignore")
    n, words = int(os.environ.get("BENCH_SAMPLES", 2000)), int(os.environ.get("BENCH_WORDS", 500))
    docs = read_corpus(["ptb:valid"])
    texts = unigram_sample_texts(docs, n, words, seed=0)
    gp = load_gender_pairs("penn")
    so = ScoreOptions(stopwords=load_stopwords("nltk"), bootstrap=1000)
    norm = Normaliser("ptb", vocabulary(d.text for d in docs))
    corpus = score_documents(docs, gp, context_configs(CountConfig(), "both"), so)
    score_texts(texts[:50], norm, gp, context_configs(CountConfig(), "both"), so)  # warm up imports
    print(f"{n * words:,} generated tokens ({n} samples × {words} words), paper geometry, B = 1000")
    for ctx in ("fixed", "infinite", "both"):
        configs = context_configs(CountConfig(), ctx)
        old, w_old, c_old = timed(lambda c=configs: score_documents(documents_from_texts(texts), gp, c, so))
        new, w_new, c_new = timed(lambda c=configs: score_texts(texts, norm, gp, c, so))
        sub = {c: corpus[c] for c in new}
        _, w_amp, c_amp = timed(lambda n=new, s=sub: amplify("generated", n, s, None, 1000, 0))
        same = all(old[c].bias.as_dict() == new[c].bias.as_dict() for c in new)
        print(
            f"{ctx:9} bordia path {w_old:5.2f} s wall {c_old:5.2f} s CPU | task path {w_new:5.2f} s wall "
            f"{c_new:5.2f} s CPU (+ β {w_amp:4.2f} s wall {c_amp:4.2f} s CPU) | same biases: {same}"
        )


if __name__ == "__main__":
    main()
