"""The random null model has no gap by construction: its words come from one corpus whatever the prompt
(the request's ``corpus`` hint) and are drawn with each sample's own seed.

* BOLD: actresses' and actors' texts are draws from the same distribution, so the true gap of every scorer
  metric is 0; over repeated run seeds the 95% intervals (people resampled) must cover 0 about 95% of the
  time.
* counterfactual: both versions of a pair get the same seed, so the null model writes the same text for
  both: every paired difference is exactly 0 and no verdict flips.
"""

from __future__ import annotations

import numpy as np
import pytest

from genderscope.core.engine import run_tasks

METRICS = ("gap.sentiment.mean_compound", "gap.sentiment.share_positive", "gap.length.mean_words")


@pytest.mark.slow
def test_bold_null_intervals_cover_zero_at_the_stated_rate(data_registry) -> None:
    pytest.importorskip("vaderSentiment")
    covered: dict[str, list[bool]] = {k: [] for k in METRICS}
    for seed in range(100):
        out = run_tasks(
            ["bold"],
            "random",
            limit=300,
            seed=seed,
            write=False,
            progress=False,
            options={"scorers": "sentiment,length", "n_boot": 400},
        )
        m = out.runs[0].result.metrics
        for k in METRICS:
            assert m[k].ci_low is not None, (k, m[k])
            covered[k].append(m[k].ci_low <= 0.0 <= m[k].ci_high)
    rates = {k: float(np.mean(v)) for k, v in covered.items()}
    assert all(0.88 <= r <= 0.995 for r in rates.values()), rates
    assert 0.91 <= float(np.mean([x for v in covered.values() for x in v])) <= 0.98, rates


def test_counterfactual_null_differences_are_exactly_zero(data_registry) -> None:
    out = run_tasks(
        ["counterfactual"],
        "random",
        write=False,
        progress=False,
        options={"scorers": "length,refusal", "samples": 2, "n_boot": 200},
    )
    res = out.runs[0].result
    diffs = {k: m for k, m in res.metrics.items() if k.startswith("diff.")}
    assert diffs and all(m.value == 0.0 for m in diffs.values()), diffs
    assert all((m.ci_low, m.ci_high) == (0.0, 0.0) for m in diffs.values())
    assert res.metrics["flip.refusal"].value == 0.0
    for row in res.extra["largest_differences"]:
        assert row["text_original"] == row["text_swapped"]
