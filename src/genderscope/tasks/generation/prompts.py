"""What a generation benchmark declares per prompt, the sample seeds, and ``--limit`` by group."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

#: every server takes a seed in [0, 2^31) (vLLM rejects >= 2^63, others want int32)
SEED_LIMIT = 2**31


@dataclass(frozen=True)
class GenPrompt:
    """One prompt a benchmark generates from.

    ``prompt_id``: stable and unique in the task (the attempt's item id); ``text``: what the model
    continues (``generate``) or is asked (``chat``, one user turn); ``group``: the group its generations
    count for (BOLD: ``American_actresses``; a counterfactual pair: its version, ``original`` or
    ``swapped``); ``cluster``: the resampling unit (BOLD: the person; a counterfactual pair: the pair);
    ``pair``: the id both versions of a counterfactual pair share ("" = unpaired; it also keys the
    sample seeds, so both versions are generated with the same seeds); ``fields``: anything else the
    benchmark's tables show (JSON values)."""

    prompt_id: str
    text: str
    group: str
    cluster: str
    pair: str = ""
    fields: Mapping[str, Any] = field(default_factory=dict)

    @property
    def seed_unit(self) -> str:
        """What the sample seeds are derived from: the pair when there is one, else the prompt."""
        return self.pair or self.prompt_id


def sample_seed(base: int, unit: str, k: int) -> int:
    """Seed of sample ``k`` (0-based) of prompt (or pair) ``unit``: ``(base + h) mod 2^31`` with h the first
    8 bytes (big-endian) of sha256(``unit`` NUL ``k``) and ``base`` the run's generation seed
    (``RunContext.seeds.generation``).  Independent of ``--samples``, ``--limit`` and the prompt order, so
    raising ``--samples`` keeps the stored answers of the first samples; both versions of a counterfactual
    pair share ``unit`` and so their seeds."""
    h = hashlib.sha256(f"{unit}\x00{k}".encode("utf-8")).digest()
    return (int(base) + int.from_bytes(h[:8], "big")) % SEED_LIMIT


def limit_by_group(prompts: Sequence[GenPrompt], limit: int | None, groups: Sequence[str]) -> list[GenPrompt]:
    """``--limit N`` over several groups: the first prompts of each group in file order, taken in turn
    (group 1, group 2, group 1, …) until N are taken, so both groups are asked even at a small N (the
    first ⌈N/2⌉ and ⌊N/2⌋ of two groups).  Without a limit: every prompt, in file order."""
    if limit is None:
        return list(prompts)
    queues = [[p for p in prompts if p.group == g] for g in groups]
    keep: set[str] = set()
    i = 0
    while len(keep) < limit and any(i < len(q) for q in queues):
        for q in queues:
            if i < len(q) and len(keep) < limit:
                keep.add(q[i].prompt_id)
        i += 1
    return [p for p in prompts if p.prompt_id in keep]
