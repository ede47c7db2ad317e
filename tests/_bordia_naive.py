"""Direct (slow) co-occurrence definitions of the Bordia & Bowman spec §3.2–3.5, written literally.

Inputs are lists of token lists (segments for the paper geometry, files for the reference geometry);
outputs map word -> [c_M, c_F]. Used only by the tests to check the fast counters.
"""

from __future__ import annotations


def _empty(segments):
    return {w: [0, 0] for seg in segments for w in seg}


def paper_fixed(segments, male, female, k):
    out = _empty(segments)
    for seg in segments:
        n = len(seg)
        for p in range(n):
            for j in range(max(0, p - k), min(n, p + k + 1)):
                if j == p:
                    continue
                if seg[j] in male:
                    out[seg[p]][0] += 1
                if seg[j] in female:
                    out[seg[p]][1] += 1
    return out


def paper_infinite(segments, male, female, rho, max_distance):
    out = {w: [0.0, 0.0] for seg in segments for w in seg}
    for seg in segments:
        n = len(seg)
        for p in range(n):
            for j in range(n):
                d = abs(j - p)
                if d == 0 or (max_distance is not None and d > max_distance):
                    continue
                if seg[j] in male:
                    out[seg[p]][0] += rho**d
                if seg[j] in female:
                    out[seg[p]][1] += rho**d
    return out


def reference_fixed(files, male, female, W):
    """Gram by gram, as the authors' fixed_context_bias_score.py does."""
    a = (W + 1) // 2 - 2
    out = _empty(files)
    for toks in files:
        for s in range(0, len(toks) - W + 1):
            gram = toks[s : s + W]
            anchor = gram[a]
            for w in gram:
                if anchor in male:
                    out[w][0] += 1
                if anchor in female:
                    out[w][1] += 1
    return out


def reference_infinite(files, male, female, W, rho):
    """Gram by gram, as the authors' infinite_context_bias_score.py does (same summation order)."""
    c = (W - 1) // 2
    out = {w: [0.0, 0.0] for toks in files for w in toks}
    for toks in files:
        for s in range(0, len(toks) - W + 1):
            i = s + c
            m = f = 0.0
            for j in range(s, s + W):
                if j == i:
                    continue
                if toks[j] in male:
                    m = m + pow(rho, abs(j - i))
                if toks[j] in female:
                    f = f + pow(rho, abs(j - i))
            out[toks[i]][0] += m
            out[toks[i]][1] += f
    return out
