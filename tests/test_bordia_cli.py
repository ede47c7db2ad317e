"""`genderscope bordia ...` end to end: score, train/eval/generate, sweep (resumable), bad input."""

from __future__ import annotations

import csv
import json
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from genderscope.cli import app

runner = CliRunner()


def invoke(args):
    result = runner.invoke(app, args)
    return result


def test_help_does_not_import_torch():
    code = "import sys, genderscope.cli; sys.exit(1 if 'torch' in sys.modules else 0)"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


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
    r = invoke(["bordia", "score", str(corpus), "--pairs", str(pairs), "--stopwords", str(stop), "-k", "10",
                "--authors-format", "--out", str(out)])
    assert r.exit_code == 0, r.output
    res = json.loads((out / "results.json").read_text())
    metrics = res["tasks"]["bordia-score"]["metrics"]
    assert metrics["fixed.mu"]["value"] == pytest.approx(0.349164, abs=1e-6)  # spec V2
    assert metrics["fixed.n_scored"]["value"] == 8
    assert "genderscope_version" in res
    rows = list(csv.DictReader((out / "fixed" / "counts.tsv").open(), delimiter="\t"))
    assert {r["word"]: (r["male"], r["female"]) for r in rows}["doctor"] == ("4", "2")
    assert (out / "infinite" / "bias.tsv").exists()
    authors = json.loads((out / "fixed" / "all_words.json").read_text())
    assert authors["doctor"] == {"f": 4, "m": 2}


def test_score_registry_corpus_reference_mode(tmp_path, data_registry):
    r = invoke(["bordia", "score", "ptb:valid", "--mode", "reference", "--context", "fixed", "--bootstrap", "0",
                "--out", str(tmp_path / "o")])
    assert r.exit_code == 0, r.output
    res = json.loads((tmp_path / "o" / "results.json").read_text())["tasks"]["bordia-score"]
    assert res["contexts"]["fixed"]["counts"]["W"] == 21 and res["contexts"]["fixed"]["counts"]["pairs_file"] == "penn"


def test_bad_input_is_one_line_error(tmp_path):
    import genderscope.cli as cli

    pairs = tmp_path / "p.txt"
    pairs.write_text("he she\nhim\n")
    (tmp_path / "c.txt").write_text("he a she\n")
    for args, message in (
        (["bordia", "score", str(tmp_path / "missing.txt"), "--pairs", "penn"], "no such file"),
        (["bordia", "score", str(tmp_path / "c.txt"), "--pairs", str(pairs), "--stopwords", "none"],
         "p.txt:2: expected 'male female', got 1 fields"),
        (["bordia", "score", str(tmp_path / "c.txt"), "--pairs", "penn", "--max-distance", "x"], "--max-distance"),
        (["bordia", "score", "ptb:train", "--pairs", "penn"], "not in the data registry"),
    ):
        proc = subprocess.run([sys.executable, "-c", "import genderscope.cli as c; c.main()", *args],
                              capture_output=True, text=True)
        assert proc.returncode == 2, proc.stderr
        assert message in proc.stderr and "Traceback" not in proc.stderr
    assert cli  # imported for the entry point


@pytest.fixture()
def tiny_split(tmp_path, data_registry):
    valid = data_registry.path("corpora/ptb/ptb.valid.txt").read_text().split("\n")
    for name, lines in (("train.txt", valid[:150]), ("valid.txt", valid[150:200])):
        (tmp_path / name).write_text("\n".join(lines) + "\n")
    return tmp_path


def test_train_eval_generate_cli(tiny_split):
    run = tiny_split / "run"
    r = invoke(["bordia", "train", "--train", str(tiny_split / "train.txt"), "--valid", str(tiny_split / "valid.txt"),
                "--pairs", "penn", "--lambda", "0.1", "--epochs", "1", "--emsize", "8", "--nhid", "8",
                "--out", str(run)])
    assert r.exit_code == 0, r.output
    assert "test ppl" in r.output and (run / "best.pt").exists()
    r = invoke(["bordia", "eval", str(run)])
    assert r.exit_code == 0 and "valid ppl" in r.output
    r = invoke(["bordia", "generate", str(run), "--samples", "3", "--words", "7"])
    assert r.exit_code == 0, r.output
    lines = (run / "samples" / "samples.jsonl").read_text().splitlines()
    assert len(lines) == 3 and len(json.loads(lines[0])["text"].split()) == 7


def test_sweep_end_to_end_and_resume(tiny_split, monkeypatch):
    out = tiny_split / "sweep"
    args = ["bordia", "sweep", "--train", str(tiny_split / "train.txt"), "--valid", str(tiny_split / "valid.txt"),
            "--pairs", "penn", "--lambdas", "0,1", "--epochs", "1", "--samples", "5", "--words", "50",
            "--bootstrap", "0", "--out", str(out)]
    r = invoke(args)
    assert r.exit_code == 0, r.output
    rows = list(csv.DictReader((out / "results.csv").open()))
    assert [(r["lambda"], r["context"]) for r in rows] == [("train", "fixed"), ("train", "infinite"),
                                                           ("0", "fixed"), ("0", "infinite"),
                                                           ("1", "fixed"), ("1", "infinite")]
    assert all(float(r["test_ppl"]) > 1 for r in rows[2:])
    assert (out / "table.md").read_text().count("|") > 20
    res = json.loads((out / "results.json").read_text())["tasks"]["bordia-sweep"]
    assert "fixed.lambda_1.beta" in res["metrics"]
    sample = out / "train" / "lambda_1" / "samples" / "samples" / "00004.txt"
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
    other = out / "train" / "lambda_1" / "samples" / "samples" / "00000.txt"
    other_stamp = other.stat().st_mtime_ns
    assert invoke(args).exit_code == 0
    assert sample.read_text() == text and other.stat().st_mtime_ns == other_stamp
    # a changed configuration is an error without --force
    r = invoke(args[:-2] + ["--seed", "7", "--out", str(out)])
    assert r.exit_code != 0
