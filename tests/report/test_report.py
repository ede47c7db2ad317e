"""HTML report: structure per task (sections, figures, metric values, manifest), escaping of model
output, the generic fallback, SVG helpers and the CLI command."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from genderscope.common.errors import DataError, UsageError
from genderscope.report import svg
from genderscope.report.html import render_html, write_report
from genderscope.report.renderers import render_task, renderer_module
from genderscope.report.runs import load_run, load_runs
from genderscope.core.textfmt import fmt
from report_runs import fixture_run, gest_run, poison_attempts, winobias_adjectives_run


def _section(html: str, task: str) -> str:
    m = re.search(
        rf'<section id="[^"]*" class="task" data-task="{re.escape(task)}">(.*?)</section>', html, re.DOTALL
    )
    assert m, f"no section for task {task}"
    return m.group(1)


def _figures(section: str) -> list[str]:
    return re.findall(r'<figure class="figure".*?</figure>', section, re.DOTALL)


@pytest.fixture(scope="module")
def gest_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return gest_run(tmp_path_factory.mktemp("gest") / "run")


def test_gest_report_structure(gest_dir: Path, tmp_path: Path) -> None:
    out = write_report([gest_dir], tmp_path / "r.html")
    html = out.read_text()
    sec = _section(html, "gest")
    figs = _figures(sec)
    assert len(figs) == 3
    assert 'data-chart="stacked"' in figs[0] and "16. men are strong" in figs[0]
    assert all("<svg" in f and "</svg>" in f for f in figs)
    results = json.loads((gest_dir / "results.json").read_text())["tasks"]["gest"]
    sr = results["metrics"]["stereotype_rate"]
    assert f"stereotype_rate = {fmt(sr['value'])}" in sec  # the reading names the headline value
    assert re.search(r">stereotype_rate</a></td><td class=\"num\">" + re.escape(fmt(sr["value"])), sec)
    assert f"[{fmt(sr['ci_low'])}, {fmt(sr['ci_high'])}]" in sec
    # manifest: model, data checksum, options, versions
    manifest = json.loads((gest_dir / "run.json").read_text())
    assert manifest["tasks"]["gest"]["datasets"]["gest/gest.csv"] in html
    assert "<code>random:0</code>" in html and "bootstrap_cycles" in html and "numpy" in html
    # attempt sample: 20 rows with the parsed label column
    att = re.search(r'<table class="attempts">(.*?)</table>', sec, re.DOTALL).group(1)
    assert att.count("<tr>") == 21 and "<th>parsed_option</th>" in att
    assert "Comparison across runs" not in html  # one run: no comparison


def test_report_is_self_contained(gest_dir: Path, tmp_path: Path) -> None:
    html = write_report([gest_dir], tmp_path / "r.html").read_text()
    assert "<script" not in html.lower()
    assert not re.search(r"(src|href)=\"(https?:)?//", html)
    assert "@import" not in html and "url(" not in html
    assert "Content-Security-Policy" in html


def test_malicious_answers_are_escaped(gest_dir: Path, tmp_path: Path) -> None:
    import shutil

    run = tmp_path / "poisoned"
    shutil.copytree(gest_dir, run)
    poison_attempts(run)
    html = render_html(load_runs([run]))
    assert "<script" not in html.lower() and "<img" not in html.lower()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html


def test_winobias_adjectives_report(tmp_path: Path) -> None:
    run = winobias_adjectives_run(tmp_path / "wba")
    html = write_report([run], tmp_path / "r.html").read_text()
    sec = _section(html, "winobias-adjectives")
    figs = _figures(sec)
    assert len(figs) == 3
    assert 'class="ref-line"' in figs[0] and ">baseline<" in figs[0]  # the baseline line
    assert "arrogant / responsive" in figs[0] and "— / blond" in figs[0]
    assert "correct" in figs[1] and "arrogant / responsive · anti" in figs[1]
    # the study's heatmap: 3 conditions x (pro, anti) x (correct, incorrect, other) cells
    assert 'data-chart="heatmap"' in figs[2] and figs[2].count("</title></rect>") == 18
    assert "pro-stereotypical" in figs[2] and "anti-stereotypical" in figs[2]
    summary = json.loads((run / "results.json").read_text())["tasks"]["winobias-adjectives"]["summary"]
    assert len(summary) == 3
    for row in summary:
        assert f"<td>{row['condition']}</td>" in sec
        assert f"<td>{row['bias']:.1f}</td>" in sec
    assert "Baseline bias" in sec


def test_dawinobias_fixture_report(tmp_path: Path) -> None:
    run = fixture_run("dawinobias", tmp_path / "d")
    html = write_report([run], tmp_path / "r.html").read_text()
    sec = _section(html, "dawinobias")
    figs = _figures(sec)
    assert len(figs) == 2
    assert "F1 of the female and male pronoun class" in figs[0]
    assert figs[0].count('class="pt"') == 4  # 2 conditions x 2 pronouns
    assert "anti-stereotypical" in figs[0] and "pro-stereotypical" in figs[0]
    assert "GES = 0.415 [0.301, 0.533]" in sec and "excludes 0" in sec
    assert "Nuance table" in sec
    assert "aaaa1111bbbb2222" in html and "hf-mlm:tiny-fixture@0123abcd" in html  # manifest
    assert "Mekanikeren" in sec  # attempt sample


def test_abc_fixture_report(tmp_path: Path) -> None:
    run = fixture_run("abc", tmp_path / "a")
    html = write_report([run], tmp_path / "r.html").read_text()
    sec = _section(html, "abc")
    figs = _figures(sec)
    assert len(figs) == 2
    assert figs[0].count('class="pt"') == 6 and "(95% CI)" in figs[0]
    assert "male occupations" in figs[0] and "female occupations" in figs[0]
    assert figs[1].count('class="pt"') == 6  # ges and ges_ratio per occupation group
    assert "GES = 0.182" in sec and "Effect table" in sec
    assert "underrepresentation; bias source: selection bias" in sec  # GenDa Lens's harms, main effect
    assert "stereotyping; bias source: semantic bias" in sec  # and nuance
    assert "No run.json in this folder." in html and "This run has no attempts.jsonl." in sec


def test_abc_nuance_without_ci_uses_iqr(tmp_path: Path) -> None:
    run = fixture_run("abc", tmp_path / "a")
    data = json.loads((run / "results.json").read_text())
    for row in data["tasks"]["abc"]["nuance_table"]:
        row.pop("median_rel_ci95")
    (run / "results.json").write_text(json.dumps(data))
    sec = _section(render_html(load_runs([run])), "abc")
    assert "(IQR)" in _figures(sec)[0]


def test_bordia_sweep_fixture_report(tmp_path: Path) -> None:
    run = fixture_run("bordia-sweep", tmp_path / "b")
    html = write_report([run], tmp_path / "r.html").read_text()
    sec = _section(html, "bordia-sweep")
    figs = _figures(sec)
    assert len(figs) == 3  # β by λ, and one scatter per λ
    assert 'data-chart="scatter"' in figs[1] and 'class="fit-line"' in figs[1]
    assert "β = 0.420, intercept = 0.050" in figs[1]
    assert figs[1].count('class="pt"') == 5
    assert "&lt;b&gt;tag&lt;/b&gt;" in figs[1] and "<b>tag" not in html  # corpus words are escaped
    assert "λ table" in sec and "<td>train</td>" in sec
    assert "Training corpus μ = 0.8" in sec


def test_bordia_score_report(tmp_path: Path) -> None:
    from genderscope.cli.app import app

    corpus = tmp_path / "corpus.txt"
    corpus.write_text(
        "he said the engineer fixed it . she said the nurse helped her . " * 30
        + "the man met the doctor . the woman met the teacher .\n" * 20
    )
    res = CliRunner().invoke(
        app, ["bordia", "score", str(corpus), "--pairs", "penn", "--out", str(tmp_path / "score")]
    )
    assert res.exit_code == 0, res.output
    html = write_report([tmp_path / "score"], tmp_path / "r.html").read_text()
    sec = _section(html, "bordia-score")
    assert "μ = mean |bias|" in sec
    assert len(_figures(sec)) >= 2  # μ/σ plot and the most gendered words


def test_corpus_only_run_log_report(tmp_path: Path) -> None:
    """A run log with no model (`bordia score` writes one) renders: manifest, metrics table, μ/σ figure."""
    from genderscope.core.metrics import MetricEntry
    from genderscope.core.results_file import ResultsFile, TaskResults
    from genderscope.core.runlog import TaskManifest, new_manifest
    from genderscope.core.runlog import write_run_log

    manifest = new_manifest(command="genderscope bordia score c.txt", model=None, seed=0)
    manifest.tasks["bordia-score"] = TaskManifest(options={"window": 10}, datasets={"c.txt": "f" * 64})
    results = ResultsFile("corpus:c.txt")
    results.tasks["bordia-score"] = TaskResults(
        {"fixed.mu": MetricEntry(0.5, 0.4, 0.6), "fixed.n_scored": MetricEntry(12, no_ci="exact count")}
    )
    write_run_log(tmp_path / "s", manifest, results)
    html = write_report([tmp_path / "s"], tmp_path / "r.html").read_text()
    sec = _section(html, "bordia-score")
    assert "fixed context: μ = 0.5 [0.4, 0.6] over 12 scored words" in sec and len(_figures(sec)) == 1
    assert ">exact count</td>" in sec and "<code>corpus:c.txt</code>" in html and "f" * 64 in html


def test_generic_fallback_for_unknown_task(tmp_path: Path) -> None:
    run = tmp_path / "future"
    run.mkdir()
    (run / "results.json").write_text(
        json.dumps(
            {
                "model": "openai:x",
                "tasks": {
                    "future-task": {
                        "metrics": {
                            "score": {"value": 0.25, "ci_low": 0.1, "ci_high": 0.4},
                            "n": {"value": 10},
                        },
                        "rows": [{"group": "<i>a</i>", "value": 1}, {"group": "b", "value": [1, 2]}],
                        "nested": {"table": [{"x": 1}]},
                        "note": "hello",
                    }
                },
            }
        )
    )
    html = render_html(load_runs([run]))
    sec = _section(html, "future-task")
    assert "score = 0.25 [0.1, 0.4]" in sec
    assert len(_figures(sec)) == 1  # headline point plot
    assert "<summary>rows (2 rows)</summary>" in sec and "<summary>nested.table (1 rows)</summary>" in sec
    assert "&lt;i&gt;a&lt;/i&gt;" in sec and "<td>[1, 2]</td>" in sec
    assert "<th>note</th><td>hello</td>" in sec


def test_renderers_live_next_to_their_tasks() -> None:
    from genderscope import catalogue as registry

    for name in ("gest", "winobias-adjectives", "dawinobias", "abc"):
        module = registry.TASKS[name].partition(":")[0].rpartition(".")[0] + ".report"
        assert renderer_module(name) == module
    assert renderer_module("gest-likelihood") is None  # no report module: the generic section
    assert renderer_module("future-task") is None
    assert (
        renderer_module("bordia-score")
        == renderer_module("bordia-sweep")
        == "genderscope.commands.bordia.report"
    )


def test_failing_renderer_falls_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import genderscope.tasks.dawinobias.report as dawinobias_report

    run = fixture_run("dawinobias", tmp_path / "d")

    def broken(name, res, run):
        raise KeyError("nuance_table")

    monkeypatch.setattr(dawinobias_report, "render", broken)
    data = load_run(run)
    out = render_task("dawinobias", data.tasks["dawinobias"], data)
    assert "renderer failed" in out.reading and "ges = 0.415" in out.reading
    assert out.figures  # generic headline plot still there


def test_comparison_section(gest_dir: Path, tmp_path: Path) -> None:
    other = gest_run(tmp_path / "g2", seed=5)
    html = write_report([gest_dir, other], tmp_path / "r.html").read_text()
    comp = re.search(r'<section id="tests".*?</section>\n</section>', html, re.DOTALL).group(0)
    assert '<th scope="row">random (seed 0)</th>' in comp and '<th scope="row">random (seed 5)</th>' in comp
    assert "stereotype_rate" in comp and "/tmp" not in comp  # short labels, never paths
    assert len(_figures(comp)) == 1 and comp.count('class="pt"') == 2  # one forest plot, a dot per run
    assert html.count('class="task" data-task="gest"') == 2


def test_same_model_twice_gets_distinct_labels(gest_dir: Path, tmp_path: Path) -> None:
    runs = load_runs([gest_dir, gest_dir])
    assert runs[0].label != runs[1].label


def test_load_errors(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such run folder"):
        load_run(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(UsageError, match="no results.json"):
        load_run(tmp_path / "empty")
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "results.json").write_text('{"tasks": {\n  "x": }')
    with pytest.raises(DataError, match=r"results.json:2"):
        load_run(bad)
    (bad / "results.json").write_text("[1, 2]")
    with pytest.raises(DataError, match="expected"):
        load_run(bad)


def test_cli_report(gest_dir: Path, tmp_path: Path) -> None:
    from genderscope.cli.app import app

    res = CliRunner().invoke(app, ["report", str(gest_dir), "-o", str(tmp_path / "x.html")])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "x.html").read_text().startswith("<!DOCTYPE html>")
    res = CliRunner().invoke(app, ["report", str(tmp_path / "missing"), "-o", str(tmp_path / "y.html")])
    assert res.exit_code != 0 and not (tmp_path / "y.html").exists()


# ------------------------------------------------------------------------------------ SVG helpers
@settings(max_examples=200, deadline=None)
@given(st.floats(-1e6, 1e6), st.floats(1e-6, 1e6))
def test_nice_ticks_cover_range(lo: float, width: float) -> None:
    hi = lo + width
    ticks = svg.nice_ticks(lo, hi)
    assert ticks[0] <= lo + 1e-9 * max(1, abs(lo)) and ticks[-1] >= hi - 1e-9 * max(1, abs(hi))
    assert ticks == sorted(ticks) and 2 <= len(ticks) <= 13


def test_point_plot_escapes_and_handles_missing() -> None:
    out = svg.point_plot([svg.Point("<b>x</b>", None), svg.Point("y", 0.5, 0.2, 0.9, "s&t")], title="a<b")
    assert "<b>" not in out and "&lt;b&gt;x&lt;/b&gt;" in out and "a&lt;b" in out
    assert "undefined" in out and out.count('class="pt"') == 1


def test_scatter_thins_points() -> None:
    xs = [i / 100 for i in range(5000)]
    out = svg.scatter_line(
        xs, xs, title="t", xlabel="x", ylabel="y", slope=1.0, intercept=0.0, max_points=300
    )
    assert out.count('class="pt"') == 300 and 'class="fit-line"' in out


@pytest.mark.parametrize(
    "value,text",
    [
        (None, "–"),
        (float("nan"), "–"),
        (True, "yes"),
        (3, "3"),
        (0.123456, "0.123"),
        (28.61234, "28.6"),
        (1.0, "1"),
        (538.577, "539"),
        (1416.51, "1417"),
        (123456.0, "123456"),
        (1234567.0, "1.23e+06"),
        (0.0009365, "0.000937"),
        (0.00001234, "1.23e-05"),
        (-0.006439053597469714, "-0.00644"),
        ([1, "a"], '[1, "a"]'),
    ],
)
def test_fmt(value: object, text: str) -> None:
    assert fmt(value) == text
