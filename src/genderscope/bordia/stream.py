"""Partial co-occurrence counts that add up (the map step's output, the reduce's sum) and their files.

Counts are sums over positions, so counts of parts of a corpus add up to the whole corpus's: integer
counts identical, infinite-context (float) counts equal up to the order of the float additions. Word types
keep their first-occurrence order when partial counts are added in corpus order, as in the in-memory path.
The streaming counter that makes them is :mod:`genderscope.bordia.counter`.
"""

from __future__ import annotations

import itertools
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np

from genderscope.bordia.cooccurrence import CountConfig, Counts
from genderscope.bordia.pairs import GenderPairs

DEFAULT_BATCH_CHARS = 4_000_000


def _grow(a: np.ndarray, n: int) -> np.ndarray:
    if a.size >= n:
        return a
    out = np.zeros(max(n, 2 * a.size, 1024), dtype=a.dtype)
    out[: a.size] = a
    return out


class _Vocab(dict):
    """Word -> id, a new word getting the next id (first-occurrence order)."""

    def __missing__(self, key: str) -> int:
        i = self[key] = len(self)
        return i


@dataclass
class PartialCounts:
    """Counts of part of a corpus for one tokenisation and one or more contexts; :meth:`add` sums them.

    ``types`` in first-occurrence order; ``freq``; per context ``male``, ``female`` (int64 fixed, float64
    infinite) and ``keys`` (the authors' key set, :attr:`Counts.authors_keys`); totals in ``totals``.
    """

    contexts: tuple[str, ...]
    types: list[str] = field(default_factory=list)
    index: dict[str, int] = field(default_factory=lambda: _Vocab(), repr=False)
    freq: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    male: dict[str, np.ndarray] = field(default_factory=dict)
    female: dict[str, np.ndarray] = field(default_factory=dict)
    keys: dict[str, np.ndarray] = field(default_factory=dict)
    totals: dict[str, int] = field(
        default_factory=lambda: dict(n_tokens=0, n_male=0, n_female=0, n_segments=0, n_documents=0)
    )

    @property
    def n_types(self) -> int:
        return len(self.types)

    def _ids(self, types: Sequence[str]) -> np.ndarray:
        """Ids of ``types`` (each listed once); new types are appended in their order."""
        index, new = self.index, self.types
        if not isinstance(index, _Vocab) or len(index) != len(new):  # e.g. a part made without its index
            index = self.index = _Vocab((t, i) for i, t in enumerate(new))
        n0 = len(index)
        ids = np.fromiter(map(index.__getitem__, types), dtype=np.int64, count=len(types))
        if len(index) > n0:
            new.extend(itertools.compress(types, (ids >= n0).tolist()))
        n = len(new)
        self.freq = _grow(self.freq, n)
        for d in (self.male, self.female, self.keys):
            for ctx in list(d):
                d[ctx] = _grow(d[ctx], n)
        return ids

    def _slot(self, d: dict[str, np.ndarray], ctx: str, dtype: Any) -> np.ndarray:
        if ctx not in d:
            d[ctx] = np.zeros(max(self.freq.size, 1024), dtype=dtype)
        return d[ctx]

    def add_arrays(
        self,
        types: Sequence[str],
        freq: np.ndarray,
        per_context: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]],
        totals: dict[str, int],
    ) -> None:
        """Add counts over ``types`` (each listed once): freq and per context (male, female, keys)."""
        ids = self._ids(types)
        self.freq[ids] += freq
        for ctx, (m, f, k) in per_context.items():
            self._slot(self.male, ctx, m.dtype)[ids] += m
            self._slot(self.female, ctx, f.dtype)[ids] += f
            self._slot(self.keys, ctx, bool)[ids] |= k
        for name, v in totals.items():
            self.totals[name] += int(v)

    def add(self, other: "PartialCounts") -> None:
        """Add another part's counts (call in corpus order to keep first-occurrence order)."""
        n = other.n_types
        per = {c: (other.male[c][:n], other.female[c][:n], other.keys[c][:n]) for c in other.male}
        self.add_arrays(other.types, other.freq[:n], per, other.totals)

    def counts(self, context: str, config: CountConfig, pairs: GenderPairs) -> Counts:
        """The summed counts of ``context`` as a :class:`Counts` (what ``count_cooccurrences`` returns)."""
        n = self.n_types
        fixed = config.context == "fixed"
        empty = np.zeros(n, np.int64 if fixed else np.float64)
        male = self.male.get(context, empty)[:n].copy()
        female = self.female.get(context, empty)[:n].copy()
        keys = self.keys.get(context, np.zeros(n, bool))[:n].copy()
        t = self.totals
        return Counts(
            list(self.types),
            self.freq[:n].copy(),
            male,
            female,
            t["n_male"],
            t["n_female"],
            t["n_tokens"],
            t["n_segments"],
            t["n_documents"],
            config,
            pairs,
            keys,
        )

    # -- files ----------------------------------------------------------------------------------------
    def save(self, path: Path, meta: dict[str, Any], extra: Optional[dict[str, np.ndarray]] = None) -> None:
        """An ``.npz`` of the arrays (and ``extra`` ones) and ``meta`` (JSON), written via a temporary file
        and a rename."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        n = self.n_types
        arrays: dict[str, np.ndarray] = {
            "types": np.frombuffer("\n".join(self.types).encode("utf-8"), dtype=np.uint8),
            "freq": self.freq[:n],
            "meta": np.frombuffer(
                json.dumps({**meta, "contexts": list(self.contexts), "totals": self.totals}).encode(),
                np.uint8,
            ),
        }
        arrays.update(extra or {})
        for ctx in self.male:
            arrays[f"male.{ctx}"] = self.male[ctx][:n]
            arrays[f"female.{ctx}"] = self.female[ctx][:n]
            arrays[f"keys.{ctx}"] = self.keys[ctx][:n]
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        with open(tmp, "wb") as fh:
            np.savez(fh, **arrays)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)

    @classmethod
    def load(cls, path: Path) -> tuple["PartialCounts", dict[str, Any]]:
        """(counts, meta) of a file written by :meth:`save`."""
        with np.load(path) as z:
            meta = json.loads(z["meta"].tobytes().decode())
            raw = z["types"].tobytes().decode("utf-8")
            types = raw.split("\n") if raw else []
            out = cls(tuple(meta["contexts"]))
            out.types = types
            out.index = _Vocab((t, i) for i, t in enumerate(types))
            out.freq = z["freq"].copy()
            for ctx in meta["contexts"]:
                if f"male.{ctx}" in z:
                    out.male[ctx] = z[f"male.{ctx}"].copy()
                    out.female[ctx] = z[f"female.{ctx}"].copy()
                    out.keys[ctx] = z[f"keys.{ctx}"].copy()
            out.totals = {k: int(v) for k, v in meta["totals"].items()}
        return out, meta


def check_configs(configs: Sequence[CountConfig]) -> list[CountConfig]:
    """Resolved configs that share one tokenisation (boundary and drop set), one per context."""
    out = [c.resolved() for c in configs]
    keys = {(c.boundary, c.drop_tokens) for c in out}
    if len(keys) != 1 or len({c.context for c in out}) != len(out):
        raise ValueError("streamed configs must share boundary and drop_tokens and differ in context")
    return out
