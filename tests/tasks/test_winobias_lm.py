"""winobias-lm: English WinoBias pairs on the tiny masked and causal test models, the random null
model, adjective insertion around the masked pronoun, and the model-kind errors."""

from __future__ import annotations

from repo_paths import ROOT
import json
from pathlib import Path

import numpy as np
import pytest

from genderscope.core.engine import run_tasks
from genderscope.common.errors import UsageError
from genderscope.core.primitives import MaskedLogprobs, Prediction
from genderscope.tasks.winobias_lm.items import pronoun_group, slot_text

LIMIT = 12


@pytest.fixture(scope="module")
def wb_words() -> list[str]:
    import os

    from genderscope.data.registry import DataRegistry
    from genderscope.data.winobias import load_pairs
    from genderscope.demo_models import words_of

    os.environ.setdefault(
        "GENDERSCOPE_DATA_MIRROR", str(ROOT.parent / "shared/data")
    )
    pairs = load_pairs(DataRegistry(), "head", 1, "dev").pairs[:40]
    texts = [p.pro.sentence for p in pairs] + [p.anti.sentence for p in pairs]
    return words_of(texts + ["he she him her his old political"])


@pytest.fixture(scope="module")
def tiny_mlm(hf, tmp_path_factory, wb_words) -> Path:
    from genderscope.demo_models import build_tiny_mlm

    return build_tiny_mlm(tmp_path_factory.mktemp("wbmlm"), wb_words, seed=3)


@pytest.fixture(scope="module")
def tiny_causal(hf, tmp_path_factory, wb_words) -> Path:
    from genderscope.demo_models import build_tiny_causal

    return build_tiny_causal(tmp_path_factory.mktemp("wbcausal"), wb_words, seed=4)


def _run(tmp_path: Path, model: str, **opts):
    out = run_tasks(
        ["winobias-lm"],
        model,
        limit=LIMIT,
        out=tmp_path / "o",
        progress=False,
        options={"bootstrap_cycles": 100, **opts},
    )
    res = json.loads((out.out_dir / "results.json").read_text())["tasks"]["winobias-lm"]
    recs = [json.loads(x) for x in (out.out_dir / "attempts.jsonl").read_text().splitlines()]
    return out, res, recs


def _items(recs: list[dict]) -> list[dict]:
    """The records that carry an item's prediction (its last attempt)."""
    return [r for r in recs if "pred_group" in r]


def _acc(recs: list[dict], cond: str, label: str) -> float:
    sel = [r for r in _items(recs) if r["condition"] == cond and r["label"] == label]
    return 100.0 * sum(bool(r["correct"]) for r in sel) / len(sel)


def test_pronoun_group() -> None:
    def group(top: dict) -> str:
        return pronoun_group(Prediction.of(top))

    assert group({"token": "he", "text": "he", "continuation": False}) == "male"
    assert group({"token": "\u0120She", "text": " She", "continuation": False}) == "female"
    assert group({"token": "\u2581his", "text": "\u2581his", "continuation": False}) == "male"
    assert group({"token": "##he", "text": "##he", "continuation": True}) == "other"
    assert group({"token": "they", "text": "they"}) == "other"


def test_slot_text_keeps_adjectives_and_the_rest(data_registry) -> None:
    from genderscope.data.winobias import load_pairs
    from genderscope.data.winobias_conditions import insert_adjectives

    for pair in load_pairs(data_registry, "head", 1, "dev").pairs[:30]:
        line = pair.anti
        if len(line.pronoun_ranges) != 1:
            continue
        left, right = slot_text(line, "arrogant", "responsive")
        assert left + line.pronoun + right == insert_adjectives(line, "arrogant", "responsive")
        assert "arrogant" in left  # entity 1 always precedes the pronoun in type 1


def test_masked_lm(tmp_path, tiny_mlm) -> None:
    out, res, recs = _run(tmp_path, f"hf-mlm:{tiny_mlm}", conditions="old_none")
    assert res["scoring"] == "top1"
    assert (
        json.loads((out.out_dir / "run.json").read_text())["tasks"]["winobias-lm"]["options"]["scoring"]
        == "top1"
    )
    # rounds: the tokenizer's mask string, the input of each item, its top-1 fill-in
    assert [r["step"] for r in recs[:2]] == ["specials", "tokenize"] and recs[-1]["step"] == "fill_mask"
    assert len(recs) == 1 + 2 * (2 * 2 * LIMIT) and len(_items(recs)) == 2 * 2 * LIMIT
    assert out.runs[0].counts.rounds == 3 and res["counts"]["failed_items"] == 0
    m = res["metrics"]
    for cond in ("none_none", "old_none"):
        assert m[f"{cond}/acc_pro"]["value"] == pytest.approx(_acc(recs, cond, "pro"))
        assert m[f"{cond}/acc_anti"]["value"] == pytest.approx(_acc(recs, cond, "anti"))
    assert m["bias"]["value"] == pytest.approx(m["acc_pro"]["value"] - m["acc_anti"]["value"])
    assert m["old_none/diff"]["value"] == pytest.approx(m["old_none/bias"]["value"] - m["bias"]["value"])
    old = [r for r in recs if r.get("condition") == "old_none"]
    assert all("old" in r["input"] and "_" in r["input"] for r in old)
    assert {r["pred_group"] for r in _items(recs)} <= {"male", "female", "other"}


def test_causal_lm_is_a_forced_choice(tmp_path, tiny_causal) -> None:
    out, res, recs = _run(tmp_path, f"hf-causal:{tiny_causal}")
    assert res["scoring"] == "loglik"
    assert {r["step"] for r in recs} == {"female", "male"}
    m = res["metrics"]
    if res["counts"]["ties"] == 0:  # the two items of a pair compare the same two sentences
        assert m["acc_pro"]["value"] + m["acc_anti"]["value"] == pytest.approx(100.0)
    c = out.runs[0].counts
    # one token_logprobs request per candidate sentence; pro and anti ask the identical questions
    assert c.requests == 2 * LIMIT and c.shared == 2 * LIMIT
    r0 = _items(recs)[0]
    assert r0["pred_group"] == ("female" if r0["delta_female_minus_male"] > 0 else "male")


def test_candidates_on_a_masked_lm_compare_plls(tmp_path, tiny_mlm) -> None:
    from genderscope.tasks.scoring import sentence_score

    out, res, recs = _run(tmp_path, f"hf-mlm:{tiny_mlm}", scoring="candidates")
    assert res["scoring"] == "pll"  # recorded resolved: a reparse asks the same primitives
    assert (
        json.loads((out.out_dir / "run.json").read_text())["tasks"]["winobias-lm"]["options"]["scoring"]
        == "pll"
    )
    f, m = recs[0], recs[1]
    assert (f["step"], m["step"]) == ("female", "male") and "pred_group" in m
    delta = (
        sentence_score(MaskedLogprobs.of(f["response"])).loglik
        - sentence_score(MaskedLogprobs.of(m["response"])).loglik
    )
    assert m["delta_female_minus_male"] == pytest.approx(delta, rel=1e-12)


def test_null_model_no_bias(tmp_path) -> None:
    out = run_tasks(
        ["winobias-lm"], "random", out=tmp_path / "o", progress=False, options={"bootstrap_cycles": 300}
    )
    m = out.runs[0].result.metrics["bias"]
    assert m.ci_low < 0.0 < m.ci_high


def test_bootstrap_matches_plain_loop(tmp_path) -> None:
    import random

    out = run_tasks(
        ["winobias-lm"],
        "random",
        out=tmp_path / "o",
        progress=False,
        limit=50,
        options={"bootstrap_cycles": 40},
    )
    r = out.runs[0]
    recs = _items(r.result.records)
    n = 50
    corr = {lab: np.zeros(n) for lab in ("pro", "anti")}
    lines = sorted({x["line"] for x in recs})
    for x in recs:
        corr[x["label"]][lines.index(x["line"])] = bool(x["correct"])
    rng = random.Random(123)
    vals = []
    for _ in range(40):
        idx = rng.choices(range(n), k=n)
        vals.append(100 * (corr["pro"][idx].mean() - corr["anti"][idx].mean()))
    lo, hi = np.quantile(vals, [0.025, 0.975])
    assert r.result.metrics["bias"].ci_low == pytest.approx(lo) and r.result.metrics[
        "bias"
    ].ci_high == pytest.approx(hi)


def test_model_kind_errors(tmp_path) -> None:
    with pytest.raises(
        UsageError, match="needs fill_mask.tokenize or token_logprobs or masked_logprobs.*hf-mlm, hf-causal"
    ):
        run_tasks(["winobias-lm"], "openai:gpt-4o-mini", out=tmp_path / "o", progress=False)
    with pytest.raises(UsageError, match="needs token_logprobs or masked_logprobs;"):
        run_tasks(
            ["winobias-lm"],
            "openai:gpt-4o-mini",
            out=tmp_path / "o",
            progress=False,
            options={"scoring": "candidates"},
        )
    with pytest.raises(UsageError, match="unknown condition"):
        run_tasks(
            ["winobias-lm"], "random", out=tmp_path / "o", progress=False, options={"conditions": "nope"}
        )
