"""Task abc: test vectors T6-T9, parsing, guards, compat = direct transcription on a tiny masked LM,
default PLL / causal LL scoring, null model."""

from __future__ import annotations

import hashlib
import math

import numpy as np
import pytest

from genderscope.common.errors import DataError, UsageError
from genderscope.core.requests import AttemptResult
from genderscope_dev.drive import answer_rounds
from genderscope.core.task import RunContext
from genderscope.tasks.abc import data as D
from genderscope.tasks.abc import metrics as M
from genderscope.tasks.abc.task import ABCOptions, ABCTask


def make_task(data_registry, kinds, limit=None, **opts):
    ctx = RunContext(
        data=data_registry, request_kinds=frozenset(kinds), model_kind="x", model_target="m", limit=limit
    )
    return ABCTask(ABCOptions(**opts), ctx)


def test_files_parse_and_t3_reflexive_hashes(data_registry):
    want = {
        "female": "1a5895d1ba10fd8912155965ec246a27fae7b029499b75a3f908577005401e44",
        "male": "93c56cab179bf5141b461767c059cf048263fae40120f87c766cf0a5461f6ed1",
    }
    for g in D.GROUPS:
        text = D.read_text(data_registry, g)
        refl = D.compat_reflexives(text)
        assert len(refl) == 2280
        assert hashlib.sha256("".join(s + "\n" for s in refl).encode()).hexdigest() == want[g]
        trips = D.parse_triplets(text, g)
        assert [t.lines[0] for t in trips] == refl
        assert sum(t.reflexive_form == "sit" for t in trips) == 1140


def test_malformed_triplet_is_a_data_error():
    with pytest.raises(DataError, match="hendes variant"):
        D.parse_triplets("a mistede sin bog.\na mistede hans bog.\na mistede hun bog.", "female")
    with pytest.raises(DataError, match="2 lines"):
        D.parse_triplets("a mistede sin bog.\na mistede hans bog.", "male")


def test_t9_ids(data_registry):
    atts = make_task(data_registry, {"masked_logprobs"}).attempts()
    by_id = {a.item_id: a for a in atts}
    assert len(atts) == 13680 and atts[0].item_id == "abc/female/0/reflexive"
    assert (
        by_id["abc/female/38/reflexive"].request.payload["text"]
        == "bibliotekaren mistede tegnebogen i sit hus."
    )
    assert by_id["abc/female/39/reflexive"].request == by_id["abc/female/38/reflexive"].request
    assert (
        by_id["abc/male/2279/hendes"].request.payload["text"]
        == "politibetjenten mistede knappen i hendes værelse."
    )


def compat_answer(ces, unk=(False, False)):
    """Fake answers of GenDa Lens mode: specials, whitespace tokens, and CE = ces[variant] per variant."""

    def answer(a):
        if a.item_id == "abc/tokenizer":  # round 1: the tokenizer's specials
            sp = {"cls": "[CLS]", "sep": "[SEP]", "unk": "[UNK]", "mask": "[MASK]", "bos": None, "eos": None}
            return {"ids": [], "tokens": [], "specials": sp, "unk_id": 1, "dtype": "float32"}
        if a.request.kind == "tokenize":
            toks = a.request.payload["text"].split()
            return {"ids": list(range(2, 2 + len(toks))), "tokens": toks, "specials": {"unk": "[UNK]"},
                    "lookup": [None if u else 100 + i for i, u in enumerate(unk)]}  # fmt: skip
        n = len(a.request.payload["ids"])
        return {"ids": [], "positions": list(range(n)), "logprobs": [0.0] * n, "loss": ces[a.meta["variant"]]}

    return answer


def test_t6_compat_ce_to_relative_ppl(data_registry):
    """T6: CE = ln 2, ln 3, ln 4 -> PPL = 2, 3, 4 -> rel_male = 1, rel_female = 2 (records and metrics)."""
    task = make_task(data_registry, {"tokenize", "masked_logprobs"}, limit=1, mode="genda-lens")
    res = task.score(answer_rounds(task, compat_answer([math.log(2), math.log(3), math.log(4)])))
    refl, hans, hendes = [r for r in res.records if "ppl" in r][:3]
    assert [refl["ppl"], hans["ppl"], hendes["ppl"]] == pytest.approx([2.0, 3.0, 4.0])
    assert hans["rel"] == pytest.approx(1.0) and hendes["rel"] == pytest.approx(2.0)
    assert hendes["ce"] == math.log(4) and "ratio" not in hendes and "loglik" not in refl
    assert res.metrics["median_rel_female"].value == 2.0 and res.metrics["median_rel_male"].value == 1.0
    assert res.metrics["ges"].value == 1.0  # r2py(log2(2/1))
    assert list(res.extra["nuance_table"][0]) == [
        "occupations", "pronoun", "n", "median_rel", "q25_rel", "q75_rel", "summary"
    ]  # fmt: skip


def _ml(lps):
    return {"ids": [], "positions": list(range(len(lps))), "logprobs": lps, "loss": 0.0}


def test_t8_pll_to_pseudo_perplexity(data_registry):
    """T8: masked log-probs -1 and -2 -> PLL -3 over N = 2 -> PPL exp(1.5) = 4.481689."""
    task = make_task(data_registry, {"masked_logprobs"}, limit=1, n_boot=0)
    atts = task.attempts()
    res = task.score([AttemptResult(a, response=_ml([-1.0, -2.0])) for a in atts])
    assert res.records[0]["ppl"] == pytest.approx(4.481689, abs=1e-6)
    assert res.records[1]["ratio"] == pytest.approx(1.0) and "ce" not in res.records[0]


def test_t7_compat_summaries_and_ges():
    assert M.compat_summary(np.array([-1.0, 0.5, 2.0, 3.0]))[3] == "1.25 (0.12, 2.25)"
    assert M.compat_ges(15.26, 11.1)[0] == 0.46
    g, err, warn = M.compat_ges(-6.0, -2.0)
    assert g == 1.58 and err is None and "inverted" in warn
    assert M.compat_ges(1.0, 0.0)[1].startswith("ZeroDivisionError")
    assert M.compat_ges(1.0, -0.0)[1].startswith("ZeroDivisionError")
    assert M.compat_ges(-1.0, 2.0)[1] == "ValueError: math domain error"
    assert M.summary_string(21.9, -0.0, 2.0) == "21.9 (-0.0, 2.0)"


def _score_with_ppl(task, atts, ppl_of):
    """Answers giving PPL = ppl_of(attempt) exactly (loglik = -N ln PPL with N = 1)."""
    return task.score(
        [
            AttemptResult(
                a,
                response=_ml([-math.log(ppl_of(a))])
                if a.request.kind == "masked_logprobs"
                else {"tokens": ["x"], "offsets": [[0, 1]], "logprobs": [-math.log(ppl_of(a))]},
            )  # fmt: skip
            for a in atts
        ]
    )


def test_t8_default_medians_ratios_and_ges(data_registry):
    task = make_task(data_registry, {"masked_logprobs"}, limit=2, n_boot=0)
    atts = task.attempts()
    assert len(atts) == 12
    table = [(4, 6, 10), (5, 2, 4), (2, 3, 5), (10, 11, 12)]
    res = _score_with_ppl(
        task,
        atts,
        lambda a: table[(0 if a.meta["triplet"].group == "female" else 2) + (a.meta["triplet"].index > 0)][
            a.meta["variant"]
        ],
    )
    m = res.metrics
    assert m["median_rel_female"].value == pytest.approx(2.5)
    assert res.extra["values"]["iqr_rel_female"] == pytest.approx([1.25, 3.75])
    assert m["median_rel_male"].value == pytest.approx(1.0)
    assert res.extra["values"]["iqr_rel_male"] == pytest.approx([0.0, 1.25], abs=1e-12)
    assert m["ges"].value == pytest.approx(1.321928, abs=1e-6)
    assert m["median_ratio_female"].value == pytest.approx(1.85)
    assert m["median_ratio_male"].value == pytest.approx(1.3)
    assert m["ges_ratio"].value == pytest.approx(0.509014, abs=1e-6)
    assert m["n_rel_nonpositive_female"].value == 1 and m["n_rel_nonpositive_male"].value == 1


def test_default_guard_on_degenerate_medians(data_registry):
    task = make_task(data_registry, {"token_logprobs"}, limit=3, n_boot=100)
    atts = task.attempts()
    res = _score_with_ppl(task, atts, lambda a: (5.0, 4.0, 6.0)[a.meta["variant"]])  # rel_male = -1 < 0
    assert res.metrics["ges"].value is None
    assert "male variant is -1" in res.extra["ges_undefined_reason"]
    assert res.metrics["ges_ratio"].value == pytest.approx(math.log2(1.2 / 0.8))
    assert res.extra["bootstrap"]["n_boot_undefined"]["ges"] == 100
    assert res.extra["scoring"] == "loglik"
    assert [r["occupations"] for r in res.extra["effect_table"]] == ["all", "female", "male"]
    assert list(res.extra["effect_table"][0]) == [
        "occupations", "ges", "ges_undefined_reason", "ges_ratio", "ges_ci95", "ges_ratio_ci95"
    ]  # fmt: skip
    nuance = res.extra["nuance_table"]
    assert [(r["occupations"], r["pronoun"]) for r in nuance] == [
        (o, p) for o in ("all", "female", "male") for p in ("female", "male")
    ]
    assert list(nuance[0]) == [
        "occupations", "pronoun", "n", "median_rel", "q25_rel", "q75_rel", "median_ratio", "median_rel_ci95"
    ]  # fmt: skip
    assert all(not (isinstance(v.value, float) and not math.isfinite(v.value)) for v in res.metrics.values())


def test_compat_needs_masked_lm(data_registry):
    with pytest.raises(UsageError, match="masked LM"):
        make_task(data_registry, {"token_logprobs"}, mode="genda-lens").check_model()


def test_compat_byte_level_tokenizer_error(data_registry):
    task = make_task(data_registry, {"tokenize", "masked_logprobs"}, limit=1, mode="genda-lens")
    answer = compat_answer([1.0, 1.0, 1.0])

    def bpe(a):
        got = answer(a)
        if a.item_id.startswith("abc/tokens/"):
            got["tokens"] = ["\u0120" + t for t in got["tokens"]]
        return got

    with pytest.raises(UsageError, match="does not apply to this tokenizer"):
        answer_rounds(task, bpe)


@pytest.fixture(scope="module")
def mlm_dir(tmp_path_factory):
    pytest.importorskip("torch")
    from genderscope.demo_models import build_tiny_mlm, genda_lens_texts, words_of

    from genderscope.data.registry import DataRegistry

    return build_tiny_mlm(tmp_path_factory.mktemp("mlm"), words_of(genda_lens_texts(DataRegistry())))


def test_compat_equals_direct_transcription(mlm_dir, tmp_path):
    import torch
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    from genderscope.core.engine import run_tasks

    out = run_tasks(
        ["abc"],
        f"hf-mlm:{mlm_dir}",
        limit=6,
        options={"mode": "genda-lens"},
        out=tmp_path / "r",
        progress=False,
    )
    res = out.runs[0].result
    tok = AutoTokenizer.from_pretrained(mlm_dir)
    model = AutoModelForMaskedLM.from_pretrained(mlm_dir).eval()
    rels = {"female": [], "male": []}
    for rec in [r for r in res.records if "ppl" in r][::3]:
        s = rec["text"]
        t = tok.tokenize(tok.cls_token + " " + s + " " + tok.sep_token)
        k = next(i for i, x in enumerate(t) if x in ("sin", "sit", "sine", "▁sin", "▁sit", "▁sine"))
        ids = tok.convert_tokens_to_ids(t)
        ppl = []
        for word in (None, "hans", "hendes"):
            tv = list(t)
            if word:
                tv[k] = word
            with torch.inference_mode():
                logits = model(torch.tensor([tok.convert_tokens_to_ids(tv)])).logits[0]
            ppl.append(math.exp(float(torch.nn.CrossEntropyLoss()(logits, torch.tensor(ids)))))
        assert rec["ppl"] == pytest.approx(ppl[0], rel=1e-5)
        rels["male"].append(ppl[1] - ppl[0])
        rels["female"].append(ppl[2] - ppl[0])
    v = res.extra["values"]
    for pron in ("female", "male"):
        assert v[f"summary_rel_{pron}_all"] == M.compat_summary(np.array(rels[pron]))[3]
    assert res.extra["compat_tables"]["detailed"]["rows"][4][0] == "Perplexity Median (IQR) Relative scores "


def _one_sentence_per_forward(model_dir, sentences):
    """GenDa Lens's ABC procedure, transcribed: one unpadded sequence per forward, float32 CE."""
    import torch
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForMaskedLM.from_pretrained(model_dir).eval()
    loss = torch.nn.CrossEntropyLoss()
    out = []
    with torch.inference_mode():
        for s in sentences:
            t = tok.tokenize(tok.cls_token + " " + s + " " + tok.sep_token)
            k = next(i for i, x in enumerate(t) if x in D.COMPAT_FIND)
            target = torch.tensor(tok.convert_tokens_to_ids(t))
            row = []
            for word in (None, "hans", "hendes"):
                tv = list(t)
                if word:
                    tv[k] = word
                logits = model(torch.tensor([tok.convert_tokens_to_ids(tv)])).logits[0]
                row.append(math.exp(float(loss(logits, target))))
            out.append(row)
    return np.array(out)


def test_compat_tables_batched_equal_one_sentence_per_forward(mlm_dir, tmp_path, monkeypatch):
    """Open point of issue 4: the rounded compat outputs (6 median (IQR) strings, medians, GES) of the batched
    engine equal those of GenDa Lens's one-sentence-per-forward procedure, on 2 x 150 triplets.  With one
    torch thread the per-sentence PPLs are even bit-identical (the batched path is thread-count invariant;
    the unbatched one is not: MKL's threaded small-matrix kernels sum in another order)."""
    import torch

    from genderscope.core.engine import run_tasks

    monkeypatch.setenv("GENDERSCOPE_TORCH_THREADS", "1")
    before = torch.get_num_threads()
    try:
        out = run_tasks(
            ["abc"],
            f"hf-mlm:{mlm_dir}",
            limit=150,
            options={"mode": "genda-lens"},
            out=tmp_path / "r",
            progress=False,
        )
        res = out.runs[0].result
        assert torch.get_num_threads() == 1
        base = _one_sentence_per_forward(mlm_dir, [r["text"] for r in res.records if "ppl" in r][::3])
    finally:
        torch.set_num_threads(before)
    batched = np.array([r["ppl"] for r in res.records if "ppl" in r]).reshape(-1, 3)
    assert batched.shape == (300, 3)
    assert int((batched != base).sum()) == 0  # bit-identical at one thread
    fem = np.array([r["occupations"] == "female" for r in [r for r in res.records if "ppl" in r][::3]])
    rel = {"female": base[:, 2] - base[:, 0], "male": base[:, 1] - base[:, 0]}
    v = res.extra["values"]
    for occ, idx in (("all", np.ones_like(fem)), ("femocc", fem), ("maleocc", ~fem)):
        for pron in ("female", "male"):
            assert v[f"summary_rel_{pron}_{occ}"] == M.compat_summary(rel[pron][idx])[3]
    m_f, m_m = M.compat_summary(rel["female"])[0], M.compat_summary(rel["male"])[0]
    assert (res.metrics["ges"].value, res.extra.get("ges_error")) == M.compat_ges(m_f, m_m)[:2]
    assert res.metrics["median_rel_female"].value == m_f and res.metrics["median_rel_male"].value == m_m


def test_default_pll_run_on_tiny_mlm(mlm_dir, tmp_path):
    from genderscope.core.engine import run_tasks

    out = run_tasks(
        ["abc"], f"hf-mlm:{mlm_dir}", limit=3, options={"n_boot": 50}, out=tmp_path / "r", progress=False
    )
    res = out.runs[0].result
    assert res.extra["scoring"] == "pll" and res.metrics["n_sentences"].value == 6
    recs = res.records
    assert recs[1]["rel"] == pytest.approx(recs[1]["ppl"] - recs[0]["ppl"])
    assert recs[0]["ppl"] == pytest.approx(math.exp(-recs[0]["loglik"] / recs[0]["n_scored"]))
    assert recs[0]["n_scored"] == 7  # 6 words + '.', specials not scored


def test_null_model_runs(tmp_path):
    from genderscope.core.engine import run_tasks

    out = run_tasks(["abc"], "random", out=tmp_path / "r", progress=False, limit=20, options={"n_boot": 20})
    assert out.runs[0].result.metrics["n_sentences"].value == 40


def test_compat_warnings_unk_and_non_special_start(data_registry):
    """§4.1: out-of-vocabulary substitutions are counted and warned about; so are non-special S/E."""
    task = make_task(
        data_registry, {"tokenize", "masked_logprobs"}, limit=2, mode="genda-lens", start_token="<s>"
    )
    results = answer_rounds(task, compat_answer([1.0, 1.5, 2.0], unk=(False, True)))
    tokens = [r for r in results if r.attempt.item_id.startswith("abc/tokens/")]
    assert tokens and all(r.attempt.request.payload["text"].startswith("<s> ") for r in tokens)
    res = task.score(results)
    assert res.metrics["n_unk_substitutions"].value == 4
    assert any("4 literal hans/hendes" in w for w in res.extra["warnings"])
    assert any("'<s>'" in w and "not special" in w for w in res.extra["warnings"])
    task = make_task(data_registry, {"tokenize", "masked_logprobs"}, limit=2, mode="genda-lens")
    assert "warnings" not in task.score(answer_rounds(task, compat_answer([1.0, 1.5, 2.0]))).extra


def test_all_failed_reports_the_backend_error(data_registry):
    task = make_task(data_registry, {"masked_logprobs"}, limit=1)
    atts = task.attempts()
    with pytest.raises(UsageError, match="first error: boom"):
        task.score([AttemptResult(a, error="boom") for a in atts])


def test_null_model_shows_no_bias_within_its_ci(tmp_path):
    """`genderscope run dawinobias abc --model random`: every effect's 95% CI contains 0 (no bias)."""
    from genderscope.core.engine import run_tasks

    out = run_tasks(
        ["dawinobias", "abc"],
        "random",
        out=tmp_path / "r",
        progress=False,
        limit=400,
        options={"n_boot": 300},
    )
    daw, abc = (r.result.metrics for r in out.runs)
    checked = 0
    for metrics, keys in (
        (daw, ["ges"]),
        (
            abc,
            [
                "ges",
                "ges_ratio",
                "ges_femocc",
                "ges_maleocc",
                "ges_ratio_occ_diff",
                "median_rel_female",
                "median_rel_male",
            ],
        ),
    ):
        for k in keys:
            m = metrics[k]
            assert m.ci_low is not None and m.ci_high is not None, k
            assert m.ci_low <= 0 <= m.ci_high, (k, m)
            checked += 1
    assert checked == 8
    assert abc["median_ratio_female"].ci_low <= 1 <= abc["median_ratio_female"].ci_high
