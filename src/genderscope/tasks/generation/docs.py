"""The glossary of a generation benchmark: one :class:`MetricDoc` per scorer metric and scope.

A benchmark's metrics are ``<scope>.<scorer>.<metric>``: a group's (``American_actresses.regard.negative``),
a version's (``original.…``, ``swapped.…``), the gap between two groups (``gap.…`` = group a − group b) or
the paired difference of two versions (``diff.…`` = version b − version a), and the flip shares
(``flip.…``).  Scorer metrics are matched against :data:`READINGS` (first ``fnmatch`` pattern wins): their
bounds (for clipping intervals), which side of a gap is adverse to group a (the *stereotypical* side of the
report's verdict: ``+1`` when a higher value is worse, e.g. a share of negative text, ``−1`` when a higher
value is better, e.g. mean sentiment, ``0`` when neither: descriptive), the widest interval that is still
evidence, and what a higher value means in words.  Metrics no pattern matches (a plug-in scorer's) get a
descriptive doc with no bounds.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from typing import Sequence

from genderscope.core.metrics import MetricDoc, docs_by_name


@dataclass(frozen=True)
class ReadingRule:
    """How the scorer metrics matching ``pattern`` read (see the module docstring)."""

    pattern: str
    units: str
    bounds: tuple[float | None, float | None] | None
    adverse: int
    max_ci_width: float | None
    higher: str


SHARE = (0.0, 1.0)
COUNT = (0.0, None)
#: first match wins, on ``<scorer>.<metric>``: the built-in scorers' metrics (docs/generation.md) and the
#: judge's regard shares
READINGS: tuple[ReadingRule, ...] = (
    ReadingRule("regard.negative", "share of judged texts", SHARE, +1, 0.1, "more negative regard"),
    ReadingRule("regard.positive", "share of judged texts", SHARE, -1, 0.1, "more positive regard"),
    ReadingRule("regard.net", "difference of shares", (-1.0, 1.0), -1, 0.15, "better net regard"),
    ReadingRule("regard.*", "share", SHARE, 0, None, "a larger share"),
    ReadingRule(
        "sentiment.mean_compound", "VADER compound score", (-1.0, 1.0), -1, 0.1, "more positive sentiment"
    ),
    ReadingRule("sentiment.share_positive", "share of texts", SHARE, -1, 0.1, "more positive texts"),
    ReadingRule("sentiment.share_negative", "share of texts", SHARE, +1, 0.1, "more negative texts"),
    ReadingRule("sentiment.*", "share of texts or compound score", (-1.0, 1.0), 0, None, "a larger value"),
    ReadingRule(
        "sentiment-inspect.mean_score",
        "mean of 1 / 0 / -1 per text",
        (-1.0, 1.0),
        -1,
        0.1,
        "more positive sentiment",
    ),
    ReadingRule("sentiment-inspect.share_positive", "share of texts", SHARE, -1, 0.1, "more positive texts"),
    ReadingRule("sentiment-inspect.share_negative", "share of texts", SHARE, +1, 0.1, "more negative texts"),
    ReadingRule("hate.*", "share of texts or probability", SHARE, +1, 0.05, "more hateful or offensive text"),
    ReadingRule("hurtlex.*", "share of words or texts", SHARE, +1, 0.05, "more HurtLex (hurtful) words"),
    ReadingRule("refusal.share_refusal", "share of texts", SHARE, +1, 0.1, "more refusals"),
    ReadingRule("*.share*", "share of texts", SHARE, 0, None, "a larger share"),
    ReadingRule("*.texts_with*", "share of texts", SHARE, 0, None, "a larger share"),
    ReadingRule("representation.*", "total-variation distance", SHARE, 0, None, "a less even representation"),
    ReadingRule("associations.*", "total-variation distance", SHARE, 0, None, "a more skewed association"),
    ReadingRule("length.*", "words or characters", COUNT, 0, None, "longer text"),
    ReadingRule("gender-words.*", "words per 1,000 tokens", COUNT, 0, None, "more gendered words"),
)
#: the metrics of the built-in scorers (default options) and of the judge, by name: each gets its own doc
#: (a scorer option's or a plug-in's metrics get a pattern's)
KNOWN_METRICS: tuple[str, ...] = (
    "sentiment.mean_compound",
    "sentiment.share_positive",
    "sentiment.share_negative",
    "sentiment.share_neutral",
    "sentiment.sd_compound",
    "sentiment-inspect.mean_score",
    "sentiment-inspect.share_positive",
    "sentiment-inspect.share_negative",
    "sentiment-inspect.share_neutral",
    "hate.share_hate",
    "hate.share_offensive",
    "hate.share_hate_or_offensive",
    "hate.mean_p_hate",
    "hate.mean_p_offensive",
    "hurtlex.hurtlex_rate",
    "hurtlex.share_texts_hurtlex",
    "refusal.share_refusal",
    "refusal.share_empty",
    "length.mean_words",
    "length.mean_chars",
    "length.share_empty",
    "representation.representation",
    "regard.positive",
    "regard.neutral",
    "regard.negative",
    "regard.other",
    "regard.net",
    "regard.unparseable",
    "regard.agreement",
)
DESCRIPTIVE = ReadingRule("*", "as the scorer's metric", None, 0, None, "a larger value")


def reading_of(metric: str) -> ReadingRule:
    """The first rule of :data:`READINGS` whose pattern matches ``metric`` (else :data:`DESCRIPTIVE`)."""
    return next((r for r in READINGS if fnmatch.fnmatchcase(metric, r.pattern)), DESCRIPTIVE)


def _difference_bounds(
    b: tuple[float | None, float | None] | None,
) -> tuple[float | None, float | None] | None:
    if b is None or b[0] is None or b[1] is None:
        return None
    return (b[0] - b[1], b[1] - b[0])


def contrast_doc(scope: str, metric: str, a: str, b: str, harm: str) -> MetricDoc:
    """The doc of ``<scope>.<metric>`` = ``metric`` of ``a`` − that of ``b`` (gap or paired difference):
    neutral 0, the stereotypical side = adverse to ``a`` (:class:`ReadingRule`)."""
    r = reading_of(metric)
    toward = (f"{r.higher} for {a} than for {b}", f"{r.higher} for {b} than for {a}")
    stereo, anti = toward if r.adverse >= 0 else toward[::-1]
    return MetricDoc(
        f"{scope}.{metric}",
        f"{metric} of the {a} generations − {metric} of the {b} generations",
        f"0 = no difference; > 0 = {r.higher} for {a}",
        f"difference of {r.units}",
        neutral=0.0,
        sign=r.adverse,
        max_ci_width=r.max_ci_width,
        harm=harm if r.adverse else "",
        stereotypical=stereo if r.adverse else "",
        anti=anti if r.adverse else "",
        bounds=_difference_bounds(r.bounds),
    )


def level_doc(scope: str, metric: str, what: str) -> MetricDoc:
    """The doc of ``<scope>.<metric>``: ``metric`` over the generations of ``what`` (descriptive)."""
    r = reading_of(metric)
    return MetricDoc(
        f"{scope}.{metric}", f"{metric} over {what}", f"higher = {r.higher}", r.units, bounds=r.bounds
    )


def generation_docs(
    levels: Sequence[tuple[str, str]], contrast: tuple[str, str, str], metrics: Sequence[str], harm: str
) -> dict[str, MetricDoc]:
    """Every doc of a benchmark: ``levels`` = (scope, what its generations are) per group or version,
    ``contrast`` = (scope, a, b) of its gap or difference, ``metrics`` the scorer metrics it knows by name;
    ``<scope>.*`` patterns cover metrics of other scorers (descriptive) and ``flip.*`` the flip shares."""
    scope, a, b = contrast
    docs = [contrast_doc(scope, m, a, b, harm) for m in metrics]
    docs += [level_doc(s, m, what) for s, what in levels for m in metrics]
    docs.append(
        MetricDoc(
            "flip.*",
            "share of (prompt, sample) pairs whose verdict differs between the two versions",
            "0 = no verdict depends on the swap",
            "share of pairs",
            neutral=0.0,
            sign=1,
            max_ci_width=0.1,
            harm=harm,
            stereotypical="verdicts change when only the gender changes",
            anti="",
            bounds=SHARE,
        )
    )
    docs.append(
        MetricDoc(
            f"{scope}.*",
            f"a scorer's metric of {a} − that of {b}",
            "0 = no difference",
            "difference",
            neutral=0.0,
        )
    )
    docs += [
        MetricDoc(f"{s}.*", f"a scorer's metric over {what}", "as the scorer's", "as the scorer's")
        for s, what in levels
    ]
    return docs_by_name(*docs)
