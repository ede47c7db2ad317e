"""ABC files (GenDa Lens spec §2.3): triplets of (reflexive, hans, hendes) sentences per occupation file."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from genderscope.common.errors import DataError

FILES = {"female": "genda_lens/abc_fem_sents.txt", "male": "genda_lens/abc_male_sents.txt"}
GROUPS = ("female", "male")
VARIANTS = ("reflexive", "hans", "hendes")
TEMPLATES_PER_OCCUPATION = 76
REFLEXIVE_RE = re.compile(r"(?<!\w)(sin|sit|sine)(?!\w)")
COMPAT_FIND = ["sin", "sit", "sine", "\u2581sin", "\u2581sit", "\u2581sine"]


@dataclass(frozen=True)
class Triplet:
    """One ABC item: occupation file, index from 0, the three variant lines, subject and reflexive form."""

    group: str
    index: int
    lines: tuple[str, str, str]
    occupation: str
    reflexive_form: str

    @property
    def template(self) -> int:
        return self.index % TEMPLATES_PER_OCCUPATION


def read_text(data: Any, group: str) -> str:
    try:
        return data.path(FILES[group]).read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(f"{FILES[group]}: not UTF-8 ({exc})") from None


def compat_reflexives(text: str) -> list[str]:
    """§4.1 step 1: GenDa Lens's scan: the first line of each ``---``-separated block, stripped."""
    out: list[str] = []
    new = True
    for line in text.splitlines():
        if "--------------" in line:
            continue
        if "---" in line:
            new = True
            continue
        if new:
            out.append(line.strip())
            new = False
    return out


def parse_triplets(text: str, group: str, validate: bool = True) -> list[Triplet]:
    """§4.2 step 1: blocks separated by lines equal to ``---``; each block is a validated triplet."""
    blocks: list[list[tuple[int, str]]] = [[]]
    for n, line in enumerate(text.splitlines(), 1):
        if line.strip() == "---":
            blocks.append([])
        else:
            blocks[-1].append((n, line.strip()))
    out: list[Triplet] = []
    where = FILES[group]
    for i, block in enumerate(blocks):
        if len(block) != 3:
            if validate:
                first = block[0][0] if block else "?"
                raise DataError(f"{where}:{first}: triplet {i} has {len(block)} lines, expected 3")
            block = (block + [(0, "")] * 3)[:3]
        (n1, refl), (_, hans), (_, hendes) = block
        hits = list(REFLEXIVE_RE.finditer(refl))
        if validate:
            if len(hits) != 1:
                raise DataError(f"{where}:{n1}: expected one reflexive sin|sit|sine in {refl!r}")
            m = hits[0]
            for word, line in (("hans", hans), ("hendes", hendes)):
                if line != refl[: m.start()] + word + refl[m.end() :]:
                    raise DataError(
                        f"{where}:{n1}: the {word} variant {line!r} is not the reflexive sentence "
                        f"with {m.group(1)!r} replaced by {word!r}"
                    )
        form = hits[0].group(1) if hits else ""
        out.append(Triplet(group, i, (refl, hans, hendes), refl.split(" ")[0], form))
    return out
