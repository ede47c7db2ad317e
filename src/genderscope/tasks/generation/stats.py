"""Per-group metrics, between-group gaps and paired differences, with cluster-bootstrap intervals.

The generated texts of a run are rows of a :class:`~.scoring.ScoreTable` ``S`` (texts × Σ fields).  A weight
matrix C (rows × texts; a row of ones = the point value, a bootstrap row = how often each text's cluster
was drawn) gives a group's column sums ``C @ (m_g ∘ S)`` (``m_g``: 1 on the group's texts) and every scorer
metric of the group from them, for all rows at once:

* **groups** (BOLD): ``<group>.<metric>`` for each group; ``gap.<metric>`` = group a − group b;
* **paired versions** (counterfactual): ``<a>.<metric>``, ``<b>.<metric>`` over the complete pairs only (a
  (prompt, sample) whose two versions were both generated), ``diff.<metric>`` = b − a, and
  ``flip.<verdict>``: the share of those pairs whose verdict (e.g. refused or not) differs.  Both versions of
  a prompt are in one cluster, so a resample draws them together: the same resampled rows for both.

A mean over a group's texts is a ratio of column sums, so a text weighs the same whichever group or
cluster it is in (BOLD: a person with three prompts counts three times, as in BOLD's per-text means).
Intervals: :func:`genderscope.stats.rules.rule_intervals` (the scored layer's rule: clusters drawn with
replacement, numpy generator; the jackknife-t below 20 clusters; none below 5), then clipped to each
metric's bounds.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from genderscope.core.metrics import Metric, MetricDoc, doc_for
from genderscope.stats.rules import IntervalRule, rule_intervals
from genderscope.tasks.generation.scoring import ScoreTable

Stat = Callable[[np.ndarray], dict[str, np.ndarray]]


def cluster_index(labels: Sequence[str]) -> np.ndarray:
    """Index 0 … K−1 of each text's cluster label (first-seen order)."""
    uniq = {c: j for j, c in enumerate(dict.fromkeys(labels))}
    return np.array([uniq[c] for c in labels], dtype=np.int64)


def group_stat(
    table: ScoreTable, group: np.ndarray, groups: Sequence[str], gap: tuple[str, str] | None
) -> Stat:
    """The statistic of a group design (see the module docstring): ``group`` = each text's group."""
    parts = {g: table.S * (group == g).astype(np.float64)[:, None] for g in groups}

    def stat(C: np.ndarray) -> dict[str, np.ndarray]:
        per = {g: table.metrics(C @ parts[g]) for g in groups}
        out = {f"{g}.{k}": v for g in groups for k, v in per[g].items()}
        if gap is not None:
            a, b = gap
            out.update({f"gap.{k}": per[a][k] - per[b][k] for k in per[a]})
        return out

    return stat


@dataclass(frozen=True)
class Flip:
    """A verdict compared between the versions of each complete pair: ``flipped`` (1 where the two
    versions' verdicts differ) and ``defined`` (1 where both versions have a verdict), one value per text
    of version a (0 on the others)."""

    name: str
    flipped: np.ndarray
    defined: np.ndarray


def paired_stat(
    table: ScoreTable, version: np.ndarray, versions: tuple[str, str], flips: Sequence[Flip]
) -> Stat:
    """The statistic of a paired design: ``version`` = each text's version (``""`` = left out: its pair is
    incomplete); ``diff.<metric>`` = version b − version a."""
    a, b = versions
    parts = {v: table.S * (version == v).astype(np.float64)[:, None] for v in versions}

    def stat(C: np.ndarray) -> dict[str, np.ndarray]:
        ma, mb = table.metrics(C @ parts[a]), table.metrics(C @ parts[b])
        out = {f"diff.{k}": mb[k] - ma[k] for k in ma}
        out.update({f"{a}.{k}": v for k, v in ma.items()})
        out.update({f"{b}.{k}": v for k, v in mb.items()})
        for f in flips:
            den = C @ f.defined
            with np.errstate(invalid="ignore", divide="ignore"):
                out[f"flip.{f.name}"] = np.where(den > 0, (C @ f.flipped) / np.where(den > 0, den, 1), np.nan)
        return out

    return stat


def metrics_with_intervals(
    stat: Stat, n: int, clusters: np.ndarray, n_boot: int, seed: int, docs: dict[str, MetricDoc]
) -> dict[str, Metric]:
    """Point value and 95% interval of every metric of ``stat`` (clusters drawn with replacement,
    :func:`rule_intervals`), each interval clipped to its metric's declared bounds."""
    names, point, cols = rule_intervals(stat, n, clusters, n_boot, seed, IntervalRule())
    out = {}
    for i, (k, (lo, hi, why)) in enumerate(zip(names, cols)):
        v = float(point[i])
        out[k] = _clipped(Metric(None if np.isnan(v) else v, lo, hi, why), doc_for(docs, k))
    return out


def _clipped(m: Metric, doc: MetricDoc | None) -> Metric:
    if doc is None or not doc.bounds:
        return m
    low, high = doc.bounds
    lo = max(m.ci_low, low) if m.ci_low is not None and low is not None else m.ci_low
    hi = min(m.ci_high, high) if m.ci_high is not None and high is not None else m.ci_high
    return m if (lo, hi) == (m.ci_low, m.ci_high) else dataclasses.replace(m, ci_low=lo, ci_high=hi)


def per_unit_metrics(
    table: ScoreTable, units: np.ndarray, n_units: int, mask: np.ndarray
) -> dict[str, np.ndarray]:
    """Every metric over each unit's texts in ``mask`` (``units``: unit index of each text): name -> one
    value per unit (NaN where the unit has no such text)."""
    ind = np.zeros((n_units, len(units)))
    ind[units, np.arange(len(units))] = np.asarray(mask, dtype=np.float64)
    return table.metrics(ind @ table.S)
