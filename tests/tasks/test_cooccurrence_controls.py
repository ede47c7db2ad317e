"""Controls of cooccurrence-amplification: copying the corpus gives β ≈ 1, swapping every gendered word
gives β ≈ −1 (exactly minus the copy's), the unigram null model gives β near its documented baseline 0.

Recipe (fast, PTB valid = 74k words): 1000 samples × 100 words, no prefix, any start word.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from genderscope.bordia.pairs import load_gender_pairs
from genderscope.core.engine import run_tasks
from genderscope.core.task import RunContext
from genderscope.core.lookup import task_class

TASK = "cooccurrence-amplification"
OPTIONS = {"samples": "1000", "prefix_tokens": "0", "prefix_start": "any", "bootstrap": "100"}


def _attempts(data_registry):
    from genderscope.core.options import build_options

    cls = task_class(TASK)
    ctx = RunContext(
        seed=123, generation={"max_tokens": 100}, request_kinds=frozenset({"generate"}), data=data_registry
    )
    return cls(build_options(cls.Options, OPTIONS, TASK), ctx).attempts()


def _replay(path: Path, attempts, transform) -> str:
    with open(path, "w") as fh:
        for a in attempts:
            text = transform(a.meta["reference"])
            resp = {"text": text, "n_tokens": len(text.split()), "finish_reason": "length"}
            fh.write(json.dumps({"id": a.item_id, "trial": 1, "response": resp}) + "\n")
    return f"replay:{path}"


def _run(model: str, **extra):
    out = run_tasks(
        [TASK],
        model,
        options={**OPTIONS, **extra},
        max_tokens=100,
        write=False,
        use_cache=False,
        progress=False,
    )
    return out.runs[0].result.metrics


@pytest.fixture(scope="module")
def copy_and_swap(tmp_path_factory):
    from genderscope.data.registry import DataRegistry

    attempts = _attempts(DataRegistry())
    gp = load_gender_pairs("penn")
    swap = {**{m: f for m, f in gp.pairs}, **{f: m for m, f in gp.pairs}}
    tmp = tmp_path_factory.mktemp("controls")
    copied = _run(_replay(tmp / "copy.jsonl", attempts, lambda t: t))
    swapped = _run(
        _replay(tmp / "swap.jsonl", attempts, lambda t: " ".join(swap.get(w, w) for w in t.split()))
    )
    return copied, swapped


def test_copying_the_reference_gives_beta_one(copy_and_swap) -> None:
    copied, _ = copy_and_swap
    for ctx in ("fixed", "infinite"):
        beta = copied[f"{ctx}.beta"].value
        assert abs(beta - 1) < 0.15, (ctx, beta)
        assert beta == copied[f"{ctx}.reference.beta"].value  # the copy *is* the baseline row
        assert copied[f"{ctx}.mu"].value == copied[f"{ctx}.reference.mu"].value


def test_swapping_gendered_words_gives_beta_minus_one(copy_and_swap) -> None:
    copied, swapped = copy_and_swap
    for ctx in ("fixed", "infinite"):
        beta = swapped[f"{ctx}.beta"].value
        assert abs(beta + 1) < 0.15, (ctx, beta)
        # swapping M and F negates every word's bias, so β mirrors the copy's; not bit for bit: a swapped
        # word the corpus lacks (e.g. "waitress" in PTB valid) becomes <unk>, as the corpus tokenises it
        assert beta == pytest.approx(-copied[f"{ctx}.beta"].value, abs=0.02)
        assert swapped[f"{ctx}.beta"].ci_high == pytest.approx(-copied[f"{ctx}.beta"].ci_low, abs=0.02)


#: the unigram null model's β with this recipe and --min-count 20, mean over null seeds 0-7 (audit,
#: `genderscope run ... --model random:S --unigram ptb:valid --min-count 20`): fixed 0.083, 0.111, 0.267,
#: 0.163, 0.034, 0.192, 0.230, 0.158 (mean 0.155; half of the seeds have a 95 % CI above 0); infinite
#: 0.053, 0.034, 0.023, -0.045 (seeds 0-3). The null's β is not 0 (docs/decisions.md, Bordia & Bowman:
#: null model), so the control checks coverage of this baseline, not of 0.
NULL_BASELINE = {"fixed": 0.155, "infinite": 0.016}


def test_null_model_beta_is_small_and_its_interval_covers_the_null_baseline(copy_and_swap) -> None:
    """The unigram null (random backend, seed 0) with --min-count 20: rare words make β biased upwards
    under the null (docs/decisions.md, Bordia & Bowman: null model), so words seen < 20 times are left out."""
    copied, _ = copy_and_swap
    null = _run("random:0", unigram="ptb:valid", min_count="20")
    for ctx in ("fixed", "infinite"):
        m = null[f"{ctx}.beta"]
        assert abs(m.value) < 0.3 and m.ci_low < NULL_BASELINE[ctx] < m.ci_high, (ctx, m)
        assert copied[f"{ctx}.beta"].value - m.value > 0.6
