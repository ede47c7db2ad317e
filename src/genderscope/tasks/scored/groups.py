"""Per-group statistics over a weight matrix C (resamples × items), for metrics defined on groups of items
(e.g. one value per occupation, then a correlation across occupations).

``indicator(labels)`` gives the N × G 0/1 matrix of the items' groups; :func:`wgroup_mean` the weighted mean
of an item value within each group (one row per row of C); :func:`group_weight` each group's mean item
weight (under a cluster bootstrap whose clusters are the groups: how often the group was drawn);
:func:`wcorr` a weighted Pearson correlation across groups, row by row.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np


def indicator(labels: Sequence[Any]) -> tuple[np.ndarray, list[Any]]:
    """(N × G 0/1 matrix: item j belongs to group g, the G group labels in first-seen order)."""
    names = list(dict.fromkeys(labels))
    index = {k: g for g, k in enumerate(names)}
    G = np.zeros((len(labels), len(names)))
    G[np.arange(len(labels)), [index[k] for k in labels]] = 1.0
    return G, names


def wgroup_mean(C: np.ndarray, x: np.ndarray, G: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    """B × G weighted mean of ``x`` over each group's items in ``mask`` (NaN where a group has no weight)."""
    W = C if mask is None else C * np.asarray(mask, dtype=np.float64)[None, :]
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (W @ (G * x[:, None])) / (W @ G)


def group_weight(C: np.ndarray, G: np.ndarray) -> np.ndarray:
    """B × G mean weight of each group's items (1 for the point value; the draw count of the group when the
    bootstrap resamples whole groups)."""
    return (C @ G) / G.sum(axis=0)[None, :]


def wcorr(w: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Weighted Pearson correlation of ``x`` and ``y`` across groups, one value per row: ``w``, ``y``
    (and ``x``, or a length-G vector) are B × G; groups with zero weight or a NaN are left out; NaN where
    fewer than two groups remain or either side is constant."""
    y = np.asarray(y, dtype=np.float64)
    x = np.broadcast_to(np.asarray(x, dtype=np.float64), y.shape)
    ok = (w > 0) & np.isfinite(x) & np.isfinite(y)
    w = np.where(ok, w, 0.0)
    x, y = np.where(ok, x, 0.0), np.where(ok, y, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        tot = w.sum(axis=1, keepdims=True)
        dx = x - (w * x).sum(axis=1, keepdims=True) / tot
        dy = y - (w * y).sum(axis=1, keepdims=True) / tot
        cov = (w * dx * dy).sum(axis=1)
        r = cov / np.sqrt((w * dx * dx).sum(axis=1) * (w * dy * dy).sum(axis=1))
    few = ok.sum(axis=1) < 2
    return np.where(few | ~np.isfinite(r), np.nan, np.clip(r, -1.0, 1.0))


def first_of_group(G: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Length-G: ``x`` at each group's first item (for values constant within a group)."""
    return np.asarray(x)[np.argmax(G, axis=0)]


def group_table(
    by: np.ndarray,
    split: np.ndarray,
    levels: Sequence[Any],
    first: dict[str, np.ndarray],
    means: dict[str, np.ndarray],
) -> list[dict[str, Any]]:
    """One row per group of ``by`` (first-seen order): each ``first`` column at the group's first item, then
    per level of ``split`` the mean of each ``means`` column over the group's items of that level
    (``<name>_<level>``; None where there are none)."""
    rows = []
    for b in dict.fromkeys(by):
        row = {name: x[by == b][0].item() for name, x in first.items()}
        for level in levels:
            m = (by == b) & (split == level)
            row.update(
                {f"{name}_{level}": float(x[m].mean()) if m.any() else None for name, x in means.items()}
            )
        rows.append(row)
    return rows


def wgroup_gap(C: np.ndarray, x: np.ndarray, G: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """B × G: each group's weighted mean of ``x`` over its items in mask ``a`` minus that over mask ``b``
    (e.g. female- minus male-pronoun items per occupation)."""
    return wgroup_mean(C, x, G, a) - wgroup_mean(C, x, G, b)


def macro_weights(labels: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Item weights that make a weighted mean over the items in ``mask`` the mean over groups (``labels``)
    of the group means: 1 / (items of the item's group within ``mask``) in ``mask``, else 0."""
    _, inv = np.unique(labels, return_inverse=True)
    m = np.asarray(mask, dtype=np.float64)
    n = np.bincount(inv, weights=m)[inv]
    with np.errstate(divide="ignore"):
        return np.where(m > 0, 1.0 / np.maximum(n, 1.0), 0.0)


def nested_scopes(
    outer: np.ndarray, outer_levels: dict[str, Any], inner: np.ndarray, inner_levels: Sequence[Any]
) -> list[tuple[str, np.ndarray]]:
    """A breakdown as (metric-name suffix, item mask): every item (""), each outer level present
    (``_<key>`` for ``outer_levels`` key -> value), each inner level present within it
    (``_<key>_<level>``)."""
    out = [("", np.ones(len(outer), dtype=bool))]
    for key, value in outer_levels.items():
        within = outer == value
        if not within.any():
            continue
        out.append((f"_{key}", within))
        out += [(f"_{key}_{v}", within & (inner == v)) for v in inner_levels if (within & (inner == v)).any()]
    return out
