"""crows-pairs: the authors' metric (mode nangia) on hand-made scores and against metric.py's own outputs
(tests/fixtures/crows_pairs_metric_py.json), the shared-token rounds, unaligned pairs, modes, random model."""

from __future__ import annotations

from repo_paths import FIXTURES
import csv
import json
from pathlib import Path

import numpy as np
import pytest
from report_runs import cli_run

from genderscope.core.primitives import MASKED_LOGPROBS, TOKENIZE, LOGLIKELIHOOD
from genderscope.core.task import RunContext
from genderscope.tasks.crows_pairs.task import CrowsPairsOptions, CrowsPairsTask, nangia_metrics
from genderscope.tasks.scored.shared import masked_positions, shared_positions
from genderscope_dev.drive import answer_rounds

FIXTURE = FIXTURES / "crows_pairs_metric_py.json"
MASKED = frozenset({TOKENIZE, MASKED_LOGPROBS})


def test_shared_positions_are_difflib_equal_blocks():
    a, b = [101, 5, 6, 7, 8, 102], [101, 5, 9, 9, 7, 8, 102]
    assert shared_positions(a, b) == ([0, 1, 3, 4, 5], [0, 1, 4, 5, 6])
    assert masked_positions(a, b) == ([1, 3, 4], [1, 4, 5])
    assert masked_positions([1, 2], [1, 3]) == ([], [])


def test_nangia_metrics_exact_on_hand_made_scores():
    more = np.array([-1.0, -2.0, -3.0, -4.0001, -5.0, -1.0])
    less = np.array([-2.0, -1.0, -3.0, -4.0004, -4.0, -0.5])
    stereo = np.array([True, True, True, False, False, False])
    m = {k: v[0] for k, v in nangia_metrics(more, less, stereo, np.ones((1, 6))).items()}
    # rounded to 3 decimals: pair 2 (equal) and pair 3 (-4.0 = -4.0) are neutral; wins: pair 0 only
    assert m["metric_score"] == pytest.approx(100 / 6)
    assert m["stereo_score"] == pytest.approx(50.0)  # 1 of the 2 non-neutral stereo pairs
    assert m["antistereo_score"] == pytest.approx(0.0)
    assert m["neutral_share"] == pytest.approx(200 / 6)


class _Data:
    def __init__(self, path: Path):
        self._path = path

    def path(self, _name: str) -> Path:
        return self._path


def _csv(tmp_path: Path, rows: list[tuple[str, str, str]]) -> Path:
    p = tmp_path / "crows.csv"
    with open(p, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["", "sent_more", "sent_less", "stereo_antistereo", "bias_type"])
        w.writerows([(i, m, s, d, "gender") for i, (m, s, d) in enumerate(rows)])
    return p


def _fake(attempt):
    """tokenize: [CLS] words [SEP] (id = word length); masked_logprobs: -1 per position on sentences with
    'more', -2 otherwise."""
    p = attempt.request.payload
    if attempt.request.kind == TOKENIZE:
        ids = [0] + [len(w) for w in p["text"].split()] + [1]
        return {"ids": ids, "tokens": ["t"] * len(ids)}
    lp = -1.0 if 3 in p["ids"] else -2.0
    return {"ids": p["ids"], "positions": p["positions"], "logprobs": [lp] * len(p["positions"]), "loss": -lp}


def test_rounds_scores_and_unaligned_pairs(tmp_path):
    rows = [
        ("a bb ccc dddd ee", "a bb cccc dddd ee", "stereo"),  # more has a 3-letter word: -1 per token
        ("a bb cccc dddd ee", "a bb ccc dddd ee", "antistereo"),
        ("xx", "yyyy", "stereo"),  # shares only CLS/SEP: nothing to mask
    ]
    ctx = RunContext(request_kinds=MASKED, model_kind="hf-mlm", data=_Data(_csv(tmp_path, rows)))
    task = CrowsPairsTask(CrowsPairsOptions(n_boot=0), ctx)
    assert task.options.mode == "nangia" and task.options.scoring == "shared"
    results = answer_rounds(task, _fake)
    out = task.score(results)
    # shared, masked: bb dddd ee (a is the first shared token after CLS: positions 1..N-2 skip CLS, SEP)
    recs = [r for r, ar in zip(out.records, results) if ar.attempt.round == 1]
    assert recs[0] == {"sent_more_score": -4.0, "sent_less_score": -8.0}
    assert out.metrics["metric_score"].value == pytest.approx(100 / 3)
    assert out.metrics["neutral_share"].value == pytest.approx(100 / 3)
    assert out.extra["alignment"]["unaligned"] == 1
    assert out.extra["alignment"]["unaligned_items"] == ["crows-pairs/2"]


def test_mode_auto_picks_lm_eval_for_causal_models(tmp_path):
    ctx = RunContext(
        request_kinds=frozenset({LOGLIKELIHOOD}), data=_Data(_csv(tmp_path, [("a b", "a c", "stereo")]))
    )
    task = CrowsPairsTask(CrowsPairsOptions(), ctx)
    assert (task.options.mode, task.options.scoring) == ("lm-eval", "loglik")
    masked_lm_eval = CrowsPairsTask(
        CrowsPairsOptions(mode="lm-eval"), RunContext(request_kinds=MASKED, data=ctx.data)
    )
    assert masked_lm_eval.options.scoring == "pll"


def _metrics(out: Path) -> dict:
    return json.loads((out / "results.json").read_text())["tasks"]["crows-pairs"]["metrics"]


@pytest.mark.parametrize(
    "mode,metric,neutral", [("nangia", "metric_score", 50.0), ("lm-eval", "pct_stereotype", 0.5)]
)
def test_random_model_sits_at_no_preference(tmp_path, mode, metric, neutral):
    cli_run(
        "crows-pairs", "--model", "random", "--mode", mode, "--n-boot", "300", "--out", str(tmp_path / "r")
    )
    m = _metrics(tmp_path / "r")[metric]
    assert m["ci_low"] <= neutral <= m["ci_high"]


def _sharp_tiny_mlm(root: Path, n_pairs: int) -> Path:
    """The fixture's model: build_tiny_mlm over the first pairs' words (and lower-cased), weights × 20."""
    import torch
    from transformers import AutoModelForMaskedLM

    from genderscope.data.registry import DataRegistry
    from genderscope.demo_models import build_tiny_mlm, words_of

    with open(
        DataRegistry().path("crows_pairs/crows_pairs_anonymized.csv"), newline="", encoding="utf-8"
    ) as f:
        rows = [r for r in csv.DictReader(f) if r["bias_type"].startswith("gender")][:n_pairs]
    texts = [r[k] for r in rows for k in ("sent_more", "sent_less")]
    d = build_tiny_mlm(root, words_of(texts + [t.lower() for t in texts]))
    m = AutoModelForMaskedLM.from_pretrained(d)
    with torch.no_grad():
        for name, p in m.named_parameters():
            if "LayerNorm" not in name and p.dim() > 1:
                p.mul_(20.0)
    m.save_pretrained(d)
    return d


def _compare_with_metric_py(tmp_path: Path, casing: str, limit: int) -> None:
    pytest.importorskip("torch")
    want = json.loads(FIXTURE.read_text())
    model = _sharp_tiny_mlm(tmp_path / "mlm", want["n_pairs"])
    args = ["--lowercase"] if casing == "uncased" else []
    out = tmp_path / casing
    cli_run(
        "crows-pairs",
        "--model",
        f"hf-mlm:{model}",
        "--limit",
        str(limit),
        "--n-boot",
        "0",
        *args,
        "--out",
        str(out),
    )
    got = [json.loads(line) for line in (out / "attempts.jsonl").read_text().splitlines()]
    pairs = {r["item_id"].rsplit("/", 1)[0]: r for r in got if r.get("sent_more_score") is not None}
    ours = [pairs[k] for k in sorted(pairs, key=lambda k: int(k.split("/")[1]))]
    ref = want[casing]["pairs"][:limit]
    assert len(ours) == len(ref) == limit
    for o, r in zip(ours, ref):  # metric.py rounds each score to 3 decimals
        assert round(o["sent_more_score"], 3) == pytest.approx(r["sent_more_score"], abs=1e-9)
        assert round(o["sent_less_score"], 3) == pytest.approx(r["sent_less_score"], abs=1e-9)
    if limit == want["n_pairs"]:
        m, printed = _metrics(out), want[casing]["printed"]
        assert round(m["metric_score"]["value"], 2) == float(printed["Metric score"])
        assert round(m["stereo_score"]["value"], 2) == float(printed["Stereotype score"])
        assert round(m["antistereo_score"]["value"], 2) == float(printed["Anti-stereotype score"])


def test_tiny_mlm_equals_metric_py_on_first_pairs(tmp_path):
    _compare_with_metric_py(tmp_path, "uncased", 8)


@pytest.mark.slow
@pytest.mark.parametrize("casing", ["uncased", "cased"])
def test_tiny_mlm_equals_metric_py(tmp_path, casing):
    _compare_with_metric_py(tmp_path, casing, 40)


def test_tiny_causal_end_to_end(tmp_path, data_registry):
    pytest.importorskip("torch")
    from genderscope.demo_models import build_tiny_causal, words_of

    with open(
        data_registry.path("crows_pairs/crows_pairs_anonymized.csv"), newline="", encoding="utf-8"
    ) as f:
        rows = [r for r in csv.DictReader(f) if r["bias_type"].startswith("gender")][:6]
    model = build_tiny_causal(
        tmp_path / "causal", words_of(r[k] for r in rows for k in ("sent_more", "sent_less"))
    )
    cli_run(
        "crows-pairs",
        "--model",
        f"hf-causal:{model}",
        "--limit",
        "6",
        "--n-boot",
        "50",
        "--out",
        str(tmp_path / "c"),
    )
    res = json.loads((tmp_path / "c" / "results.json").read_text())["tasks"]["crows-pairs"]
    assert res["scoring"] == "loglik" and res["counts"]["scored"] == 6
    assert set(res["metrics"]) == {"pct_stereotype", "likelihood_diff"}


def test_nangia_rounds_reparse_to_the_same_numbers(tmp_path):
    from typer.testing import CliRunner

    from genderscope.cli.app import app

    cli_run(
        "crows-pairs", "--model", "random", "--mode", "nangia", "--n-boot", "50", "--out", str(tmp_path / "r")
    )
    res = CliRunner().invoke(app, ["reparse", str(tmp_path / "r"), "--out", str(tmp_path / "again")])
    assert res.exit_code == 0, res.output
    assert _metrics(tmp_path / "again") == _metrics(tmp_path / "r")


def test_mode_and_scoring_that_contradict_are_one_clear_error(tmp_path):
    from genderscope.common.errors import UsageError

    ctx = RunContext(request_kinds=MASKED, data=_Data(_csv(tmp_path, [("a b", "a c", "stereo")])))
    with pytest.raises(UsageError, match="--mode nangia does not go with --scoring loglik"):
        CrowsPairsTask(CrowsPairsOptions(mode="nangia", scoring="loglik"), ctx)
