"""genderscope's offline scorers side by side with the reference tools, each in its own venv
(tests/reference/scorers_venvs.py), on the same 3,220 texts (BOLD's gender prompts with synthetic
continuations full of gender words, target words, HurtLex words, abbreviations, quotes, non-ASCII
capitals; plus edge cases):

* VADER (vaderSentiment 3.3.2): every compound score equal;
* HateSonar 0.1.0 (its own ``Sonar.ping``, under a compiled en_US.UTF-8 locale; ours under whatever
  locale this system has): every top class and every probability equal;
* HELM 0.5.16 ``BiasMetric``: HELM's tokens of every text equal ours, and representation and
  association scores (gender and race; adjectives and professions) equal to float noise;
* Inspect evals 0.26.0's BOLD ``sentiment_scorer`` (inspect-ai 0.3.285, awaited on a ``TaskState`` per
  text; the 3,220 texts plus ``INSPECT_CASES`` with capitals, "!" and line breaks): every value (1 / 0 / -1)
  and cleaned text equal ``sentiment-inspect``'s, its ``mean()`` equal, its ``stderr()`` to float noise;
  and the texts genderscope's ``sentiment`` (no lower-casing) classes otherwise, counted.

Skips, naming the command that makes it, when a venv is absent.  Slow (HELM's own association loop).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import scorer_texts  # noqa: E402
import scorers_venvs  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.reference, pytest.mark.timeout(3600)]


def _need(tool: str) -> None:
    why = scorers_venvs.available(tool)
    if why:
        pytest.skip(f"reference: {why}")


@pytest.fixture(scope="module")
def texts(data_registry_env) -> list[str]:
    return scorer_texts.corpus()


@pytest.fixture(scope="module")
def data_registry_env():
    pytest.importorskip("vaderSentiment", reason="needs the [generation] extra")
    pytest.importorskip("nltk", reason="needs the [generation] extra")


def test_vader_equal(texts: list[str]) -> None:
    _need("vader")
    row = scorer_texts.compare_vader(texts)
    assert row["equal"] == row["texts"] == len(texts), row


def test_hatesonar_equal(texts: list[str]) -> None:
    _need("hatesonar")
    row = scorer_texts.compare_hatesonar(texts)
    assert row["top_class_equal"] == len(texts), row
    assert row["max_abs_diff_probability"] == 0.0, row


def test_helm_bias_metric_equal(texts: list[str]) -> None:
    _need("helm")
    rows = scorer_texts.compare_helm(texts)
    assert rows["tokens_equal"] == len(texts), rows["tokens_equal"]
    compared = [v for k, v in rows.items() if k.startswith(("representation_", "associations_"))]
    assert len(compared) == 6
    for value in compared:
        assert value["helm"] is not None and value["helm"] > 0, rows  # the texts exercise every measure
        assert math.isclose(value["genderscope"], value["helm"], rel_tol=1e-12, abs_tol=1e-15), rows


def test_helm_on_texts_without_gender_words() -> None:
    """HELM answers None where no group word occurs; genderscope answers NaN."""
    _need("helm")
    from genderscope.scorers.helm_bias import RepresentationScorer

    texts = ["The weather was mild.", "", "Nothing to count here."]
    ref = scorers_venvs.run("helm", texts)
    scorer = RepresentationScorer()
    ours = scorer.metrics(scorer.score(texts).sum(axis=0))["representation"]
    assert ref["representation_gender"] is None and math.isnan(float(ours))


# measured on corpus() + INSPECT_CASES (3,234 texts) and stated in docs/generation.md (sentiment-inspect)
SENTIMENT_DIFFERS = 42


def test_inspect_bold_sentiment_equal(texts: list[str]) -> None:
    _need("inspect")
    from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

    every = texts + scorer_texts.INSPECT_CASES
    row = scorer_texts.compare_inspect(every)
    print(row)
    assert row["versions"]["inspect-evals"] == "0.26.0", row["versions"]
    assert row["values_equal"] == row["answers_equal"] == row["texts"] == len(every), row
    assert row["mean"]["genderscope"] == row["mean"]["inspect"], row["mean"]
    assert math.isclose(row["stderr"]["genderscope"], row["stderr"]["inspect"], rel_tol=1e-12), row["stderr"]
    assert all(row["classes"][c] > 0 for c in ("1", "0", "-1")), row["classes"]
    # the texts whose class depends on lower-casing, counted again from VADER directly
    vader = SentimentIntensityAnalyzer().polarity_scores

    def cls(text: str) -> int:
        c = vader(text)["compound"]
        return int(c >= 0.5) - int(c <= -0.5)

    again = sum(cls(t) != cls(t.replace("\n", " ").lower()) for t in every)
    assert row["sentiment_differs"] == again == sum(row["sentiment_differs_by"].values()), row
    assert row["sentiment_differs"] == SENTIMENT_DIFFERS, (
        f"{row['sentiment_differs']} texts class otherwise (docs/generation.md says {SENTIMENT_DIFFERS})"
    )
