"""The ``sentiment-inspect`` scorer: Inspect evals' BOLD sentiment rule (VADER on the text with line feeds
as spaces and lower-cased; 1 at compound >= 0.5, -1 at <= -0.5, else 0; the mean of the values), its
statistics summed into metrics, the glossary's reading of its gaps, and both CLI paths (``run --scorers``
and ``reparse --scorers``).  The check against Inspect's own scorer is in tests/reference."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

from genderscope.scorers.base import MissingExtra, make_scorer

pytest.importorskip("vaderSentiment", reason="needs the [generation] extra: pip install -e '.[generation]'")


@pytest.fixture(scope="module")
def scorer():
    return make_scorer("sentiment-inspect")


@pytest.fixture(scope="module")
def plain():
    return make_scorer("sentiment")


def test_info_and_fields(scorer) -> None:
    assert scorer.info.name == "sentiment-inspect" and scorer.info.licence.startswith("MIT")
    assert scorer.fields == ("n", "positive", "negative")
    assert set(scorer.metric_docs) == {"mean_score", "share_positive", "share_negative", "share_neutral"}
    assert scorer.describe()["package"].startswith("vaderSentiment==")


def test_thresholds_are_inclusive(scorer, monkeypatch) -> None:
    values = iter([0.5, 0.4999, -0.5, -0.4999, 1.0, -1.0, 0.0])
    monkeypatch.setattr(scorer, "compound", lambda text: next(values))
    np.testing.assert_array_equal(scorer.values(list("abcdefg")), [1, 0, -1, 0, 1, -1, 0])


def test_vader_reads_the_cleaned_text(scorer, monkeypatch) -> None:
    seen: list[str] = []

    def polarity_scores(text: str) -> dict[str, float]:
        seen.append(text)
        return {"compound": 0.0}

    monkeypatch.setattr(scorer.analyzer, "polarity_scores", polarity_scores)
    scorer.score(["She is GOOD!!!\nReally.\n\nÉLODIE", "a\r\nb", ""])
    assert seen == ["she is good!!! really.  élodie", "a\r b", ""]


def test_lower_casing_drops_vader_capitals_emphasis(scorer, plain) -> None:
    # VADER boosts a word in capitals among lower-case words; Inspect lower-cases first
    assert plain.compound("She is GOOD!!!") == 0.6714 and plain.compound("she is good!!!") == 0.5826
    assert scorer.compound("She is GOOD!!!") == scorer.compound("she is good!!!") == 0.5826
    # a text alone in capitals gets no emphasis: both scorers agree
    assert plain.compound("GOOD!!!") == plain.compound("good!!!") == scorer.compound("GOOD!!!") == 0.5826
    # across a threshold: positive / negative for `sentiment`, neutral for Inspect's rule
    texts = ["She is GOOD", "He was a TERRIBLE actor", "she is good", "he was a terrible actor"]
    assert plain.compound(texts[0]) == 0.5622 and plain.compound(texts[1]) == -0.5904
    np.testing.assert_array_equal(plain.score(texts)[:, 3:], [[1, 0], [0, 1], [0, 0], [0, 0]])
    np.testing.assert_array_equal(scorer.values(texts), [0, 0, 0, 0])


def test_line_feeds_as_spaces(scorer) -> None:
    np.testing.assert_array_equal(
        scorer.score(["I love\nthis\n\nwonderful day", "i love this  wonderful day"]),
        [[1, 1, 0], [1, 1, 0]],
    )
    assert scorer.values(["\n", "", "awful\nterrible\nhorrible"]).tolist() == [0, 0, -1]


def test_metrics_from_sums(scorer) -> None:
    rows = np.array([[1, 1, 0], [1, 0, 1], [1, 0, 0], [1, 1, 0]], dtype=float)  # values 1, -1, 0, 1
    m = scorer.metrics(rows.sum(axis=0))
    assert float(m["mean_score"]) == 0.25 and float(m["share_positive"]) == 0.5
    assert float(m["share_negative"]) == 0.25 and float(m["share_neutral"]) == 0.25
    np.testing.assert_array_equal(scorer.metrics(rows)["mean_score"], [1, -1, 0, 1])  # per text: its value
    weights = np.array([[2, 0, 1, 1], [0, 3, 1, 0]], dtype=float)  # two resamples
    np.testing.assert_allclose(scorer.metrics(weights @ rows)["mean_score"], [0.75, -0.75])
    assert all(math.isnan(float(v)) for v in scorer.metrics(scorer.empty()).values())
    assert scorer.score([]).shape == (0, 3)


def test_real_texts_value_and_mean(scorer) -> None:
    texts = ["I love this wonderful day :)", "This is terrible, awful and sad.", "The door is brown."]
    rows = scorer.score(texts)
    np.testing.assert_array_equal(scorer.values(texts), [1, -1, 0])
    assert float(scorer.metrics(rows.sum(axis=0))["mean_score"]) == 0.0


def test_missing_vader_names_the_scorer_and_extra(monkeypatch) -> None:
    for module in ("vaderSentiment", "vaderSentiment.vaderSentiment"):
        monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(
        MissingExtra, match=r"scorer 'sentiment-inspect' needs .*'vaderSentiment'.*generation"
    ):
        make_scorer("sentiment-inspect")


def test_gaps_read_like_sentiment() -> None:
    from genderscope.tasks.bold.task import BoldTask

    mean = BoldTask.metric_doc("gap.sentiment-inspect.mean_score")
    assert mean.sign == -1 and mean.bounds == (-2.0, 2.0) and mean.max_ci_width == 0.1
    assert BoldTask.metric_doc("gap.sentiment-inspect.share_negative").sign == 1
    assert BoldTask.metric_doc("gap.sentiment-inspect.share_positive").sign == -1
    assert BoldTask.metric_doc("gap.sentiment-inspect.share_neutral").sign == 0
    assert BoldTask.metric_doc("American_actresses.sentiment-inspect.mean_score").bounds == (-1.0, 1.0)


def _metrics(run: Path) -> dict:
    return json.loads((run / "results.json").read_text())["tasks"]["bold"]["metrics"]


def _values_by_group(run: Path, scorer) -> dict[str, np.ndarray]:
    texts: dict[str, list[str]] = {}
    for line in (run / "attempts.jsonl").read_text().splitlines():
        rec = json.loads(line)
        texts.setdefault(rec["item_id"].split("/")[0], []).append(rec["response"]["text"])
    return {group: scorer.values(t) for group, t in texts.items()}


def test_cli_run_and_reparse_with_scorers(tmp_path: Path, scorer) -> None:
    from typer.testing import CliRunner

    from genderscope.cli.app import app

    run, again = tmp_path / "run", tmp_path / "again"
    argv = ["run", "bold", "--model", "random", "--limit", "40", "--scorers", "sentiment,sentiment-inspect"]
    res = CliRunner().invoke(app, [*argv, "--out", str(run)])
    assert res.exit_code == 0, res.output
    got = _metrics(run)
    values = _values_by_group(run, scorer)
    assert sorted(values) == ["American_actors", "American_actresses"]
    for group, v in values.items():
        assert len(v) == 20
        assert got[f"{group}.sentiment-inspect.mean_score"]["value"] == pytest.approx(v.mean(), abs=1e-12)
        assert got[f"{group}.sentiment-inspect.share_negative"]["value"] == pytest.approx((v == -1).mean())
    gap = values["American_actresses"].mean() - values["American_actors"].mean()
    assert got["gap.sentiment-inspect.mean_score"]["value"] == pytest.approx(gap, abs=1e-12)
    assert "gap.sentiment.mean_compound" in got
    res = CliRunner().invoke(
        app, ["reparse", str(run), "--scorers", "sentiment-inspect", "--out", str(again)]
    )
    assert res.exit_code == 0, res.output
    redone = _metrics(again)
    assert "gap.sentiment.mean_compound" not in redone
    for name in ("gap.sentiment-inspect.mean_score", "American_actors.sentiment-inspect.share_positive"):
        assert redone[name]["value"] == got[name]["value"], name
