"""Vectorised metric calculation for chat probes: every metric of every bootstrap resample at once.

A resample is a row of a weight matrix ``C`` (B x N): ``C[b, j]`` = times item j was drawn (a row of
ones = the point estimate).  GenderBench drops items whose attempts are all undetected, then averages per
item scores with NaNs skipped (``nanmean``) or pools attempt counts; with duplicates in a resample both
are weighted sums, so each metric is a ratio of matrix products (GenderBench spec, "Averages").
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any, Callable, Hashable, Sequence

import numpy as np

from genderscope.stats.bootstrap import bootstrap_counts

Metrics = dict[str, np.ndarray]


@dataclass(frozen=True)
class Evaluations:
    """The evaluated attempts of one run (answered attempts only).

    ``item`` (A,) is the row of the item in the scored table (0 … n_items − 1; items with no answered
    attempt are left out), ``source`` (n_items,) the item's index in the probe's item list, ``prompt``
    (A,) the prompt index within the item and ``code`` (A,) the evaluation's index in ``categories``
    (−1 = undetected).
    """

    item: np.ndarray
    prompt: np.ndarray
    code: np.ndarray
    source: np.ndarray
    categories: tuple[Hashable, ...]

    @property
    def n_items(self) -> int:
        return len(self.source)

    @classmethod
    def build(
        cls, rows: Sequence[tuple[int, int, Hashable | None]], categories: Sequence[Hashable]
    ) -> "Evaluations":
        """From ``(item index, prompt index, evaluation or None)`` per answered attempt."""
        index = {c: i for i, c in enumerate(categories)}
        src = np.array([r[0] for r in rows], dtype=np.int64)
        source, item = np.unique(src, return_inverse=True)
        code = np.array([-1 if r[2] is None else index[r[2]] for r in rows], dtype=np.int64)
        prompt = np.array([r[1] for r in rows], dtype=np.int64)
        return cls(item.reshape(-1), prompt, code, source, tuple(categories))

    def subset(self, rows: np.ndarray) -> "Evaluations":
        """The evaluations of the items at ``rows`` (distinct, in that order; renumbered 0 … len − 1): their
        attempts, and every further per-attempt array field of a subclass cut alike."""
        rows = np.asarray(rows, dtype=np.int64)
        pos = np.full(self.n_items, -1, dtype=np.int64)
        pos[rows] = np.arange(rows.size)
        keep = pos[self.item] >= 0
        a = len(self.code)
        cut = {
            f.name: v[keep]
            for f in fields(self)
            if f.name not in ("item", "source", "categories")
            and isinstance(v := getattr(self, f.name), np.ndarray)
            and v.shape[:1] == (a,)
        }
        return replace(self, item=pos[self.item[keep]], source=self.source[rows], **cut)

    def tally(self, column: np.ndarray | None = None, n_columns: int | None = None) -> np.ndarray:
        """N x K counts of detected attempts per item and ``column`` (default: per category)."""
        col = self.code if column is None else column
        k = len(self.categories) if n_columns is None else n_columns
        keep = self.code >= 0
        out = np.zeros((self.n_items, k))
        np.add.at(out, (self.item[keep], col[keep]), 1.0)
        return out

    def undetected(self) -> np.ndarray:
        """Undetected attempts per item (N,)."""
        return np.bincount(self.item, weights=(self.code < 0).astype(float), minlength=self.n_items)

    def attempts(self) -> np.ndarray:
        """Answered attempts per item (N,)."""
        return np.bincount(self.item, minlength=self.n_items).astype(float)


def weights(C: np.ndarray) -> np.ndarray:
    """``C`` as a float B x N matrix."""
    return np.atleast_2d(np.asarray(C, dtype=np.float64))


def ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """``num / den`` elementwise, NaN where ``den`` is 0 (GenderBench's ``zero_div``)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den != 0, num / np.where(den != 0, den, 1.0), np.nan)


def wmean(C: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Per resample, the mean of per-item ``values`` (N,) over drawn items, NaNs skipped (``nanmean``)."""
    v = np.asarray(values, dtype=np.float64)
    finite = np.isfinite(v)
    return ratio(C @ np.where(finite, v, 0.0), C @ finite.astype(np.float64))


def pooled(C: np.ndarray, num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """Per resample, ``Σ num / Σ den`` over drawn items (attempt-level rates)."""
    return ratio(C @ np.asarray(num, dtype=np.float64), C @ np.asarray(den, dtype=np.float64))


def nanmean_of(*columns: np.ndarray) -> np.ndarray:
    """Row-wise ``nanmean`` of several B-vectors (NaN where all are NaN)."""
    stack = np.vstack(columns)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmean(stack, axis=0)


def max_pairwise_diff(*columns: np.ndarray) -> np.ndarray:
    """Row-wise max over pairs of ``|a − b|`` (NaN if a pair is NaN, as Python's ``max`` over floats
    would not be: callers that need GenderBench's exact NaN order use their own)."""
    stack = np.vstack(columns)
    return np.nanmax(stack, axis=0) - np.nanmin(stack, axis=0)


def undetected_rates(C: np.ndarray, detected: np.ndarray, undetected: np.ndarray) -> Metrics:
    """GenderBench's two rates: items whose attempts are all undetected (share of drawn items) and
    undetected attempts (share of drawn items' attempts)."""
    kept = (np.asarray(detected) > 0).astype(np.float64)
    total = np.asarray(detected, dtype=np.float64) + np.asarray(undetected, dtype=np.float64)
    return {
        "undetected_rate_items": 1.0 - ratio(C @ kept, C.sum(axis=1)),
        "undetected_rate_attempts": ratio(C @ np.asarray(undetected, dtype=np.float64), C @ total),
    }


def kept(C: np.ndarray, detected: np.ndarray) -> np.ndarray:
    """``C`` with the columns of items that have no detected attempt zeroed (``filter_undetected``)."""
    return C * (np.asarray(detected) > 0)[None, :]


def tallied(
    ev: Evaluations, C: np.ndarray, counts: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """How a probe's ``compute`` starts: (``C`` as :func:`weights`, the per-item ``counts`` (default
    ``ev.tally()``), detected answers per item, ``W`` = the weights of the items with one, :func:`kept`)."""
    C = weights(C)
    counts = ev.tally() if counts is None else counts
    detected = counts.sum(axis=1)
    return C, counts, detected, kept(C, detected)


Compute = Callable[[np.ndarray], Metrics]


def stack(metrics: Metrics, names: Sequence[str]) -> np.ndarray:
    """B x M matrix of ``metrics`` in the order of ``names``."""
    return np.column_stack([np.asarray(metrics[n], dtype=np.float64).reshape(-1) for n in names])


def point_and_resamples(
    compute: Compute, n_items: int, n_boot: int, seed: int, cache: Path | None = None
) -> tuple[list[str], np.ndarray, np.ndarray | None]:
    """(metric names in the calculator's order, point values (M,), B x M resample values or None).

    Resamples are GenderBench's: ``random.seed(seed)`` then ``random.choices(items, k=N)`` per cycle;
    ``cache``: the folder keeping their count matrices (:func:`genderscope.stats.bootstrap.stored_counts`).
    """
    first = compute(np.ones((1, n_items)))
    names = list(first)
    point = stack(first, names)[0]
    if n_boot <= 0:
        return names, point, None
    blocks = [stack(compute(C), names) for C in bootstrap_counts(n_items, n_boot, seed, cache=cache)]
    return names, point, np.vstack(blocks)


def as_float(v: Any) -> float:
    """A metric value as a Python float (NaN stays NaN)."""
    return float(np.asarray(v, dtype=np.float64).reshape(-1)[0])
