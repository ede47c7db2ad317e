"""Streaming co-occurrence counts in bounded memory: a document may arrive in any number of pieces.

Every window of spec §3 reaches a bounded number of positions on each side (its *halo* H: k, D, W, or for
the untruncated infinite context the distance beyond which every term is below half the smallest float64).
So a long document is counted piece by piece: the last 2·H tokens of a segment still open at a piece's end
are carried into the next piece, the positions within H of the edge are counted there, and every position
is counted exactly once, with its whole window: integer counts equal the whole-document counts, float sums
agree to rounding (and in one worker the additions even run in position order, so the reference geometry's
infinite counts stay bit-identical, spec §3.5).

A *byte range* of a file (many workers sharing one large file) starts inside a segment whose beginning
it cannot see: its first H positions are left uncounted and exported as its **head** (first 2·H tokens),
the segment open at its end as its **tail** (last 2·H tokens); :class:`SeamJoiner` counts the positions
at each seam when the ranges' counts are added in file order.

Memory: one piece (``piece_bytes``), the carry (2·H tokens) and arrays over the vocabulary.
"""

from __future__ import annotations

import itertools
import math
import warnings
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional, Sequence

import numpy as np

from genderscope.bordia import native
from genderscope.bordia.cooccurrence import CountConfig
from genderscope.bordia.pairs import GenderPairs
from genderscope.bordia.stream import DEFAULT_BATCH_CHARS, PartialCounts, _grow, check_configs
from genderscope.bordia.text import EOS

FAR = native.FAR
_warned = False
#: per context: counts of male and female context (int64 or float64) and their float sums' compensation
Accumulator = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def warn_if_slow() -> None:
    """One warning per process when the kernels run as plain Python (numba not installed)."""
    global _warned
    if not native.HAVE_NUMBA and not _warned:
        _warned = True
        warnings.warn(
            "numba is not installed: corpus counting runs in plain Python, about 100x slower "
            "(pip install 'genderscope[scale]')",
            stacklevel=3,
        )


# ------------------------------------------------------------------------------------------------ windows


def decay_horizon(rho: float) -> int:
    """Smallest H with ρ^(H+1)/(1 − ρ) < 2^-1075: every term of the infinite sum beyond distance H together
    is below half the smallest float64 (for ρ = 0.95: 14,587)."""
    return int(math.ceil((-1075 * math.log(2) + math.log(1 - rho)) / math.log(rho)))


@dataclass(frozen=True)
class Window:
    """One count config as kernel arguments: the window, its weights T[d], validity offsets, halo."""

    context: str
    halo: int
    W: int  # authors' key set: documents with at least W tokens (0: every document)
    decay: Optional[float] = None  # untruncated infinite context: ρ (kernel decay_counts)
    left: int = 0
    right: int = 0
    T: np.ndarray = field(default_factory=lambda: np.zeros(1))
    src: tuple[int, int] = (-FAR, -FAR)
    tgt: tuple[int, int] = (-FAR, -FAR)

    @property
    def dtype(self) -> Any:
        return np.int64 if self.context == "fixed" else np.float64

    @property
    def compensate(self) -> bool:
        """Compensated float sums (the paper's infinite context); the reference geometry adds plainly, in
        position order, as the authors' script does (bit-identical in one stream)."""
        return self.context == "infinite" and self.W == 0


def window_of(cfg: CountConfig) -> Window:
    """The :class:`Window` of a resolved config (spec §3.2–3.5)."""
    rho = cfg.decay
    if cfg.geometry == "paper":
        if cfg.context == "fixed":
            T = np.array([0] + [1] * cfg.k, dtype=np.int64)
            return Window("fixed", cfg.k, 0, left=cfg.k, right=cfg.k, T=T)
        if cfg.max_distance is None:
            return Window("infinite", decay_horizon(rho), 0, decay=rho)
        D = cfg.max_distance
        T = np.array([0.0] + [pow(rho, d) for d in range(1, D + 1)], dtype=np.float64)
        return Window("infinite", D, 0, left=D, right=D, T=T)
    W = int(cfg.W or 0)
    if cfg.context == "fixed":  # anchors a ≤ rel ≤ n − W + a add 1 to the W positions [i − a, i + W − 1 − a]
        a = (W + 1) // 2 - 2
        T = np.ones(W, dtype=np.int64)
        return Window("fixed", W, W, left=W - 1 - a, right=a, T=T, src=(a, W - a))
    c = (W - 1) // 2  # centres c ≤ rel ≤ n − W + c sum pow(ρ, |j − i|) over [i − c, i + W − 1 − c]
    T = np.array([0.0] + [pow(rho, d) for d in range(1, W + 1)], dtype=np.float64)
    return Window("infinite", W, W, left=c, right=W - 1 - c, T=T, tgt=(c, W - c))


def count_window(
    w: Window,
    buf: np.ndarray,
    gend: np.ndarray,
    count: np.ndarray,
    seg: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    acc: Accumulator,
) -> None:
    """Add the window counts of the ``count``-ed positions of ``buf`` to ``acc``."""
    lo, hi, vs, ve = seg
    m, f, cm, cf = acc
    if w.decay is not None:
        native.decay_counts(buf, gend, count, lo, hi, w.decay, w.halo, m, f, cm, cf)
    else:
        native.window_counts(
            buf, gend, count, lo, hi, vs, ve, w.left, w.right, w.T, w.src[0], w.src[1], w.tgt[0], w.tgt[1],
            m, f, cm, cf, w.compensate,
        )  # fmt: skip


# ------------------------------------------------------------------------------------------------ the carry


@dataclass
class Chain:
    """The segment open at the end of what was counted: its last tokens and what of them is uncounted.

    ``ids``: its last tokens (type ids); ``pending[ctx]``: which of them are not counted yet; ``length``:
    its tokens so far; ``known``: whether its start was seen (a byte range can start inside it); ``head``:
    its first 2·H tokens while it is unknown-start (exported, never counted here).
    """

    ids: np.ndarray
    pending: dict[str, np.ndarray]
    length: int = 0
    known: bool = True
    head: list[np.ndarray] = field(default_factory=list)

    @property
    def start(self) -> int:
        """Position of ``ids[0]`` in the segment (chain) so far."""
        return self.length - int(self.ids.size)


def _bounds(lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    hi = np.cumsum(lengths, dtype=np.int64)
    return hi - lengths, hi


class WindowCounter:
    """The windows of one or more configs over a token stream given as pieces of segments.

    :meth:`process` takes a piece's kept ids and segment lengths (the first may continue the open chain,
    the last may stay open) and adds every position whose window is complete to the accumulators.
    """

    def __init__(self, windows: Sequence[Window]):
        self.windows = list(windows)
        self.hmax = max(w.halo for w in self.windows)
        self.chain: Optional[Chain] = None
        self.closed_head: Optional[tuple[np.ndarray, int]] = None  # (head ids, segment length)

    def open_unknown(self) -> None:
        """Start inside a segment whose beginning is elsewhere (a byte range that starts mid-segment)."""
        empty = np.zeros(0, np.int64)
        self.chain = Chain(empty, {w.context: np.zeros(0, bool) for w in self.windows}, 0, False)

    def process(
        self,
        ids: np.ndarray,
        seg_len: np.ndarray,
        first_continues: bool,
        last_open: bool,
        gend: np.ndarray,
        acc: dict[str, Accumulator],
        pending: Optional[dict[str, np.ndarray]] = None,
    ) -> None:
        """Count a piece: ``ids`` (kept tokens), ``seg_len`` (its segments); ``pending[ctx]`` marks which new
        positions still need counting (default: all)."""
        chain = self.chain
        if chain is not None and not (first_continues and seg_len.size):
            if seg_len.size or not first_continues or not last_open:
                self.close(gend, acc)
                chain = None
            else:
                return  # nothing new, the chain stays open
        if not seg_len.size:
            return
        cont = chain is not None
        if cont:
            assert chain is not None
            buf = np.concatenate([chain.ids, ids.astype(np.int64, copy=False)])
            lengths = seg_len.astype(np.int64).copy()
            lengths[0] += chain.ids.size
        else:
            buf = ids.astype(np.int64, copy=False)
            lengths = seg_len.astype(np.int64)
        lo, hi = _bounds(lengths)
        vs, ve = lo.copy(), hi.copy()
        if cont:
            assert chain is not None
            vs[0] = -chain.start if chain.known else -FAR
        if last_open:
            ve[-1] = FAR
        n_prev = chain.ids.size if cont else 0  # type: ignore[union-attr]
        chain_pos0 = chain.start if cont else 0  # type: ignore[union-attr]
        unknown = cont and not chain.known  # type: ignore[union-attr]
        new_pending: dict[str, np.ndarray] = {}
        for w in self.windows:
            cnt = np.ones(buf.size, dtype=bool)
            if cont:
                cnt[:n_prev] = chain.pending[w.context]  # type: ignore[union-attr]
            if pending is not None:
                cnt[n_prev:] = pending[w.context]
            never = np.zeros(buf.size, bool)
            if unknown:  # the first H of an unknown-start segment: the merge counts them
                never[: max(0, min(int(hi[0]), w.halo - chain_pos0))] = True
            later = np.zeros(buf.size, bool)
            if last_open:
                later[max(int(lo[-1]), int(hi[-1]) - w.halo) : int(hi[-1])] = True
            now = cnt & ~never & ~later
            count_window(w, buf, gend, now.view(np.uint8), (lo, hi, vs, ve), acc[w.context])
            new_pending[w.context] = cnt & later & ~never
        if unknown:
            self._fill_head(buf[: int(hi[0])], closed=not (last_open and lengths.size == 1))
        if last_open:
            keep_from = max(int(lo[-1]), int(hi[-1]) - 2 * self.hmax)
            single = lengths.size == 1
            length = (chain.length if cont else 0) + int(seg_len[-1]) if single else int(lengths[-1])  # type: ignore[union-attr]
            known = not unknown if single else True
            head = chain.head if (single and unknown) else []  # type: ignore[union-attr]
            self.chain = Chain(
                buf[keep_from : int(hi[-1])].copy(),
                {c: p[keep_from : int(hi[-1])].copy() for c, p in new_pending.items()},
                length,
                known,
                head,
            )
        else:
            self.chain = None

    def _fill_head(self, seg_tokens: np.ndarray, closed: bool) -> None:
        """Collect the first 2·H tokens of the unknown-start chain (``seg_tokens``: its tokens in this
        buffer, carry included)."""
        chain = self.chain
        assert chain is not None
        have = sum(h.size for h in chain.head)
        want = 2 * self.hmax
        if have < want:
            # seg_tokens starts at chain position chain.start; the head needs positions have … want − 1
            offset = have - chain.start
            if offset >= 0:
                chain.head.append(seg_tokens[offset : offset + want - have].copy())
        if closed:
            length = chain.length + (int(seg_tokens.size) - int(chain.ids.size))
            self.closed_head = (np.concatenate(chain.head) if chain.head else np.zeros(0, np.int64), length)

    def close(self, gend: np.ndarray, acc: dict[str, Accumulator]) -> None:
        """The open chain's segment ends: count its pending positions with the true end."""
        chain = self.chain
        if chain is None:
            return
        self.chain = None
        n = chain.ids.size
        if n:
            seg = (
                np.zeros(1, np.int64),
                np.array([n], np.int64),
                np.array([-chain.start if chain.known else -FAR], np.int64),
                np.array([n], np.int64),
            )
            for w in self.windows:
                count_window(w, chain.ids, gend, chain.pending[w.context].view(np.uint8), seg, acc[w.context])
        if not chain.known:
            head = np.concatenate(chain.head) if chain.head else np.zeros(0, np.int64)
            self.closed_head = (head, chain.length)


# ------------------------------------------------------------------------------------------------ vocabulary


class Vocabulary:
    """Word types as exact UTF-8 byte strings in a native hash table; ids in first-occurrence order after
    the ``reserved`` ones (the dropped tokens, ids 0 … len(reserved) − 1)."""

    def __init__(self, reserved: Sequence[str] = ()):
        self.table = np.full(1 << 17, -1, dtype=np.int64)  # (hash, id) pairs, load ≤ 1/2
        self.thash = np.zeros(1 << 15, dtype=np.uint64)
        self.tinfo = np.zeros(2 << 15, dtype=np.int64)  # (arena offset, byte length) per type
        self.arena = np.zeros(1 << 16, dtype=np.uint8)
        self.n = 0
        self.used = 0
        self._words: list[str] = []
        if reserved:
            data = " ".join(reserved).encode("utf-8", "surrogatepass")
            ids = self.tokenize(data, np.zeros(1, np.int64), False, 1, 0, 0, -1)[0]
            assert ids.tolist() == list(range(len(reserved))), reserved

    @property
    def words(self) -> list[str]:
        """The word types (ids 0 … n − 1), decoded from the arena where they are kept space-separated."""
        n0 = len(self._words)
        if self.n > n0:
            blob = self.arena[int(self.tinfo[2 * n0]) : self.used - 1].tobytes()
            self._words.extend(blob.decode("utf-8", "surrogatepass").split(" "))
        return self._words

    def ids(self, words: Sequence[str]) -> np.ndarray:
        """Ids of ``words`` (−1 for a word not seen)."""
        parts = [w.encode("utf-8", "surrogatepass") for w in words]
        starts = np.zeros(len(parts) + 1, np.int64)
        np.cumsum([len(p) for p in parts], out=starts[1:])
        blob = np.frombuffer(b"".join(parts) or b" ", np.uint8)
        with np.errstate(over="ignore"):
            return native.find_ids(blob, starts, self.table, self.tinfo, self.arena)

    def _grow(self) -> None:
        if self.n + 1 >= self.thash.size:
            self.thash = _grow(self.thash, 2 * self.thash.size)
            self.tinfo = _grow(self.tinfo, 2 * self.tinfo.size)
        if 4 * (self.n + 1) > self.table.size:
            self.table = np.full(2 * self.table.size, -1, dtype=np.int64)
            native.rehash(self.table, self.thash, self.n)

    def tokenize(
        self,
        data: bytes,
        doc_starts: np.ndarray,
        line_mode: bool,
        cut0: int,
        cont0: int,
        ndrop: int,
        eos_id: int,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, bool, int]:
        """(kept ids, segment lengths, segment documents, kept tokens per document, whether the first
        segment continues the open one, pending cut at the end) of UTF-8 ``data`` (see
        :func:`genderscope.bordia.native.tokenize`)."""
        buf = np.frombuffer(data, dtype=np.uint8)
        cap = buf.size // 2 + 1
        out = np.empty(cap, np.int32)
        seg_len = np.empty(cap, np.int64)
        seg_doc = np.empty(cap, np.int64)
        st = np.zeros(native.STATE_SIZE, np.int64)
        st[native.S_CUT], st[native.S_FIRSTCONT] = cut0, cont0
        if self.arena.size < self.used + buf.size + cap:
            self.arena = _grow(self.arena, self.used + buf.size + cap)
        while True:
            st[native.S_NTYPES], st[native.S_ARENA] = self.n, self.used
            with np.errstate(over="ignore"):  # the hash wraps around (plain Python: numpy scalars warn)
                native.tokenize(
                    buf, doc_starts, line_mode, ndrop, eos_id, st, self.table, self.thash, self.tinfo,
                    self.arena, out, seg_len, seg_doc,
                )  # fmt: skip
            self.n, self.used = int(st[native.S_NTYPES]), int(st[native.S_ARENA])
            if st[native.S_STATUS] == 0:
                break
            self._grow()
        nout, nseg = int(st[native.S_NOUT]), int(st[native.S_NSEG])
        first_cont = bool(st[native.S_FIRSTCONT])  # no cut before the first kept token (or the end)
        seg_len, seg_doc = seg_len[:nseg], seg_doc[:nseg]
        doc_len = np.bincount(seg_doc, weights=seg_len, minlength=max(1, doc_starts.size)).astype(np.int64)
        return out[:nout], seg_len, seg_doc, doc_len, first_cont, int(st[native.S_CUT])


# ------------------------------------------------------------------------------------------------ a stream


@dataclass
class Seam:
    """What a byte range leaves to the merge (ids are the range's type ids).

    ``head``: the first 2·H tokens of its first segment when the range starts inside one, ``head_len``
    that segment's length in the range (−1: it is still open at the range's end, i.e. ``tail`` is the
    same segment); ``tail``: the open last segment's last tokens, with ``tail_pending[ctx]`` (uncounted),
    ``tail_len`` (its tokens in the range); ``doc_len``, ``doc_keys``: the range's part of a document
    that continues beyond it (tokens; types whose key status waits for the document's length).
    """

    head: Optional[np.ndarray] = None
    head_len: int = -1
    tail: Optional[np.ndarray] = None
    tail_pending: dict[str, np.ndarray] = field(default_factory=dict)
    tail_len: int = 0
    tail_known: bool = True
    doc_len: int = 0
    doc_keys: Optional[np.ndarray] = None

    def arrays(self) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        if self.head is not None:
            out["seam.head"] = self.head
        if self.tail is not None:
            out["seam.tail"] = self.tail
            for ctx, p in self.tail_pending.items():
                out[f"seam.tail_pending.{ctx}"] = p
        if self.doc_keys is not None:
            out["seam.doc_keys"] = self.doc_keys
        return out

    def meta(self) -> dict[str, Any]:
        return {
            "head_len": self.head_len,
            "tail_len": self.tail_len,
            "tail_known": self.tail_known,
            "doc_len": self.doc_len,
        }

    @classmethod
    def load(cls, z: Any, meta: dict[str, Any]) -> "Seam":
        files = set(z.files)
        pend = {k.split(".", 2)[2]: z[k].astype(bool) for k in files if k.startswith("seam.tail_pending.")}
        return cls(
            z["seam.head"].astype(np.int64) if "seam.head" in files else None,
            int(meta["head_len"]),
            z["seam.tail"].astype(np.int64) if "seam.tail" in files else None,
            pend,
            int(meta["tail_len"]),
            bool(meta["tail_known"]),
            int(meta["doc_len"]),
            z["seam.doc_keys"].astype(np.int64) if "seam.doc_keys" in files else None,
        )


class StreamCounter:
    """Counts a corpus given as UTF-8 pieces (:meth:`feed`) or whole documents (:meth:`feed_texts`) for
    configs sharing one tokenisation; :meth:`result` gives the :class:`PartialCounts` and the
    :class:`Seam` of a byte range that starts inside a document (``in_document``; ``in_segment``: inside a
    segment too) or ends inside one."""

    def __init__(
        self,
        pairs: GenderPairs,
        configs: Sequence[CountConfig],
        in_document: bool = False,
        in_segment: bool = False,
    ):
        warn_if_slow()
        self.configs = check_configs(configs)
        self.pairs = pairs
        cfg0 = self.configs[0]
        self.line = cfg0.boundary == "line"
        drop = set(cfg0.drop_tokens or ()) | ({EOS} if self.line else set())
        self.reserved = sorted(d for d in drop if d.split() == [d])  # only single tokens can ever match
        self.eos_id = self.reserved.index(EOS) if self.line and EOS in self.reserved else -1
        self.vocab = Vocabulary(self.reserved)
        self.windows = [window_of(c) for c in self.configs]
        self.wmax = max(w.W for w in self.windows)
        self.counter = WindowCounter(self.windows)
        n = 1024
        self.gend = np.zeros(n, np.uint8)
        self.freq = np.zeros(n, np.int64)
        self.acc = {w.context: tuple(np.zeros(n, w.dtype) for _ in range(4)) for w in self.windows}
        self.keys = {w.context: np.zeros(n, bool) for w in self.windows}
        self.totals = dict(n_tokens=0, n_male=0, n_female=0, n_segments=0, n_documents=0)
        self.cut = 1  # a cut is pending at the end of what was fed (the next document starts fresh)
        self.doc_len = 0  # kept tokens of the open document so far
        self.doc_keys: list[np.ndarray] = []  # its type ids while it is shorter than the largest W
        self.resumed_from = 0  # stream bytes skipped on a resumed read (a checkpoint's)
        self.flagged = 0
        self.unflagged = sorted((pairs.male | pairs.female) - set(self.reserved))  # gendered words not seen
        self.ended = True  # the last piece ended its document (nothing open)
        self.in_document = in_document or in_segment
        self.doc_known = not self.in_document
        if in_segment:
            self.counter.open_unknown()
            self.cut = 0

    def _grow(self) -> None:
        n = self.vocab.n
        if n > self.gend.size:
            size = max(n, 2 * self.gend.size)
            self.gend = _grow(self.gend, size)
            self.freq = _grow(self.freq, size)
            self.acc = {c: tuple(_grow(a, size) for a in arrays) for c, arrays in self.acc.items()}
            self.keys = {c: _grow(k, size) for c, k in self.keys.items()}
        if self.flagged < n and self.unflagged:  # look the gendered words not seen yet up
            ids = self.vocab.ids(self.unflagged)
            found = ids >= 0
            for w, i in zip(itertools.compress(self.unflagged, found), ids[found].tolist()):
                self.gend[i] = 1 if w in self.pairs.male else 2
            self.unflagged = list(itertools.compress(self.unflagged, ~found))
        self.flagged = n

    def feed_texts(self, texts: Sequence[str]) -> None:
        """Whole documents (newline-normalised text)."""
        if not texts:
            return
        parts = [t.encode("utf-8", "surrogatepass") for t in texts]
        starts = np.zeros(len(parts), np.int64)
        if len(parts) > 1:
            np.cumsum([len(p) + 1 for p in parts[:-1]], out=starts[1:])
        self.feed(b"\n".join(parts), starts, continues=False, ends=True)

    def feed(self, data: bytes, doc_starts: np.ndarray, continues: bool, ends: bool) -> None:
        """UTF-8 ``data`` holding documents that start at byte offsets ``doc_starts`` (the first at 0);
        ``continues``: the first continues the open document; ``ends``: the last ends with ``data``. A
        piece must end at whitespace unless it ends its document (no token spans two pieces)."""
        cut0 = self.cut if continues else 1
        ids, seg_len, seg_doc, doc_len, first_cont, end_cut = self.vocab.tokenize(
            data, doc_starts, self.line, cut0, int(continues and not cut0), len(self.reserved), self.eos_id
        )
        self._grow()
        ids64 = ids.astype(np.int64)
        self._totals(ids64, seg_len, doc_starts, continues, first_cont)
        last_open = not ends and not end_cut
        self.counter.process(ids64, seg_len, first_cont, last_open, self.gend, self.acc)
        self.cut = 1 if ends else end_cut
        self.ended = ends
        if self.wmax:
            self._keys(ids64, doc_len, continues, ends)

    def _totals(
        self, ids: np.ndarray, seg_len: np.ndarray, doc_starts: np.ndarray, cont: bool, first: bool
    ) -> None:
        t = self.totals
        self.freq[: self.vocab.n] += np.bincount(ids, minlength=self.vocab.n)
        g = np.bincount(self.gend[ids], minlength=3)
        t["n_tokens"] += int(ids.size)
        t["n_male"] += int(g[1])
        t["n_female"] += int(g[2])
        t["n_segments"] += int(seg_len.size) - int(first and seg_len.size > 0)
        t["n_documents"] += int(doc_starts.size) - int(cont)

    def _keys(self, ids: np.ndarray, doc_len: np.ndarray, cont: bool, ends: bool) -> None:
        """The authors' key set (spec §3.8): types of documents with at least W tokens; a document seen in
        pieces keeps its types until it has W tokens."""
        edges = np.concatenate([[0], np.cumsum(doc_len)])
        last = doc_len.size - 1
        for d in range(doc_len.size):
            part = ids[edges[d] : edges[d + 1]]
            if d > 0 or not cont:
                self.doc_len, self.doc_keys, self.doc_known = 0, [], True
            self.doc_len += int(part.size)
            open_now = d == last and not ends
            for w in self.windows:
                if w.W and self.doc_len >= w.W:
                    self.keys[w.context][part] = True
                    for p in self.doc_keys:
                        self.keys[w.context][p] = True
            if self.doc_len < self.wmax and (open_now or not self.doc_known):
                self.doc_keys.append(part)
            else:
                self.doc_keys = []

    def result(self) -> tuple[PartialCounts, Optional[Seam]]:
        """The counts over the kept word types (first-occurrence order), and the seam of a byte range that
        starts or ends inside a document (None otherwise)."""
        tail = None
        if self.ended:
            self.counter.close(self.gend, self.acc)
        else:
            tail, self.counter.chain = self.counter.chain, None
        r = len(self.reserved)
        n = self.vocab.n
        part = PartialCounts(tuple(w.context for w in self.windows))
        part.types = self.vocab.words[r:]
        part.freq = self.freq[r:n].copy()
        for w in self.windows:
            m, f, cm, cf = self.acc[w.context]
            part.male[w.context], part.female[w.context] = m[r:n] + cm[r:n], f[r:n] + cf[r:n]
            part.keys[w.context] = self.keys[w.context][r:n].copy() if w.W else np.ones(n - r, bool)
        part.totals = dict(self.totals)
        head = self.counter.closed_head
        if tail is not None and not tail.known:  # one segment through the whole range
            head = (np.concatenate(tail.head) if tail.head else np.zeros(0, np.int64), -1)
        if self.ended and not self.in_document:
            return part, None
        seam = Seam()
        if head is not None:
            seam.head, seam.head_len = head[0] - r, int(head[1])
        if tail is not None:
            seam.tail = tail.ids - r
            seam.tail_pending = dict(tail.pending)
            seam.tail_len, seam.tail_known = tail.length, tail.known
        seam.doc_len = self.doc_len
        keys = np.concatenate(self.doc_keys) if self.doc_keys else np.zeros(0, np.int64)
        seam.doc_keys = np.unique(keys) - r
        return part, seam


class SeamJoiner:
    """Adds the partial counts of the byte ranges of one file in file order into ``acc`` and counts what
    was left at each seam: the open segment's last positions of one range and the first positions of the
    next (:class:`Seam`), and the authors' key set of a document longer than its parts."""

    def __init__(self, pairs: GenderPairs, configs: Sequence[CountConfig], acc: PartialCounts):
        self.pairs, self.acc = pairs, acc
        self.windows = [window_of(c) for c in check_configs(configs)]
        self.counter = WindowCounter(self.windows)
        self.gend = np.zeros(0, np.uint8)
        self.comp: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # compensation of the seams' float sums
        self.doc_len = 0
        self.doc_keys: list[np.ndarray] = []

    def _flags(self) -> np.ndarray:
        n, old = self.acc.n_types, self.gend.size
        if n > old:
            m, f = self.pairs.male, self.pairs.female
            new = [1 if w in m else 2 if w in f else 0 for w in self.acc.types[old:n]]
            self.gend = np.concatenate([self.gend, np.array(new, np.uint8)])
        return self.gend

    def _accumulators(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        acc = self.acc
        for w in self.windows:  # a part without a context's counts leaves no slot: make one
            acc._slot(acc.male, w.context, w.dtype)
            acc._slot(acc.female, w.context, w.dtype)
            acc.male[w.context] = _grow(acc.male[w.context], acc.freq.size)
            acc.female[w.context] = _grow(acc.female[w.context], acc.freq.size)
        n = acc.freq.size
        out = {}
        for w in self.windows:
            cm, cf = self.comp.get(w.context) or (np.zeros(0, w.dtype), np.zeros(0, w.dtype))
            self.comp[w.context] = cm, cf = _grow(cm, n), _grow(cf, n)
            out[w.context] = (acc.male[w.context], acc.female[w.context], cm, cf)
        return out

    def add(self, part: PartialCounts, seam: Optional[Seam]) -> None:
        """Add the next range's counts and join its seam with the previous range's."""
        acc = self.acc
        acc.add(part)
        ids = acc._ids(part.types)
        gend, accs = self._flags(), self._accumulators()
        counter = self.counter
        if seam is None or seam.head is None:  # the range starts a segment: the previous one has ended
            counter.close(gend, accs)
        if seam is None:
            return
        self.doc_len += seam.doc_len
        if seam.doc_keys is not None and seam.doc_keys.size:
            self.doc_keys.append(ids[seam.doc_keys])
        tail = ids[seam.tail] if seam.tail is not None else None
        if seam.head is not None:
            head = ids[seam.head]
            if head.size and (counter.chain is None or counter.chain.length == 0):
                acc.totals["n_segments"] += 1  # the segment starts here after all (an <eos> or \n before)
            pend = {w.context: np.arange(head.size) < w.halo for w in self.windows}
            through = seam.head_len < 0  # the head's segment is the tail's
            if through and tail is not None:
                before = counter.chain.length if counter.chain is not None else 0
                skip = head.size - (seam.tail_len - tail.size)  # tokens the head and the tail share
                if skip > 0 or head.size < 2 * counter.hmax:
                    seq = np.concatenate([head, tail[max(skip, 0) :]])
                    for w in self.windows:
                        p = np.zeros(seq.size, bool)
                        p[: head.size] = pend[w.context]
                        p[seq.size - tail.size :] |= seam.tail_pending[w.context]
                        pend[w.context] = p
                    counter.process(seq, np.array([seq.size]), True, True, gend, accs, pend)
                else:
                    counter.process(head, np.array([head.size]), True, True, gend, accs, pend)
                    counter.chain = Chain(tail, dict(seam.tail_pending), before + seam.tail_len)
                return
            counter.process(head, np.array([head.size]), True, through, gend, accs, pend)
            if through:
                return
        if tail is not None:
            counter.close(gend, accs)
            counter.chain = Chain(tail, dict(seam.tail_pending), seam.tail_len)

    def finish(self) -> None:
        """The file ends: count the last open positions; mark the key types of a document ≥ W tokens."""
        self.counter.close(self._flags(), self._accumulators())
        for ctx, (cm, cf) in self.comp.items():
            n = cm.size
            self.acc.male[ctx][:n] += cm
            self.acc.female[ctx][:n] += cf
        self.comp = {}
        keys = np.concatenate(self.doc_keys) if self.doc_keys else np.zeros(0, np.int64)
        for w in self.windows:
            if w.W and self.doc_len >= w.W and keys.size:
                k = self.acc.keys[w.context]
                k = self.acc.keys[w.context] = _grow(k, self.acc.freq.size)
                k[keys] = True


def count_texts(
    texts: Iterable[str],
    pairs: GenderPairs,
    configs: Sequence[CountConfig],
    batch_chars: int = DEFAULT_BATCH_CHARS,
    into: Optional[PartialCounts] = None,
) -> PartialCounts:
    """Count ``texts`` (one document each) in batches of about ``batch_chars`` characters into partial
    counts (``into``, or a new one)."""
    counter = StreamCounter(pairs, configs)
    batch: list[str] = []
    size = 0
    for text in texts:
        batch.append(text)
        size += len(text)
        if size >= batch_chars:
            counter.feed_texts(batch)
            batch, size = [], 0
    counter.feed_texts(batch)
    part = counter.result()[0]
    if into is None:
        return part
    into.add(part)
    return into
