"""`genderscope bordia ...` end to end: score, train/eval/generate, sweep (resumable), bad input."""

from __future__ import annotations

from repo_paths import ROOT
import csv
import json
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from genderscope.cli.app import app

runner = CliRunner()


def invoke(args):
    result = runner.invoke(app, args)
    return result


def test_help_does_not_import_torch():
    code = "import sys, genderscope.cli.app; sys.exit(1 if 'torch' in sys.modules else 0)"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_spec_python_api_names():
    """Spec §13: the Python API names are importable (torch ones lazily): the library's from
    genderscope.bordia, the commands' (run_sweep, score_corpus) from genderscope.commands.bordia."""
    code = (
        "import sys, genderscope.bordia as b, genderscope.commands.bordia as c; "
        "assert callable(c.run_sweep) and callable(c.score_corpus); assert 'torch' not in sys.modules; "
        "names = 'load_gender_pairs count_cooccurrences bias_scores amplification'.split(); "
        "assert all(callable(getattr(b, n)) for n in names); assert 'torch' not in sys.modules"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.usefixtures("hf")
def test_spec_python_api_torch_names():
    """Spec §13: the torch-dependent names load on first use."""
    code = (
        "import genderscope.bordia as b; "
        "names = 'BiasRegularizer AWDLSTM train_lm generate_samples'.split(); "
        "assert all(callable(getattr(b, n)) for n in names)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_score_end_to_end(tmp_path, data_registry):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.txt").write_text("the doctor said he met her and the nurse saw his wife at the clinic\n")
    (corpus / "b.txt").write_text("she told him the nurse was kind and the doctor was late\n")
    (corpus / "README").write_text("he he he doctor she\n")
    pairs = tmp_path / "pairs.txt"
    pairs.write_text("he she\n\nhim her\nhis her\nwife husband\n")
    stop = tmp_path / "stop.txt"
    stop.write_text("the\nand\nat\nwas\n")
    out = tmp_path / "out"
    r = invoke(
        [
            "bordia",
            "score",
            str(corpus),
            "--pairs",
            str(pairs),
            "--stopwords",
            str(stop),
            "-k",
            "10",
            "--authors-format",
            "--out",
            str(out),
        ]
    )
    assert r.exit_code == 0, r.output
    res = json.loads((out / "results.json").read_text())
    metrics = res["tasks"]["bordia-score"]["metrics"]
    assert metrics["fixed.mu"]["value"] == pytest.approx(0.349164, abs=1e-6)  # spec V2
    assert metrics["fixed.n_scored"]["value"] == 8
    assert (out / "run.json").exists()
    assert "genderscope_version" in res
    rows = list(csv.DictReader((out / "fixed" / "counts.tsv").open(), delimiter="\t"))
    assert {r["word"]: (r["male"], r["female"]) for r in rows}["doctor"] == ("4", "2")
    assert (out / "infinite" / "bias.tsv").exists()
    authors = json.loads((out / "fixed" / "all_words.json").read_text())
    assert authors["doctor"] == {"f": 4, "m": 2}


def test_score_registry_corpus_reference_mode(tmp_path, data_registry):
    r = invoke(
        [
            "bordia",
            "score",
            "ptb:valid",
            "--mode",
            "reference",
            "--context",
            "fixed",
            "--bootstrap",
            "0",
            "--out",
            str(tmp_path / "o"),
        ]
    )
    assert r.exit_code == 0, r.output
    res = json.loads((tmp_path / "o" / "results.json").read_text())["tasks"]["bordia-score"]
    assert res["metrics"]["fixed.mu"]["no_ci"] == "bootstrap off (bootstrap = 0)"
    assert (
        res["contexts"]["fixed"]["counts"]["W"] == 21
        and res["contexts"]["fixed"]["counts"]["pairs_file"] == "penn"
    )


def test_bad_input_is_one_line_error(tmp_path):
    import genderscope.cli.app as cli

    pairs = tmp_path / "p.txt"
    pairs.write_text("he she\nhim\n")
    (tmp_path / "c.txt").write_text("he a she\n")
    for args, message in (
        (["bordia", "score", str(tmp_path / "missing.txt"), "--pairs", "penn"], "no such file"),
        (
            ["bordia", "score", str(tmp_path / "c.txt"), "--pairs", str(pairs), "--stopwords", "none"],
            "p.txt:2: expected 'male female', got 1 fields",
        ),
        (
            ["bordia", "score", str(tmp_path / "c.txt"), "--pairs", "penn", "--max-distance", "x"],
            "--max-distance",
        ),
        (["bordia", "score", "ptb:train", "--pairs", "penn"], "git blob 04d78dc94771"),
    ):
        proc = subprocess.run(
            [sys.executable, "-c", "import genderscope.cli.app as c; c.main()", *args],
            capture_output=True,
            text=True,
        )
        assert proc.returncode == 2, proc.stderr
        assert message in proc.stderr and "Traceback" not in proc.stderr
    assert cli  # imported for the entry point


@pytest.fixture()
def tiny_split(tmp_path, data_registry):
    valid = data_registry.path("corpora/ptb/ptb.valid.txt").read_text().split("\n")
    for name, lines in (("train.txt", valid[:150]), ("valid.txt", valid[150:200])):
        (tmp_path / name).write_text("\n".join(lines) + "\n")
    return tmp_path


@pytest.mark.usefixtures("hf")
def test_train_eval_generate_cli(tiny_split):
    run = tiny_split / "run"
    r = invoke(
        [
            "bordia",
            "train",
            "--train",
            str(tiny_split / "train.txt"),
            "--valid",
            str(tiny_split / "valid.txt"),
            "--pairs",
            "penn",
            "--lambda",
            "0.1",
            "--epochs",
            "1",
            "--emsize",
            "8",
            "--nhid",
            "8",
            "--out",
            str(run),
        ]
    )
    assert r.exit_code == 0, r.output
    assert "test ppl" in r.output and (run / "best.pt").exists()
    r = invoke(["bordia", "eval", str(run)])
    assert r.exit_code == 0 and "valid ppl" in r.output
    r = invoke(["bordia", "generate", str(run), "--samples", "3", "--words", "7"])
    assert r.exit_code == 0, r.output
    lines = (run / "samples" / "samples.jsonl").read_text().splitlines()
    assert len(lines) == 3 and len(json.loads(lines[0])["text"].split()) == 7
    assert sorted(p.name for p in (run / "samples").glob("*.txt")) == ["00000.txt", "00001.txt", "00002.txt"]
    from genderscope.bordia.lm.generate import read_samples

    assert len(read_samples(run / "samples", 2)) == 2 and len(read_samples(run / "samples")) == 3


@pytest.mark.usefixtures("hf")
@pytest.mark.filterwarnings("ignore:no word co-occurs:UserWarning")  # tiny LM samples: NaN expected
@pytest.mark.filterwarnings("ignore:β is undefined:UserWarning")
def test_sweep_end_to_end_and_resume(tiny_split, monkeypatch):
    out = tiny_split / "sweep"
    args = [
        "bordia",
        "sweep",
        "--train",
        str(tiny_split / "train.txt"),
        "--valid",
        str(tiny_split / "valid.txt"),
        "--pairs",
        "penn",
        "--lambdas",
        "0,1",
        "--epochs",
        "1",
        "--samples",
        "5",
        "--words",
        "50",
        "--bootstrap",
        "0",
        "--out",
        str(out),
    ]
    r = invoke(args + ["--published"])
    assert r.exit_code == 0, r.output
    assert "no published table for 'train'" in r.output
    rows = list(csv.DictReader((out / "results.csv").open()))
    assert [(r["lambda"], r["context"]) for r in rows] == [
        ("train", "fixed"),
        ("train", "infinite"),
        ("null", "fixed"),
        ("null", "infinite"),
        ("0", "fixed"),
        ("0", "infinite"),
        ("1", "fixed"),
        ("1", "infinite"),
    ]
    assert all(float(r["test_ppl"]) > 1 for r in rows[4:])
    assert (out / "table.md").read_text().count("|") > 20
    full = json.loads((out / "results.json").read_text())
    assert full["model"] == "bordia-awd-lstm:train:tiny"
    res = full["tasks"]["bordia-sweep"]
    assert "fixed.lambda_1.beta" in res["metrics"] and "fixed.null.beta" in res["metrics"]
    assert all(("ci_low" in m) != ("no_ci" in m) for m in res["metrics"].values())
    manifest = json.loads((out / "run.json").read_text())
    assert manifest["model"] is None and manifest["tasks"]["bordia-sweep"]["options"]["lambdas"] == [0.0, 1.0]
    assert manifest["tasks"]["bordia-sweep"]["measurement"]["resolved"]["lambdas"] == [0.0, 1.0]
    assert len(manifest["tasks"]["bordia-sweep"]["datasets"]) == 3  # train, valid, pairs
    # spec §8 / §9.1 layout: lambda_<λ>/samples/{j:05d}.txt next to manifest.json
    sample = out / "train" / "lambda_1" / "samples" / "00004.txt"
    assert (sample.parent / "manifest.json").exists()
    for folder in ("train_bias", "null_bias", "lambda_0/bias", "lambda_1/bias"):  # <folder>/{fixed,infinite}/
        for ctx in ("fixed", "infinite"):
            assert (out / "train" / folder / ctx / "bias.tsv").exists(), (folder, ctx)
            assert (out / "train" / folder / ctx / "counts.tsv").exists(), (folder, ctx)
    # generation runs through the task machinery: each λ has a run log like every task (issue 14)
    gen = out / "train" / "lambda_1" / "generation"
    gen_run = json.loads((gen / "run.json").read_text())
    assert "cooccurrence-amplification" in gen_run["tasks"] and gen_run["label"] == "AWD-LSTM train λ = 1"
    assert len((gen / "attempts.jsonl").read_text().splitlines()) == 5
    gen_res = json.loads((gen / "results.json").read_text())["tasks"]["cooccurrence-amplification"]
    assert gen_res["metrics"]["n_samples"]["value"] == 5
    stamp = sample.stat().st_mtime_ns
    # a second run must not train or generate again
    import genderscope.bordia.lm.train as train_mod

    def boom(*a, **k):
        raise AssertionError("finished λ run was retrained")

    monkeypatch.setattr(train_mod.Trainer, "run", boom)
    r = invoke(args)
    assert r.exit_code == 0, r.output
    assert sample.stat().st_mtime_ns == stamp
    assert list(csv.DictReader((out / "results.csv").open())) == rows
    # an interrupted generation resumes: delete one sample, it alone is regenerated identically
    text = sample.read_text()
    sample.unlink()
    other = out / "train" / "lambda_1" / "samples" / "00000.txt"
    other_stamp = other.stat().st_mtime_ns
    assert invoke(args).exit_code == 0
    assert sample.read_text() == text and other.stat().st_mtime_ns == other_stamp
    # a changed configuration is an error without --force (training, and generation settings)
    r = invoke(args[:-2] + ["--seed", "7", "--out", str(out)])
    assert r.exit_code != 0
    longer = [a if a != "50" else "60" for a in args]  # --words 60
    r = invoke(longer)
    assert r.exit_code != 0 and "other settings" in str(r.exception or r.output)
    assert sample.read_text() == text
    r = invoke(longer + ["--force"])
    assert r.exit_code == 0, r.output
    assert len(sample.read_text().split()) == 60


def test_results_json_is_readable_by_report_compare_export(tmp_path, data_registry):
    """results.json follows genderscope's shape, so `report`, `compare` and `export` read a bordia folder."""
    from genderscope.report.runs import load_run

    outs = []
    for corpus in ("ptb:valid", "wikitext-2:test"):  # registry names; --pairs defaults to penn / wiki
        o = tmp_path / corpus.replace(":", "-")
        r = invoke(["bordia", "score", corpus, "--bootstrap", "50", "--out", str(o)])
        assert r.exit_code == 0, r.output
        outs.append(o)
    res = json.loads((outs[1] / "results.json").read_text())
    assert set(res) >= {"genderscope_version", "model", "tasks"} and res["model"] == "corpus:wikitext-2:test"
    assert res["tasks"]["bordia-score"]["contexts"]["fixed"]["counts"]["pairs_file"] == "wiki"
    assert res["schema_version"] >= 1
    for name, m in res["tasks"]["bordia-score"]["metrics"].items():
        assert "value" in m and set(m) <= {"value", "ci_low", "ci_high", "no_ci"}, name
        assert ("ci_low" in m) != ("no_ci" in m), name  # an interval, or why there is none
        if name.endswith((".mu", ".sigma")):
            assert m["ci_low"] <= m["value"] <= m["ci_high"], name
    manifest = json.loads((outs[1] / "run.json").read_text())
    assert manifest["model"] is None and manifest["schema_version"] >= 1
    entry = manifest["tasks"]["bordia-score"]
    assert entry["options"]["corpora"] == ["wikitext-2:test"] and entry["options"]["bootstrap"] == 50
    assert entry["measurement"]["resolved"]["pairs"]["pairs_file"] == "wiki"
    assert len(entry["datasets"]) == 2 and all(len(v) == 64 for v in entry["datasets"].values())
    run = load_run(outs[0])
    # the report learns the evidence from the command's declaration (registry.COMMANDS), not by key
    from genderscope.report.renderers import renderer_module
    from genderscope.report.summary import evidence

    block = run.results.tasks["bordia-score"]
    ev = evidence("bordia-score", block)
    assert (ev.n_items, ev.unit) == (block.metrics["fixed.n_scored"].value, "scored words")
    assert ev.n_items > 100
    assert renderer_module("bordia-sweep") == "genderscope.commands.bordia.report"
    assert run.model == "corpus:ptb:valid" and "bordia-score" in run.tasks
    r = invoke(["compare", str(outs[0]), str(outs[1])])
    assert r.exit_code == 0, r.output
    # the report's run labels (engineer D's layout) name a corpus "ptb valid (corpus)"
    assert "fixed.mu" in r.output and ("corpus:ptb:valid" in r.output or "ptb valid (corpus)" in r.output)
    r = invoke(["report", str(outs[0]), str(outs[1]), "-o", str(tmp_path / "r.html")])
    assert r.exit_code == 0, r.output
    assert "bordia-score" in (tmp_path / "r.html").read_text()
    r = invoke(["export", str(outs[0]), "--format", "csv", "-o", str(tmp_path / "exp")])
    assert r.exit_code == 0, r.output
    assert "fixed.mu" in (tmp_path / "exp" / "metrics.csv").read_text()


def test_authors_format_key_layout_matches_spec(tmp_path):
    """Spec §3.8: {word: {"f": c_M, "m": c_F}} (the authors' swapped names) over every type of every file with
    at least W tokens; files are a directory's files in sorted order, README skipped."""
    import _bordia_naive as naive

    corpus = tmp_path / "c"
    corpus.mkdir()
    texts = {
        "a.txt": "he saw the doctor and she met him at the old clinic today",  # 13 tokens
        "b.txt": "she told her friend about it",  # 6 tokens < W: no keys
        "c.txt": "the nurse and the doctor spoke to him and to her about his plans",
    }  # 14 tokens
    for name, text in texts.items():
        (corpus / name).write_text(text + "\n")
    (corpus / "README.md").write_text("he she he she\n")
    pairs = tmp_path / "pairs.txt"
    pairs.write_text("he she\nhim her\nhis her\n")
    out = tmp_path / "out"
    r = invoke(
        [
            "bordia",
            "score",
            str(corpus),
            "--pairs",
            str(pairs),
            "--mode",
            "reference",
            "-W",
            "7",
            "--context",
            "fixed",
            "--stopwords",
            "none",
            "--bootstrap",
            "0",
            "--authors-format",
            "--out",
            str(out),
        ]
    )
    assert r.exit_code == 0, r.output
    got = json.loads((out / "fixed" / "all_words.json").read_text())
    files = [texts[n].split() for n in sorted(texts)]
    expected_keys = {w for toks in files if len(toks) >= 7 for w in toks}
    assert set(got) == expected_keys and "friend" not in got
    direct = naive.reference_fixed(files, {"he", "him", "his"}, {"she", "her"}, 7)
    assert got == {w: {"f": direct[w][0], "m": direct[w][1]} for w in expected_keys}
    assert all(set(v) == {"f", "m"} for v in got.values())
    from genderscope.bordia.cooccurrence import read_authors_json
    from genderscope.common.errors import DataError

    rows = list(csv.DictReader((out / "fixed" / "counts.tsv").open(), delimiter="\t"))
    ours = {r["word"]: (int(r["male"]), int(r["female"])) for r in rows}
    assert read_authors_json(out / "fixed" / "all_words.json") == {w: ours[w] for w in expected_keys}
    (tmp_path / "bad.json").write_text('{"he": {"male": 1}}')
    with pytest.raises(DataError, match="bad.json: entry 'he'"):
        read_authors_json(tmp_path / "bad.json")


def test_published_table_matches_spec():
    """The published rows (spec §9.3, paper Tables 1–3) are transcribed exactly."""

    from genderscope.bordia.tables import PUBLISHED, published_rows

    spec = ROOT.parent / "shared" / "specs" / "bordia_bowman.md"
    if not spec.exists():
        pytest.skip("spec not present")
    section = spec.read_text().split("**Original (paper Tables 1–3).**")[1].split("**Reproduction")[0]
    names = {"Penn Treebank:": "ptb", "WikiText-2:": "wikitext-2", "CNN/Daily Mail:": "cnn_dailymail"}
    current, seen = None, 0
    for line in section.splitlines():
        if line.strip() in names:
            current = names[line.strip()]
        elif line.startswith("| ") and not line.startswith("| λ"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            key = cells[0] if cells[0] == "train" else f"{float(cells[0]):g}"
            vals = tuple(None if c == "–" else float(c.replace("−", "-")) for c in cells[1:])
            assert PUBLISHED[current][key] == vals, (current, key)
            seen += 1
    assert seen == sum(len(v) for v in PUBLISHED.values()) == 22
    assert published_rows("ptb")[0] == ["train", "0.83", "1.00", "–", "3.81", "4.65", "–", "–"]


def test_library_functions_match_the_cli(tmp_path, data_registry):
    """score_corpus(CorpusScoreOptions) is what `bordia score` runs; the options are declared once."""
    import dataclasses

    from genderscope.commands.bordia.options import CorpusScoreOptions, SweepOptions
    from genderscope.commands.bordia.score import score_corpus

    r = invoke(
        ["bordia", "score", "ptb:valid", "--context", "fixed", "--bootstrap", "20", "-o", str(tmp_path / "c")]
    )
    assert r.exit_code == 0, r.output
    scores = score_corpus(
        CorpusScoreOptions(corpora=["ptb:valid"], context="fixed", bootstrap=20, out=tmp_path / "l")
    )
    cli = json.loads((tmp_path / "c" / "results.json").read_text())["tasks"]["bordia-score"]["metrics"]
    lib = json.loads((tmp_path / "l" / "results.json").read_text())["tasks"]["bordia-score"]["metrics"]
    assert cli == lib and lib["fixed.mu"]["value"] == scores["fixed"].bias.mu
    for cls in (CorpusScoreOptions, SweepOptions):  # every option has its help text
        assert all(f.metadata.get("help") for f in dataclasses.fields(cls)), cls


def test_option_errors_are_usage_errors(tmp_path):
    from genderscope.common.errors import UsageError

    for args, message in (
        (
            ["bordia", "sweep", "--dataset", "ptb", "--lambdas", "0,x"],
            "option --lambdas: cannot read 'x' as float",
        ),
        (
            ["bordia", "sweep", "--dataset", "ptb", "--outliers", "maybe"],
            "option --outliers: 'maybe' is not one of none, residual",
        ),
        (["bordia", "score", "ptb:valid", "--context", "half"], "option --context: 'half' is not one of"),
        (["bordia", "score", "ptb:valid", "--mode", "reference", "--boundary", "line"], "needs --mode paper"),
        (
            ["bordia", "score", "ptb:valid", "--window", "3"],
            "bordia score has no option --window (its options:",
        ),
        (["bordia", "score", "--pairs", "penn"], "bordia score needs CORPORA"),
        (["bordia", "train", "--lambda", "0.1", "--pairs"], "option --pairs needs a value"),
        (["bordia", "eval", "a", "b"], "bordia eval: unexpected argument 'b'"),
    ):
        r = invoke(args + ["--out", str(tmp_path / "o")])
        assert isinstance(r.exception, UsageError) and message in str(r.exception), (args, r.exception)


def test_bordia_demo_score_step_uses_the_library(tmp_path, data_registry):
    from rich.console import Console

    from genderscope.commands.bordia.demo import run_bordia_score_demo

    out = run_bordia_score_demo(tmp_path / "s", Console(record=True))
    assert (out / "run.json").exists() and (out / "fixed" / "bias.tsv").exists()
    res = json.loads((out / "results.json").read_text())
    assert res["model"] == "corpus:wikitext-2:valid"


def test_bordia_flags_route_like_run_options():
    """Every `bordia` option is an opt() field reached as --name, its alias (-k, -W, -o) or --no-name."""
    from genderscope.commands.bordia.options import CorpusScoreOptions, SweepOptions, TrainOptions
    from genderscope.common.errors import UsageError
    from genderscope.core.options import options_from_command_line

    o = options_from_command_line(
        CorpusScoreOptions,
        ["--authors-format", "c.txt", "-k", "3", "-W", "5", "--drop-tokens", "", "-o", "x", "d/"],
        "bordia score",
    )
    assert (o.corpora, o.k, o.W, o.drop_tokens, o.authors_format) == (["c.txt", "d/"], 3, 5, "", True)
    assert str(o.out) == "x" and o.count_config().drop_tokens == frozenset()
    s = options_from_command_line(SweepOptions, ["--lambdas", "0,0.1", "--no-null-baseline"], "bordia sweep")
    assert s.lambdas == (0.0, 0.1) and s.null_baseline is False
    t = options_from_command_line(TrainOptions, ["--lambda", "0.1", "--untied", "--out", "r"], "bordia train")
    assert t.lam == 0.1 and t.overrides() == {"tie_weights": False}
    # "-1" after an option is its value (read, then refused by the option's bound), not a flag
    with pytest.raises(UsageError, match="--smoothing -1.0: give a number ≥ 0"):
        options_from_command_line(CorpusScoreOptions, ["a", "--smoothing", "-1"], "s")


def test_run_routes_the_same_names_to_a_task():
    """`run`'s --name value pairs reach a task's option set by the same names (--no-name for a bool)."""
    from genderscope.core import lookup
    from genderscope.core.runspec import split_options
    from genderscope.core.options import build_options

    task, backend = lookup.task_class("cooccurrence-amplification"), lookup.backend_class("random")
    per_task, rest = split_options([task], backend, {"k": "3", "no-drop-non-alpha": "true", "W": "7"})
    options = build_options(task.Options, per_task[0], "task")
    assert (options.k, options.W, options.drop_non_alpha, rest) == (3, 7, False, {})
