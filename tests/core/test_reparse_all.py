"""Every task x every scoring mode on the tiny test models: run, reparse the run from its attempts.jsonl
(replay answers every primitive kind), and get identical metrics; the run records the resolved
measurement (never ``auto``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("torch")

from genderscope.core.engine import run_tasks  # noqa: E402
from genderscope.core.reparse import reparse_run  # noqa: E402

from _run_versions import strip_to_v1  # noqa: E402

# (task, model fixture, options, expected recorded scoring option or None)
CASES = [
    ("gest", "random", {}, None),
    ("winobias-adjectives", "random", {}, None),
    ("abc", "mlm", {}, "pll"),
    ("abc", "causal", {}, "loglik"),
    ("abc", "mlm", {"mode": "genda-lens"}, "cross-entropy"),
    ("abc", "random", {}, "pll"),
    ("dawinobias", "mlm", {}, "top1"),
    ("dawinobias", "mlm", {"scoring": "candidates"}, "pll"),
    ("dawinobias", "causal", {}, "loglik"),
    ("dawinobias", "mlm", {"mode": "genda-lens"}, "top1"),
    ("dawinobias", "random", {"scoring": "candidates"}, "loglik"),
    ("winobias-lm", "mlm", {}, None),
    ("winobias-lm", "mlm", {"scoring": "candidates"}, None),
    ("winobias-lm", "causal", {}, None),
    ("gest-likelihood", "mlm", {}, None),
    ("gest-likelihood", "causal", {}, None),
]


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, str]:
    from genderscope.data.registry import DataRegistry
    from genderscope.demo_models import build_tiny_causal, build_tiny_mlm, genda_lens_texts, words_of

    words = words_of(genda_lens_texts(DataRegistry()) + ["he she his her him man woman said that The I ."])
    return {
        "random": "random",
        "mlm": f"hf-mlm:{build_tiny_mlm(tmp_path_factory.mktemp('mlm'), words, seed=5)}",
        "causal": f"hf-causal:{build_tiny_causal(tmp_path_factory.mktemp('causal'), words, seed=6)}",
    }


@pytest.mark.parametrize(
    "task,model,opts,scoring",
    CASES,
    ids=lambda x: (
        str(x) if not isinstance(x, dict) else "-".join(f"{k}={v}" for k, v in x.items()) or "default"
    ),
)
def test_run_then_reparse_gives_identical_metrics(task, model, opts, scoring, models, tmp_path):
    if opts.get("mode") == "genda-lens" and task == "dawinobias":
        pytest.importorskip("spacy")
    opts = dict(opts)
    if task in ("abc", "dawinobias"):
        opts.setdefault("n_boot", 20)
    first = run_tasks(
        [task], models[model], limit=6, out=tmp_path / "run", options=opts, progress=False, use_cache=False
    )
    manifest = json.loads((tmp_path / "run" / "run.json").read_text())
    recorded = manifest["tasks"][task]["options"]
    assert "auto" not in {v for v in recorded.values() if isinstance(v, str)}
    if scoring is not None:
        assert recorded["scoring"] == scoring
    (again,) = reparse_run(tmp_path / "run", {}, tmp_path / "re")
    assert again.runs[0].counts.skipped == 0 and again.runs[0].counts.errors == 0
    a = json.loads((tmp_path / "run" / "results.json").read_text())["tasks"][task]["metrics"]
    b = json.loads((tmp_path / "re" / "results.json").read_text())["tasks"][task]["metrics"]
    assert a == b and a
    assert first.runs[0].counts.rounds >= 1
    # the same folder as written before attempts.jsonl carried request hashes reparses identically
    reparse_run(strip_to_v1(tmp_path / "run", tmp_path / "v1"), {}, tmp_path / "v1-re")
    assert json.loads((tmp_path / "v1-re" / "results.json").read_text())["tasks"][task]["metrics"] == a


def test_reparse_refuses_a_folder_without_a_run(tmp_path: Path):
    from genderscope.common.errors import UsageError

    with pytest.raises(UsageError, match="not a run folder"):
        reparse_run(tmp_path)
