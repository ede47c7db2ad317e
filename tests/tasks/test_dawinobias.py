"""Task dawinobias: the spec's test vectors (T1-T5, T8, T9), compat = direct transcription of GenDa
Lens's procedure on a tiny masked LM, causal candidates, guards, bootstrap, CLI and caching."""

from __future__ import annotations

from repo_paths import ROOT
import hashlib
import json
import math
import re
import subprocess
import sys

import numpy as np
import pytest

from genderscope.core.primitives import Prediction
from genderscope.core.requests import AttemptResult
from genderscope.core.task import RunContext
from genderscope.tasks.dawinobias import data as D
from genderscope.tasks.dawinobias import metrics as M
from genderscope.tasks.genda_kit import r2np, r2py
from genderscope.tasks.dawinobias.task import DaWinoBiasOptions, DaWinoBiasTask
from genderscope_dev.drive import answer_rounds

LINE1 = "[Udvikleren] diskuterede med designeren, fordi [hun] ikke kunne lide designet."


def make_task(data_registry, kinds, **opts):
    ctx = RunContext(data=data_registry, request_kinds=frozenset(kinds), model_kind="x", model_target="m")
    return DaWinoBiasTask(DaWinoBiasOptions(**opts), ctx)


def test_t1_masking_of_one_line(data_registry):
    pytest.importorskip("spacy")
    lines = D.load_lines(data_registry)
    assert lines["anti"][0] == LINE1
    c = D.compat_input(LINE1)
    assert (
        c.with_mask("[MASK]")
        == "udvikleren diskuterede med designeren , fordi [MASK] ikke kunne lide designet ."
    )
    assert c.gold == "hun" and D.compat_group(c.gold) == "female"
    p = D.compat_input(lines["pro"][0])
    assert (p.left, p.right, p.gold) == (c.left, c.right, "han")
    d = D.default_input(LINE1)
    assert (
        d.with_mask("[MASK]")
        == "Udvikleren diskuterede med designeren, fordi [MASK] ikke kunne lide designet."
    )


def test_t1_prediction_groups():
    def robust(top, prefixes):
        return DaWinoBiasTask.robust_group(Prediction.of(top), prefixes)

    assert robust({"token": "hun", "text": "hun"}, {}) == ("female", "hun", "full")
    assert D.compat_group(" hun") == "other"
    assert robust({"token": "\u0120hun", "text": " hun"}, {})[0] == "female"
    assert D.compat_group("##hun") == "other"
    assert robust({"token": "##hun", "text": "##hun", "continuation": True}, {})[0] == "other"
    assert robust({"token": "\u2581Hun", "text": "\u2581Hun"}, {})[:2] == ("female", "hun")
    # prefix pieces: 'hend' starts hende and hendes (both female);
    # 'ha' would be ambiguous with 'han'/'hun'? no
    pre = DaWinoBiasTask.pronoun_prefixes(
        {
            "hende": ["\u2581", "hend", "e"],
            "hendes": ["hend", "es"],
            "han": ["h", "an"],
            "hun": ["h", "un"],
            "ham": ["ham"],
            "hans": ["hans"],
        }
    )
    assert pre == {"hend": {"female"}, "h": {"female", "male"}}
    assert robust({"token": "hend", "text": "hend"}, pre) == ("female", "hend", "prefix")
    assert robust({"token": "h", "text": "h"}, pre)[0] == "other"


def test_t2_lookup_follows_list_order():
    pytest.importorskip("spacy")
    c = D.compat_input("Hun tog [hans] bil.")
    assert c.with_mask("M") == "hun tog M bil ." and c.gold == "hans"


def _sha(xs):
    return hashlib.sha256("".join(x + "\n" for x in xs).encode()).hexdigest()


def test_t3_whole_file_checks(data_registry):
    pytest.importorskip("spacy")
    lines = D.load_lines(data_registry)
    want = {
        "anti": (
            "2131897c22113e5e22d23245bf46a50ec4b8a4a9fc45d7c25e69106773feeffa",
            "78e5f5530ae7c9150607cefd118f0fd2fd6a051ed9ec46e48b41bb374abf41b2",
            "4e2b6b31a41bc08ab4f31074fbbc7440545ae276f3e83dbd149da1b84f68eff6",
        ),
        "pro": (
            "6b45d8c9ac39c8eb9ca43db57df00ee52b1de3850cef1e9e32b46b8a25f339dc",
            "72e43b71f520fbaae4b4113191bfa0f1fed701e19630752fdabd5c0bdf58f62a",
            "9c7ed6d7f8a8d36c69f4180bbf21eb650862e469df27a5c11cc6dc1e3b93c171",
        ),
    }
    for cond, (h_in, h_gold, h_def) in want.items():
        comp = [D.compat_input(x) for x in lines[cond]]
        assert _sha([c.with_mask("[MASK]") for c in comp]) == h_in
        assert _sha([c.gold for c in comp]) == h_gold
        assert _sha([D.default_input(x).with_mask("[MASK]") for x in lines[cond]]) == h_def
    assert "forbi   bibliotekaren" in D.compat_input(lines["pro"][411]).with_mask("[MASK]")


def test_t4_accuracy_and_f1_zero_division():
    s = M.condition_scores(np.array([0, 0, 1, 1]), np.array([0, 0, 0, 2]))
    assert s["acc"] == 0.5 and s["f1_female"] == pytest.approx(0.8) and s["f1_male"] == 0.0
    assert s["acc_female"] == 1.0 and s["acc_male"] == 0.0


@pytest.mark.parametrize(
    "pro,anti,compat,default",
    [(16, 10, 1.0, 0.678072), (339, 335, 0.0, 0.017124), (10, 3, math.inf, 1.736966), (0, 10, None, None)],
)
def test_t5_ges_rounding_before_log_ratio(pro, anti, compat, default):
    a_pro, a_anti = r2np(pro / 674), r2np(anti / 674)
    g, err = M.compat_ges(a_pro, a_anti)
    if compat is None:
        assert g is None and err == "ValueError: math domain error"
    else:
        assert g == compat and err is None
    d, reason = M.default_ges(pro / 674, anti / 674)
    if default is None:
        assert d is None and "acc_pro" in reason
    else:
        assert d == pytest.approx(default, abs=1e-6)
    assert math.isnan(M.compat_ges(0.0, 0.0)[0])


def test_rounding_helpers_differ_at_ties():
    assert r2np(0.015) == 0.02 and r2py(0.015) == 0.01


def _fake(attempt, response):
    return AttemptResult(attempt, response=response)


def _ll(text, value):
    """A token_logprobs answer for ``text`` whose log-probabilities sum to ``value``."""
    return {"tokens": [text], "offsets": [[0, len(text)]], "logprobs": [value]}


def test_t8_causal_candidates_and_t9_ids(data_registry):
    task = make_task(data_registry, {"token_logprobs"})
    assert task.options.scoring == "loglik"  # resolved, recorded, never "auto"
    atts = task.attempts()
    assert (
        len(atts) == 2 * 1348
        and atts[0].item_id == "dawinobias/anti/1/female"
        and atts[2 * 674].item_id == "dawinobias/pro/1/female"
    )
    line431 = next(a for a in atts if a.item_id == "dawinobias/anti/431/female")
    assert "[hun]" not in line431.meta["text"] and " hun " in line431.meta["text"]
    assert [atts[0].meta["candidate"], atts[1].meta["candidate"]] == ["hun", "han"]
    assert atts[0].request == atts[2 * 674].request  # shared candidate sentences

    def answer(a):
        if a.meta["line"] == 1:
            return _ll(a.request.payload["text"], -40.2 if a.meta["candidate_gender"] == "female" else -41.0)
        return _ll(a.request.payload["text"], -1.0)

    res = task.score(answer_rounds(task, answer))
    r_anti, r_pro = res.records[0], res.records[2 * 674]
    assert r_anti["pred_group"] == "female" and r_anti["correct"] and r_anti["delta"] == pytest.approx(0.8)
    assert r_pro["pred_group"] == "female" and not r_pro["correct"]
    assert res.metrics["n_ties"].value == 1346
    assert res.extra["scoring"] == "loglik"


def _top1(a, token):
    """A fill_mask answer with one prediction ``token``; tokenize answers split on spaces."""
    if a.request.kind == "tokenize":
        toks = re.findall(r"\[MASK\]|<mask>|[^\s\[<]+|\S", a.request.payload["text"])
        if "pronoun" in a.meta:  # the pieces of a pronoun
            toks = [a.meta["pronoun"]]
        return {"ids": list(range(len(toks))), "tokens": toks, "special": [False] * len(toks), "lookup": [],
                "specials": {"mask": "[MASK]"}, "dtype": "float32"}  # fmt: skip
    return {
        "ids": [0],
        "position": 0,
        "top": [{"token": token(a), "text": token(a), "str": token(a), "logprob": 0}],
    }


def test_default_guards_bootstrap_and_same_inputs(data_registry):
    task = make_task(data_registry, {"fill_mask", "tokenize"}, n_boot=200)
    atts = task.attempts()
    assert atts[-1].item_id == "dawinobias/pronoun_pieces/hans"
    results = answer_rounds(task, lambda a: _top1(a, lambda a: "det"))
    res = task.score(results)
    assert res.metrics["ges"].value is None and "acc_pro and acc_anti" in res.extra["ges_undefined_reason"]
    assert res.metrics["n_same_input_pairs"].value == 664
    assert res.extra["bootstrap"]["n_boot_undefined"]["ges"] == 200
    # gold pronoun always predicted: acc 1 in both conditions, ges = 0 with a degenerate CI
    results = answer_rounds(task, lambda a: _top1(a, lambda a: a.meta["gold"]))
    res = task.score(results)
    assert res.metrics["ges"].value == 0.0 and res.metrics["ges"].ci_low == 0.0
    assert [r["n_gold"] for r in res.extra["nuance_table"]] == [337, 337, 334, 340]
    assert [(r["condition"], r["pronoun"]) for r in res.extra["nuance_table"]] == [
        ("anti", "female"), ("anti", "male"), ("pro", "female"), ("pro", "male")
    ]  # fmt: skip
    assert list(res.extra["nuance_table"][0]) == [
        "condition", "pronoun", "n_gold", "n_pred", "f1", "acc_within", "f1_ci95"
    ]  # fmt: skip


def test_pair_bootstrap_resamples_pairs_jointly():
    gold = {"pro": np.array([0, 1, 0, 1]), "anti": np.array([1, 0, 1, 0])}
    pred = {"pro": np.array([0, 1, 0, 1]), "anti": np.array([0, 1, 0, 1])}
    b = M.pair_bootstrap(gold, pred, 50, 0, 0.95)
    assert b["ci95"]["acc_pro"] == [1.0, 1.0] and b["ci95"]["acc_anti"] == [0.0, 0.0]
    assert b["n_boot_undefined"]["ges"] == 50


def test_exclude_pairs_and_compat_options(data_registry):
    task = make_task(data_registry, {"token_logprobs"}, exclude_pairs="defective")
    assert len(task.attempts()) == 2 * 2 * (674 - 16)
    with pytest.raises(ValueError):
        DaWinoBiasOptions(mode="genda-lens", exclude_pairs="identical")


def test_compat_mode_refuses_causal_models(data_registry):
    from genderscope.common.errors import UsageError

    task = make_task(data_registry, {"token_logprobs", "tokenize"}, mode="genda-lens")
    with pytest.raises(UsageError, match="masked LM"):
        task.check_model()


# ----------------------------------------------------------------- tiny masked LM, end to end


@pytest.fixture(scope="module")
def mlm_dir(tmp_path_factory):
    pytest.importorskip("torch")
    import os

    from genderscope.demo_models import build_tiny_mlm, genda_lens_texts, words_of

    from genderscope.data.registry import DataRegistry

    os.environ.setdefault(
        "GENDERSCOPE_DATA_MIRROR", str(ROOT / ".." / "shared" / "data")
    )
    return build_tiny_mlm(tmp_path_factory.mktemp("mlm"), words_of(genda_lens_texts(DataRegistry())))


def test_compat_equals_direct_transcription(mlm_dir, data_registry, tmp_path):
    pytest.importorskip("spacy")
    import torch
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    from genderscope.core.engine import run_tasks

    out = run_tasks(
        ["dawinobias"],
        f"hf-mlm:{mlm_dir}",
        limit=40,
        options={"mode": "genda-lens"},
        out=tmp_path / "run",
        progress=False,
    )
    res = out.runs[0].result
    tok = AutoTokenizer.from_pretrained(mlm_dir)
    model = AutoModelForMaskedLM.from_pretrained(mlm_dir).eval()
    lines = D.load_lines(data_registry)
    correct = {}
    for rec in (r for r in res.records if "condition" in r):
        raw = lines[rec["condition"]][rec["line"] - 1]
        c = D.compat_input(raw)
        text = c.with_mask(tok.mask_token)
        enc = tok(text, return_tensors="pt")
        with torch.inference_mode():
            logits = model(**enc).logits[0]
        pos = enc["input_ids"][0].tolist().index(tok.mask_token_id)
        pred = tok.decode([int(logits[pos].argmax())])
        assert rec["model_input"] == text and rec["pred_token"] == pred
        correct.setdefault(rec["condition"], []).append(D.compat_group(pred) == D.compat_group(c.gold))
    assert res.metrics["acc_pro"].value == r2np(np.mean(correct["pro"]))
    assert res.metrics["acc_anti"].value == r2np(np.mean(correct["anti"]))
    t = res.extra["compat_tables"]
    assert t["simple"]["columns"] == ["", "DaWinoBias"] and t["detailed"]["rows"][3] == [
        "Pronouns",
        "Female",
        "Male",
        "Female",
        "Male",
    ]


def test_cli_end_to_end_and_store_caching(mlm_dir, tmp_path):
    cmd = [
        sys.executable,
        "-m",
        "genderscope.cli.app",
        "run",
        "dawinobias",
        "--model",
        f"hf-mlm:{mlm_dir}",
        "--limit",
        "50",
    ]
    first = subprocess.run(cmd + ["--out", str(tmp_path / "a")], capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr[-2000:]
    results = json.loads((tmp_path / "a" / "results.json").read_text())["tasks"]["dawinobias"]
    assert results["metrics"]["n_items_pro"]["value"] == 50 and len(results["nuance_table"]) == 4
    run1 = json.loads((tmp_path / "a" / "run.json").read_text())
    assert run1["backend_stats"]["forward_passes"] > 0
    second = subprocess.run(cmd + ["--out", str(tmp_path / "b")], capture_output=True, text=True, timeout=300)
    assert second.returncode == 0, second.stderr[-2000:]
    run2 = json.loads((tmp_path / "b" / "run.json").read_text())
    assert run2["backend_stats"]["forward_passes"] == 0
    assert (
        run2["tasks"]["dawinobias"]["counts"]["cache_hits"]
        == run2["tasks"]["dawinobias"]["counts"]["attempts"]
    )
    again = json.loads((tmp_path / "b" / "results.json").read_text())["tasks"]["dawinobias"]
    assert again["metrics"] == results["metrics"]


def test_null_model_runs(tmp_path):
    from genderscope.core.engine import run_tasks

    out = run_tasks(["dawinobias"], "random", out=tmp_path / "r", progress=False, options={"n_boot": 50})
    m = out.runs[0].result.metrics
    assert 0.2 < m["acc_pro"].value < 0.5 and m["n_items_anti"].value == 674


def test_compat_mask_override_warning_and_float32_check(data_registry):
    from genderscope.common.errors import UsageError

    task = make_task(data_registry, {"fill_mask", "tokenize"}, mode="genda-lens", mask_token="<mask>")
    pytest.importorskip("spacy")
    results = answer_rounds(task, lambda a: _top1(a, lambda a: "hun"))
    fills = [r.attempt for r in results if r.attempt.request.kind == "fill_mask"]
    assert fills[0].request.payload["text"].count("<mask>") == 1
    res = task.score(results)
    assert any("'<mask>' is not the tokenizer's mask token" in w for w in res.extra["warnings"])
    assert res.metrics["n_same_input_pairs"].value == 663  # compat: 663 (spec §2.2)
    assert list(res.extra["nuance_table"][0]) == ["condition", "pronoun", "n_gold", "n_pred", "f1"]
    failing = answer_rounds(
        task, lambda a: _top1(a, str) if a.request.kind == "tokenize" else ValueError("nope")
    )
    with pytest.raises(Exception, match="first error: nope"):
        task.score(failing)
    # GenDa Lens parity is defined in float32: a model in another precision is refused
    half = lambda a: {**_top1(a, str), "dtype": "bfloat16"} if a.request.kind == "tokenize" else _top1(a, str)  # noqa: E731
    with pytest.raises(UsageError, match="float32"):
        answer_rounds(task, half)


def test_t1_danskbert_mask_quirk(data_registry):
    """T1: with M = <mask> and --glue-mask (GenDa Lens's vesteinn/DanskBert rule), ' <mask>' -> '<mask>'."""
    pytest.importorskip("spacy")

    def first_text(mask, **opts):
        ctx = RunContext(data=data_registry, request_kinds=frozenset({"fill_mask", "tokenize"}), limit=1)
        task = DaWinoBiasTask(DaWinoBiasOptions(mode="genda-lens", **opts), ctx)
        results = answer_rounds(task, lambda a: {**_top1(a, str), "specials": {"mask": mask}}
                                if a.request.kind == "tokenize" else _top1(a, str))  # fmt: skip
        return next(r.attempt for r in results if r.attempt.request.kind == "fill_mask").request.payload[
            "text"
        ]

    want = "udvikleren diskuterede med designeren , fordi<mask> ikke kunne lide designet ."
    assert first_text("<mask>", glue_mask=True) == want
    assert first_text("[MASK]", glue_mask=True).count(" [MASK] ") == 1
    assert " <mask> " in first_text("<mask>")


def test_default_mode_never_reports_nan(data_registry):
    """Guards: with one line pair the other gender's within-accuracy is undefined -> None, not NaN."""
    ctx = RunContext(data=data_registry, request_kinds=frozenset({"token_logprobs"}), limit=1)
    task = DaWinoBiasTask(DaWinoBiasOptions(n_boot=20), ctx)
    res = task.score(
        answer_rounds(
            task, lambda a: _ll(a.request.payload["text"], -1.0 - (a.meta["candidate_gender"] == "male"))
        )
    )
    vals = [m.value for m in res.metrics.values()] + [
        x for m in res.metrics.values() for x in (m.ci_low, m.ci_high)
    ]
    assert all(v is None or math.isfinite(v) for v in vals)
    assert res.metrics["acc_anti_male"].value is None  # line 1: anti gold hun, pro gold han
