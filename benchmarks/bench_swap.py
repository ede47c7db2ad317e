"""The swap engine's speed: 10,000 prompts swapped in each direction, CPU seconds (aim: well under 1 s).

Run: ``GENDERSCOPE_DATA_MIRROR=../shared/data PYTHONPATH=src .venv/bin/python benchmarks/bench_swap.py``

Prompts: the 3,204 BOLD gender prompts and the 1,584 WinoBias test sentences, cycled to 10,000 (their mix
of pronouns, terms and names is what a prompt file holds). The word lists are loaded (and the regex
compiled) once before timing; the time is ``time.process_time`` (CPU) over the best of 3 runs.
"""

from __future__ import annotations

import json
import re
import time
from itertools import cycle, islice

from genderscope.data.registry import DataRegistry
from genderscope.swap import DIRECTIONS, default_lexicon, swap

N = 10_000


def prompts(n: int = N) -> list[str]:
    reg = DataRegistry()
    bold = json.loads(reg.path("bold/gender_prompt.json").read_text(encoding="utf-8"))
    texts = [p for group in bold.values() for person in group.values() for p in person]
    for kind in (1, 2):
        for side in ("pro", "anti"):
            path = reg.path(f"winobias/{side}_stereotyped_type{kind}.txt.test")
            lines = path.read_text(encoding="utf-8").splitlines()
            texts += [re.sub(r"^\d+\s+", "", s).replace("[", "").replace("]", "") for s in lines]
    return list(islice(cycle(texts), n))


def main() -> None:
    texts = prompts()
    t0 = time.process_time()
    default_lexicon()
    swap("warm up", "both")
    load = time.process_time() - t0
    print(f"{len(texts)} prompts, {sum(map(len, texts)) / len(texts):.0f} characters each on average")
    print(f"word lists loaded and regex compiled: {load:.3f} s CPU")
    for direction in DIRECTIONS:
        best, changed, changes = float("inf"), 0, 0
        for _ in range(3):
            t = time.process_time()
            out = [swap(x, direction) for x in texts]
            best = min(best, time.process_time() - t)
        changed = sum(1 for s in out if s.changes)
        changes = sum(len(s.changes) for s in out)
        flagged = sum(1 for s in out if s.flagged)
        print(
            f"{direction:8s} {best:.3f} s CPU ({len(texts) / best:,.0f} prompts/s); "
            f"{changed} prompts changed, {changes} changes, {flagged} flagged"
        )


if __name__ == "__main__":
    main()
