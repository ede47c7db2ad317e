"""Compiled kernels of the streaming corpus counter: tokens and ids from UTF-8 bytes, window counts.

Compiled with numba (``pip install 'genderscope[scale]'``) when it is installed; without it the same
functions run as plain Python (identical results, about a hundred times slower: fine for tests and small
texts, a warning says so before an audit).

* :func:`tokenize` — ``str.split()`` tokens of UTF-8 bytes (the 29 code points Python counts as
  whitespace, ASCII and multi-byte), looked up in (and added to) an open-addressing hash table of the
  vocabulary that compares bytes, so ids are exact; cuts segments at documents, at ``\\n`` and after
  ``<eos>`` (``boundary="line"``) and drops the reserved ids of ``drop_tokens`` (spec §2.2), in one pass.
* :func:`window_counts` — c_X(t_p) += Σ_{j in [p − left, p + right], g_X[j]} T[|j − p|] for the
  positions p marked to count, summed in increasing j and added in increasing p: the paper's fixed and
  truncated infinite contexts (spec §3.2, §3.3) and the authors' geometries (§3.4, §3.5; the replay order of
  §3.6 (d), hence bit-identical sums). Source and target validity by position in the segment (anchors and
  centres of the reference geometry).
* :func:`decay_counts` — the untruncated infinite context by the recurrences of §3.6 (c) inside each
  segment, zero where no gendered token lies within ``horizon`` (beyond it every term is below half the
  smallest float64).
"""

from __future__ import annotations

import numpy as np

try:  # pragma: no cover - depends on the environment
    import numba

    HAVE_NUMBA = True

    def jit(fn):  # type: ignore[no-untyped-def]
        return numba.njit(cache=True, nogil=True)(fn)

except ImportError:  # pragma: no cover
    HAVE_NUMBA = False

    def jit(fn):  # type: ignore[no-untyped-def]
        return fn


#: ASCII bytes Python's str.split() treats as whitespace (\t \n \v \f \r, \x1c–\x1f, space)
ASCII_WS = np.zeros(128, dtype=np.uint8)
ASCII_WS[[9, 10, 11, 12, 13, 28, 29, 30, 31, 32]] = 1

FNV_OFFSET = np.uint64(0xCBF29CE484222325)
FNV_PRIME = np.uint64(0x100000001B3)

#: scan state slots of :func:`tokenize` (an int64 array kept by the caller between calls)
S_POS, S_NOUT, S_NSEG, S_DOC, S_CUT, S_SEEN, S_FIRSTCONT, S_STATUS, S_NTYPES, S_ARENA = range(10)
STATE_SIZE = 10
#: a position far outside any buffer: the virtual start/end of a segment open on that side
FAR = 1 << 60


@jit
def ws_len(buf, i, n):  # type: ignore[no-untyped-def]
    """Byte length of the whitespace character at ``buf[i]`` (0 if it is not whitespace)."""
    b = buf[i]
    if b < 128:
        return 1 if ASCII_WS[b] else 0
    if b == 0xC2:
        if i + 1 < n and (buf[i + 1] == 0x85 or buf[i + 1] == 0xA0):
            return 2
    elif b == 0xE1:
        if i + 2 < n and buf[i + 1] == 0x9A and buf[i + 2] == 0x80:
            return 3
    elif b == 0xE2:
        if i + 2 < n:
            c1, c2 = buf[i + 1], buf[i + 2]
            if c1 == 0x80 and ((0x80 <= c2 <= 0x8A) or c2 == 0xA8 or c2 == 0xA9 or c2 == 0xAF):
                return 3
            if c1 == 0x81 and c2 == 0x9F:
                return 3
    elif b == 0xE3:
        if i + 2 < n and buf[i + 1] == 0x80 and buf[i + 2] == 0x80:
            return 3
    return 0


@jit
def lookup(buf, s, e, h, table, tinfo, arena):  # type: ignore[no-untyped-def]
    """(slot, id) of the token ``buf[s:e]`` with hash ``h``: id −1 and the free slot if it is new.

    ``table`` holds (hash, id) pairs (id −1: empty), ``tinfo`` (offset, length) of each type in ``arena``.
    """
    mask = (table.size >> 1) - 1
    slot = np.int64((h ^ (h >> np.uint64(29))) & np.uint64(mask))
    hs = np.int64(h)
    L = e - s
    while True:
        t = table[2 * slot + 1]
        if t < 0:
            return slot, -1
        if table[2 * slot] == hs and tinfo[2 * t + 1] == L:
            o = tinfo[2 * t]
            same = True
            for q in range(L):
                if arena[o + q] != buf[s + q]:
                    same = False
                    break
            if same:
                return slot, t
        slot = (slot + 1) & mask


@jit
def rehash(table, thash, ntypes):  # type: ignore[no-untyped-def]
    """Insert types 0 … ntypes − 1 into an empty ``table`` (ids −1) by their hashes."""
    mask = (table.size >> 1) - 1
    for t in range(ntypes):
        h = thash[t]
        slot = np.int64((h ^ (h >> np.uint64(29))) & np.uint64(mask))
        while table[2 * slot + 1] >= 0:
            slot = (slot + 1) & mask
        table[2 * slot] = np.int64(thash[t])
        table[2 * slot + 1] = t


@jit
def scan_token(buf, i, n):  # type: ignore[no-untyped-def]
    """(end, FNV-1a hash) of the token that starts at ``buf[i]``."""
    h = FNV_OFFSET
    while i < n:
        b = buf[i]
        if b < 128:
            if ASCII_WS[b]:
                break
        elif ws_len(buf, i, n):
            break
        h = (h ^ np.uint64(b)) * FNV_PRIME
        i += 1
    return i, h


@jit
def add_type(buf, s, e, h, t, slot, table, thash, tinfo, arena, used):  # type: ignore[no-untyped-def]
    """Store ``buf[s:e]`` as type ``t`` at ``slot``; returns the arena's new fill."""
    L = e - s
    for q in range(L):
        arena[used + q] = buf[s + q]
    arena[used + L] = 32  # types are kept space-separated: one decode gives the new words
    tinfo[2 * t], tinfo[2 * t + 1], thash[t] = used, L, h
    table[2 * slot], table[2 * slot + 1] = np.int64(h), t
    return used + L + 1


@jit
def tokenize(  # type: ignore[no-untyped-def]
    buf, doc_starts, line_mode, ndrop, eos_id, st, table, thash, tinfo, arena, out_ids, seg_len, seg_doc
):
    """Tokens of ``buf`` from byte ``st[S_POS]`` on, as kept ids and segments (length, document).

    ``doc_starts``: byte offset where each document starts (``st[S_DOC]`` is the current one); ids below
    ``ndrop`` are dropped tokens; ``eos_id`` ≥ 0 cuts a segment after that token (line mode). Returns when
    done (``st[S_STATUS]`` 0) or when the vocabulary needs more room (1: grow, then call again; the scan
    resumes at the token it stopped on).
    """
    n = buf.size
    ndocs = doc_starts.size
    i = st[S_POS]
    nout, nseg, doc, cut = st[S_NOUT], st[S_NSEG], st[S_DOC], st[S_CUT]
    ntypes, used = st[S_NTYPES], st[S_ARENA]
    seen, firstcont = st[S_SEEN], st[S_FIRSTCONT]
    cur = seg_len[nseg - 1] if nseg > 0 else 0
    next_doc = doc_starts[doc + 1] if doc + 1 < ndocs else n + 1
    while i < n:
        w = ws_len(buf, i, n)
        if w:
            if line_mode and buf[i] == 10:
                cut = 1
            i += w
            continue
        s = i
        i, h = scan_token(buf, i, n)
        if s >= next_doc:
            while doc + 1 < ndocs and s >= doc_starts[doc + 1]:
                doc += 1
            next_doc = doc_starts[doc + 1] if doc + 1 < ndocs else n + 1
            cut = 1
        slot, t = lookup(buf, s, i, h, table, tinfo, arena)
        if t < 0:
            L = i - s
            if ntypes >= thash.size or used + L + 1 > arena.size or 4 * (ntypes + 1) > table.size:
                if nseg > 0:
                    seg_len[nseg - 1] = cur
                st[S_POS], st[S_NOUT], st[S_NSEG], st[S_DOC], st[S_CUT] = s, nout, nseg, doc, cut
                st[S_NTYPES], st[S_ARENA], st[S_STATUS] = ntypes, used, 1
                st[S_SEEN], st[S_FIRSTCONT] = seen, firstcont
                return
            t = ntypes
            used = add_type(buf, s, i, h, t, slot, table, thash, tinfo, arena, used)
            ntypes += 1
        if t < ndrop:
            if t == eos_id:
                cut = 1
            continue
        if cut or not seen:  # a new segment entry (the first may continue the open segment)
            if not seen:
                seen = 1
                if cut:
                    firstcont = 0
            if nseg > 0:
                seg_len[nseg - 1] = cur
            seg_doc[nseg] = doc
            nseg += 1
            cur = 0
            cut = 0
        cur += 1
        out_ids[nout] = t
        nout += 1
    if nseg > 0:
        seg_len[nseg - 1] = cur
    # a document that starts after the last token still starts here: the cut stays pending
    if doc + 1 < ndocs:
        doc = ndocs - 1
        cut = 1
    st[S_POS], st[S_NOUT], st[S_NSEG], st[S_DOC], st[S_CUT] = i, nout, nseg, doc, cut
    st[S_NTYPES], st[S_ARENA], st[S_STATUS] = ntypes, used, 0
    st[S_SEEN], st[S_FIRSTCONT] = seen, firstcont


@jit
def gendered_positions(ids, gend):  # type: ignore[no-untyped-def]
    """(positions, genders) of the gendered tokens of ``ids`` (gend: 0 none, 1 male, 2 female per type)."""
    n = ids.size
    Q = np.empty(n, np.int64)
    G = np.empty(n, np.uint8)
    nq = 0
    for i in range(n):
        g = gend[ids[i]]
        if g:
            Q[nq] = i
            G[nq] = g
            nq += 1
    return Q[:nq], G[:nq]


@jit
def add(acc, comp, t, x, compensate):  # type: ignore[no-untyped-def]
    """acc[t] += x; with ``compensate`` the rounding error goes to comp[t] (Neumaier's summation)."""
    if not compensate:
        acc[t] += x
        return
    a = acc[t]
    s = a + x
    if abs(a) >= abs(x):
        comp[t] += (a - s) + x
    else:
        comp[t] += (x - s) + a
    acc[t] = s


@jit
def window_counts(  # type: ignore[no-untyped-def]
    ids,
    gend,
    count,
    seg_lo,
    seg_hi,
    seg_vs,
    seg_ve,
    left,
    right,
    T,
    src_lo,
    src_end,
    tgt_lo,
    tgt_end,
    acc_m,
    acc_f,
    comp_m,
    comp_f,
    compensate,
):
    """Add Σ_{j ∈ [p − left, p + right] ∩ segment, g[j]} T[|j − p|] to acc_X[ids[p]] for every ``count``-ed p.

    Segment s holds positions [seg_lo[s], seg_hi[s]) of the buffer; its true start and end (virtual:
    ±FAR for a side that lies outside the buffer) are seg_vs[s], seg_ve[s]. A source j counts only if
    j − vs ≥ src_lo and ve − j ≥ src_end, a target p only if p − vs ≥ tgt_lo and ve − p ≥ tgt_end (the
    reference geometry's anchors and centres). Sums run in increasing j, additions in increasing p;
    ``compensate``: float additions keep their rounding error in ``comp_X`` (Neumaier), so a word's sum
    over millions of positions stays within a few units in the last place whatever the order.
    """
    Q, G = gendered_positions(ids, gend)
    nq = Q.size
    qi = 0
    zero = T[0] - T[0]
    for s in range(seg_lo.size):
        lo, hi, vs, ve = seg_lo[s], seg_hi[s], seg_vs[s], seg_ve[s]
        for p in range(lo, hi):
            if not count[p]:
                continue
            if p - vs < tgt_lo or ve - p < tgt_end:
                continue
            a = max(lo, p - left)
            b = min(hi - 1, p + right)
            while qi < nq and Q[qi] < a:
                qi += 1
            sm = zero
            sf = zero
            j = qi
            while j < nq and Q[j] <= b:
                q = Q[j]
                if q - vs >= src_lo and ve - q >= src_end:
                    w = T[abs(q - p)]
                    if G[j] == 1:
                        sm = sm + w
                    else:
                        sf = sf + w
                j += 1
            if sm != zero:
                add(acc_m, comp_m, ids[p], sm, compensate)
            if sf != zero:
                add(acc_f, comp_f, ids[p], sf, compensate)


@jit
def decay_counts(ids, gend, count, seg_lo, seg_hi, rho, horizon, acc_m, acc_f, comp_m, comp_f):  # type: ignore[no-untyped-def]
    """Untruncated infinite context: s_X[p] = L_X[p] + R_X[p] (spec §3.6 (c)) inside each segment, where
    L[p] = ρ·(L[p − 1] + g[p − 1]) and R likewise from the right; a side with no gender-X token within
    ``horizon`` positions contributes exactly 0."""
    big = 1 << 62
    for s in range(seg_lo.size):
        lo, hi = seg_lo[s], seg_hi[s]
        m = hi - lo
        if m <= 0:
            continue
        Lm = np.zeros(m)
        Lf = np.zeros(m)
        lm = 0.0
        lf = 0.0
        last_m = -big
        last_f = -big
        for i in range(m):
            if i > 0:
                g = gend[ids[lo + i - 1]]
                lm = rho * (lm + (1.0 if g == 1 else 0.0))
                lf = rho * (lf + (1.0 if g == 2 else 0.0))
                if g == 1:
                    last_m = i - 1
                elif g == 2:
                    last_f = i - 1
            Lm[i] = lm if i - last_m <= horizon else 0.0
            Lf[i] = lf if i - last_f <= horizon else 0.0
        Rm = np.zeros(m)
        Rf = np.zeros(m)
        rm = 0.0
        rf = 0.0
        next_m = big
        next_f = big
        for i in range(m - 1, -1, -1):
            if i < m - 1:
                g = gend[ids[lo + i + 1]]
                rm = rho * (rm + (1.0 if g == 1 else 0.0))
                rf = rho * (rf + (1.0 if g == 2 else 0.0))
                if g == 1:
                    next_m = i + 1
                elif g == 2:
                    next_f = i + 1
            Rm[i] = rm if next_m - i <= horizon else 0.0
            Rf[i] = rf if next_f - i <= horizon else 0.0
        for i in range(m):
            p = lo + i
            if not count[p]:
                continue
            vm = Lm[i] + Rm[i]
            vf = Lf[i] + Rf[i]
            if vm != 0.0:
                add(acc_m, comp_m, ids[p], vm, True)
            if vf != 0.0:
                add(acc_f, comp_f, ids[p], vf, True)


@jit
def find_ids(blob, starts, table, tinfo, arena):  # type: ignore[no-untyped-def]
    """Ids of the words ``blob[starts[w]:starts[w + 1]]`` (−1 for a word not in the vocabulary)."""
    out = np.full(starts.size - 1, -1, np.int64)
    for w in range(starts.size - 1):
        s, e = starts[w], starts[w + 1]
        end, h = scan_token(blob, s, e)
        out[w] = lookup(blob, s, e, h, table, tinfo, arena)[1] if end == e else -1
    return out
