"""Gendered co-occurrence counts in linear time (spec §3).

For gender X ∈ {M, F} every position p gets a context weight s_X[p]; c_X(w) = Σ_{p: t_p = w} s_X[p].

* ``paper`` fixed:      s[p] = #{j : 1 ≤ |j−p| ≤ k, g[j]} within the segment (prefix sums).
* ``paper`` infinite:   s[p] = Σ_{1 ≤ |j−p| ≤ D} ρ^|j−p| g[j] within the segment (exponential recurrences
  L, R with the truncation correction L[p] − ρ^(p−a)·L[a]; exact zeros where the window holds no g).
* ``reference`` fixed:  the authors' asymmetric W-gram window with anchor offset a = ⌊(W+1)/2⌋ − 2.
* ``reference`` infinite: the authors' centred W-gram, replayed in their summation order (bit-identical).

No Python loop runs over tokens; the reference replay loops over at most K rounds (K = the largest
number of gendered tokens in one window).
"""

from __future__ import annotations

import json
import os
import warnings
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

import numpy as np

from genderscope.bordia.pairs import GenderPairs
from genderscope.bordia.text import EOS, TokenStream
from genderscope.common.errors import UsageError


@dataclass(frozen=True)
class CountConfig:
    """Window geometry and context (spec §12). ``W=None`` → 21 (fixed) / 201 (infinite)."""

    geometry: str = "paper"
    context: str = "fixed"
    k: int = 10
    W: int | None = None
    decay: float = 0.95
    max_distance: int | None = 100
    boundary: str = "document"
    drop_tokens: frozenset[str] | None = None

    def resolved(self) -> "CountConfig":
        """Validate and fill mode-dependent defaults (W, drop_tokens)."""
        if self.geometry not in ("paper", "reference"):
            raise UsageError(f"geometry must be 'paper' or 'reference', got {self.geometry!r}")
        if self.context not in ("fixed", "infinite"):
            raise UsageError(f"context must be 'fixed' or 'infinite', got {self.context!r}")
        if self.boundary not in ("document", "line"):
            raise UsageError(f"boundary must be 'document' or 'line', got {self.boundary!r}")
        if not 0.0 < self.decay < 1.0:
            raise UsageError(f"decay must lie in (0, 1), got {self.decay}")
        W = self.W if self.W is not None else (21 if self.context == "fixed" else 201)
        drop = self.drop_tokens
        if drop is None:
            drop = frozenset({EOS}) if self.geometry == "paper" else frozenset()
        cfg = replace(self, W=W, drop_tokens=frozenset(drop))
        if self.geometry == "paper":
            if self.k < 1:
                raise UsageError(f"k must be ≥ 1, got {self.k}")
            if self.max_distance is not None and self.max_distance < 1:
                raise UsageError(f"max_distance must be ≥ 1 or None, got {self.max_distance}")
        else:
            if W < 3:
                raise UsageError(f"W must be ≥ 3 for the reference geometry, got {W}")
            cfg = replace(cfg, boundary="document")  # the scripts always use whole files
        return cfg

    def describe(self) -> dict[str, Any]:
        d = asdict(self)
        d["drop_tokens"] = sorted(self.drop_tokens or ())
        if self.geometry == "paper":
            d.pop("W")
            if self.context == "fixed":
                d.pop("decay"), d.pop("max_distance")
            else:
                d.pop("k")
        else:
            d.pop("k"), d.pop("max_distance")
            if self.context == "fixed":
                d.pop("decay")
        return d


@dataclass
class Counts:
    """Per-type counts: ``types`` (first-occurrence order), ``freq``, ``c_male``, ``c_female``; totals;
    config.

    Fixed-context counts are int64, infinite-context counts float64. ``authors_keys`` marks the types of
    documents with at least W tokens (the authors' ``all_words`` key set).
    """

    types: list[str]
    freq: np.ndarray
    c_male: np.ndarray
    c_female: np.ndarray
    n_male: int
    n_female: int
    n_tokens: int
    n_segments: int
    n_documents: int
    config: CountConfig
    pairs: GenderPairs
    authors_keys: np.ndarray = field(repr=False, default=None)  # type: ignore[assignment]

    def as_dict(self) -> dict[str, tuple[Any, Any]]:
        """word -> (c_M, c_F) as Python numbers."""
        return {w: (self.c_male[i].item(), self.c_female[i].item()) for i, w in enumerate(self.types)}

    def summary(self) -> dict[str, Any]:
        return {
            "n_types": len(self.types),
            "n_tokens": self.n_tokens,
            "n_segments": self.n_segments,
            "n_documents": self.n_documents,
            "n_male_tokens": self.n_male,
            "n_female_tokens": self.n_female,
            **self.config.describe(),
            **self.pairs.describe(),
        }

    def write_tsv(self, path: Path) -> None:
        """``word, freq, male, female`` (floats in round-trip ``repr`` form), first-occurrence order."""
        lines = ["word\tfreq\tmale\tfemale"]
        cm, cf = self.c_male.tolist(), self.c_female.tolist()
        for w, n, m, f in zip(self.types, self.freq.tolist(), cm, cf):
            lines.append(f"{w}\t{n}\t{m!r}\t{f!r}")
        atomic_write_text(path, "\n".join(lines) + "\n")

    def authors_json(self) -> dict[str, dict[str, Any]]:
        """``{word: {"f": c_M, "m": c_F}}``: the authors' swapped key names over their key set (§3.8)."""
        keys = self.authors_keys if self.authors_keys is not None else np.ones(len(self.types), bool)
        cm, cf = self.c_male.tolist(), self.c_female.tolist()
        return {w: {"f": cm[i], "m": cf[i]} for i, w in enumerate(self.types) if keys[i]}


def read_authors_json(path: Path) -> dict[str, tuple[Any, Any]]:
    """word -> (c_M, c_F) from an ``all_words`` JSON in the authors' layout: key ``f`` = male, ``m`` = female
    (their scripts read pair column 1, the male words, as ``f``; spec §2.3), for diffs with
    :meth:`Counts.as_dict`."""
    from genderscope.common.errors import DataError

    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(f"{path}: no such file") from None
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}:{exc.lineno}: invalid JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise DataError(f"{path}: expected {{word: {{'f': male, 'm': female}}}}")
    out: dict[str, tuple[Any, Any]] = {}
    for word, v in data.items():
        if not isinstance(v, dict) or set(v) != {"f", "m"}:
            raise DataError(f"{path}: entry {word!r} is not {{'f': male, 'm': female}}")
        out[word] = (v["f"], v["m"])
    return out


def atomic_write_text(path: Path, text: str) -> None:
    """Write via a temporary file and rename (readers never see a partial file)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def atomic_write_json(path: Path, obj: Any) -> None:
    from genderscope.core.jsonutil import clean_json

    atomic_write_text(path, json.dumps(clean_json(obj), indent=1, ensure_ascii=False) + "\n")


# --------------------------------------------------------------------------------------------------
# per-position weights (all arrays are over the concatenated segments; S/E = segment start/end)


def _prefix(g: np.ndarray) -> np.ndarray:
    P = np.zeros(g.size + 1, dtype=np.int64)
    np.cumsum(g, out=P[1:])
    return P


def paper_fixed_weights(g: np.ndarray, S: np.ndarray, E: np.ndarray, k: int) -> np.ndarray:
    """s[p] = P[min(E, p+k+1)] − P[max(S, p−k)] − g[p] (int64)."""
    return paper_fixed_window(S, E, k)(g)


def paper_fixed_window(S: np.ndarray, E: np.ndarray, k: int) -> Callable[[np.ndarray], np.ndarray]:
    """:func:`paper_fixed_weights` as a function of ``g``, its window bounds computed once (both genders)."""
    p = np.arange(S.size, dtype=np.int64)
    hi, lo = np.minimum(E, p + k + 1), np.maximum(S, p - k)

    def weights(g: np.ndarray) -> np.ndarray:
        P = _prefix(g)
        return P[hi] - P[lo] - g

    return weights


def _left_sums(g: np.ndarray, rho: float) -> np.ndarray:
    """L[p] = Σ_{j<p} ρ^(p−j) g[j] over the whole array (first-order recurrence)."""
    from scipy.signal import lfilter

    x = np.zeros(g.size, dtype=np.float64)
    x[1:] = g[:-1]
    return lfilter([rho], [1.0, -rho], x)


def paper_infinite_weights(
    g: np.ndarray, S: np.ndarray, E: np.ndarray, rho: float, max_distance: int | None
) -> np.ndarray:
    """s[p] = Σ_{1≤|j−p|≤D, S≤j<E} ρ^|j−p| g[j] via recurrences; exact zeros where the window has no g."""
    return paper_infinite_window(S, E, rho, max_distance)(g)


def paper_infinite_window(
    S: np.ndarray, E: np.ndarray, rho: float, max_distance: int | None
) -> Callable[[np.ndarray], np.ndarray]:
    """:func:`paper_infinite_weights` as a function of ``g``; window bounds [a, b] and the decay factors
    ρ^(p−a), ρ^(b−p) computed once (both genders)."""
    n = S.size
    p = np.arange(n, dtype=np.int64)
    if max_distance is None:
        a, b = S, E - 1
        decay_a = np.power(rho, (p - a).astype(np.float64))
        decay_b = np.power(rho, (b - p).astype(np.float64))
    else:  # distances ≤ D: look the powers up
        a, b = np.maximum(S, p - max_distance), np.minimum(E - 1, p + max_distance)
        powers = rho ** np.arange(max_distance + 1, dtype=np.float64)
        decay_a, decay_b = powers[p - a], powers[b - p]
    b1 = b + 1

    def weights(g: np.ndarray) -> np.ndarray:
        if n == 0:
            return np.zeros(0)
        L = _left_sums(g, rho)
        R = _left_sums(g[::-1], rho)[::-1]
        # remove the part beyond the window [a, b] (earlier/later segments, distance > D): ρ^(p−a)·L[a]
        left = L - decay_a * L[a]
        right = R - decay_b * R[b]
        P = _prefix(g)
        left[(P[:-1] - P[a]) == 0] = 0.0
        right[(P[b1] - P[1:]) == 0] = 0.0
        return left + right

    return weights


def reference_fixed_weights(g: np.ndarray, S: np.ndarray, E: np.ndarray, W: int) -> np.ndarray:
    """The scripts' W-gram window: W−1−a positions before, a after, the target included (int64)."""
    a = (W + 1) // 2 - 2
    p = np.arange(g.size, dtype=np.int64)
    rel = p - S
    n = E - S
    anchor_ok = (rel >= a) & (rel <= n - W + a)
    P = _prefix(np.where(anchor_ok, g, 0))
    lo = np.maximum(S, p + a - W + 1)
    hi = np.minimum(E - 1, p + a)
    return np.where(hi >= lo, P[np.minimum(hi + 1, g.size)] - P[np.minimum(lo, g.size)], 0)


def reference_infinite_weights(
    g: np.ndarray, S: np.ndarray, E: np.ndarray, W: int, rho: float
) -> tuple[np.ndarray, np.ndarray]:
    """(centre positions, their weights), replaying the scripts' additions in their order (bit-identical)."""
    c = (W - 1) // 2
    r = W - 1 - c
    p = np.arange(g.size, dtype=np.int64)
    rel = p - S
    centres = p[(rel >= c) & (rel <= (E - S) - W + c)]
    Q = np.flatnonzero(g)
    table = np.array([0.0] + [pow(rho, d) for d in range(1, W + 1)], dtype=np.float64)
    s = np.zeros(centres.size, dtype=np.float64)
    lo = np.searchsorted(Q, centres - c, side="left")
    hi = np.searchsorted(Q, centres + r, side="right")
    active = np.flatnonzero(hi > lo)
    q = 0
    while active.size:
        pos = Q[lo[active] + q]
        s[active] += table[np.abs(pos - centres[active])]
        q += 1
        active = active[lo[active] + q < hi[active]]
    return centres, s


# --------------------------------------------------------------------------------------------------


def count_cooccurrences(stream: TokenStream, pairs: GenderPairs, config: CountConfig | None = None) -> Counts:
    """Co-occurrence counts of every type with the male and female words of ``pairs`` (spec §3)."""
    cfg = (config or CountConfig()).resolved()
    if stream.boundary != cfg.boundary or stream.drop_tokens != cfg.drop_tokens:
        raise UsageError(
            f"token stream was cut with boundary={stream.boundary!r}, drop_tokens="
            f"{sorted(stream.drop_tokens)}; the config needs boundary={cfg.boundary!r}, "
            f"drop_tokens={sorted(cfg.drop_tokens or ())}"
        )
    if (
        cfg.geometry == "paper"
        and cfg.context == "infinite"
        and cfg.max_distance is None
        and cfg.boundary == "document"
    ):
        warnings.warn(
            "untruncated infinite context with document boundaries: nearly every word becomes "
            "scorable and μ, σ depend on document length (spec §3.3); consider --max-distance or "
            "--boundary line",
            stacklevel=2,
        )
    n_types = len(stream.types)
    is_m = np.fromiter((t in pairs.male for t in stream.types), dtype=bool, count=n_types)
    is_f = np.fromiter((t in pairs.female for t in stream.types), dtype=bool, count=n_types)
    freq, c_male, c_female, n_male, n_female = count_ids(stream.ids, is_m, is_f, stream, cfg)
    keys = authors_keys(stream, n_types, cfg)
    return Counts(
        list(stream.types),
        freq,
        c_male,
        c_female,
        n_male,
        n_female,
        stream.n_tokens,
        int(stream.seg_lengths.size),
        int(stream.doc_lengths.size),
        cfg,
        pairs,
        keys,
    )


def count_ids(
    ids: np.ndarray, is_m: np.ndarray, is_f: np.ndarray, stream: TokenStream, cfg: CountConfig
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, int]:
    """(freq, c_M, c_F, n_M, n_F) over type ids ``0 … is_m.size − 1`` for the segments of ``stream``
    (``ids``: its token ids; ``is_m``/``is_f``: gender of each type); ``cfg`` resolved."""
    n_types = is_m.size
    gm = is_m[ids].astype(np.int64)
    gf = is_f[ids].astype(np.int64)
    S, E = stream.position_bounds()
    freq = np.bincount(ids, minlength=n_types).astype(np.int64)
    out: list[np.ndarray] = []
    if cfg.geometry == "paper":  # one window per batch, applied to both genders
        if cfg.context == "fixed":
            fixed = paper_fixed_window(S, E, cfg.k)
            out = [np.bincount(ids, weights=fixed(g), minlength=n_types).astype(np.int64) for g in (gm, gf)]
        else:
            decayed = paper_infinite_window(S, E, cfg.decay, cfg.max_distance)
            out = [np.bincount(ids, weights=decayed(g), minlength=n_types) for g in (gm, gf)]
        return freq, out[0], out[1], int(gm.sum()), int(gf.sum())
    assert cfg.W is not None
    for g in (gm, gf):
        if cfg.context == "fixed":
            w = reference_fixed_weights(g, S, E, cfg.W)
            out.append(np.bincount(ids, weights=w, minlength=n_types).astype(np.int64))
        else:
            centres, w = reference_infinite_weights(g, S, E, cfg.W, cfg.decay)
            out.append(np.bincount(ids[centres], weights=w, minlength=n_types))
    return freq, out[0], out[1], int(gm.sum()), int(gf.sum())


def authors_keys(stream: TokenStream, n_types: int, cfg: CountConfig) -> np.ndarray:
    """The authors' key set: every type of every document with at least W tokens (paper: every type)."""
    W = (cfg.W or 0) if cfg.geometry == "reference" else 0
    long_doc = stream.doc_lengths >= W
    seg_ok = long_doc[stream.seg_doc] if stream.seg_doc.size else np.zeros(0, bool)
    tok_ok = np.repeat(seg_ok, stream.seg_lengths)
    keys = np.zeros(n_types, dtype=bool)
    keys[stream.ids[tok_ok]] = True
    return keys
