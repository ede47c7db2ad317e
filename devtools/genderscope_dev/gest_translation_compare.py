"""gest-translation's replay of the published MT translations, cell by cell against the GEST paper.

The paper's numbers (``tests/fixtures/gest_translation/paper_masculine_rates.tsv``, ``paper_yield.tsv``:
kinit-sk/gest ``_mt.ipynb`` cells 7 and 15) are Agresti–Coull centres of masculine / (masculine +
feminine) per system, language and stereotype, from Trankit parses and the authors' heuristics.  This
module runs ``gest-translation --model published:SYSTEM`` on every (system, language) the paper and the
task share, takes the same Agresti–Coull centre from the task's counts (its ``stereotypes`` table), and
compares: per (system, language) the mean absolute difference over the 16 stereotypes, the largest one,
the mean signed difference, the share of cells inside the paper's printed interval, and both yields.

``python -m genderscope_dev.gest_translation_compare [--markdown]`` prints the table of
docs/gest-translation.md.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "gest_translation"
SUPPORTED = ("cs", "hr", "pl", "ru", "sk", "sl", "sr", "uk")


def _rows(name: str) -> list[list[str]]:
    lines = (FIXTURES / name).read_text(encoding="utf-8").splitlines()
    return [line.split("\t") for line in lines[1:] if line and not line.startswith("#")][0:]


def paper_rates() -> dict[tuple[str, str, int], tuple[float, float, float]]:
    """(system, language, stereotype) -> (low, p, high) as the paper's notebook printed them."""
    out = {}
    for row in _rows("paper_masculine_rates.tsv"):
        if row[0] == "system":
            continue
        out[(row[0], row[1], int(row[2]))] = (float(row[3]), float(row[4]), float(row[5]))
    return out


def paper_yield() -> dict[tuple[str, str], int]:
    return {(r[0], r[1]): int(r[2]) for r in _rows("paper_yield.tsv") if r[0] != "system"}


@dataclass
class Cell:
    """One (system, language): ours vs the paper's 16 masculine rates and the detection yields."""

    system: str
    language: str
    ours: list[float]
    paper: list[tuple[float, float, float]]
    yield_ours: int
    yield_paper: int

    @property
    def diffs(self) -> list[float]:
        return [o - p[1] for o, p in zip(self.ours, self.paper)]

    @property
    def mad(self) -> float:
        return sum(abs(d) for d in self.diffs) / len(self.diffs)

    @property
    def inside(self) -> int:
        return sum(p[0] <= round(o, 2) <= p[2] for o, p in zip(self.ours, self.paper))


def replay(system: str, languages: list[str]) -> dict[str, tuple[list[float], int]]:
    """Per language: the 16 Agresti–Coull centres and the detected count of a published:SYSTEM replay."""
    from genderscope.api import run

    res = run("gest-translation", f"published:{system}", languages=",".join(languages), n_boot=0, write=False)
    block = res.results["gest-translation"]
    out = {}
    for lang in languages:
        rows = [r for r in block["stereotypes"] if r["language"] == lang]
        detected = sum(r["masculine"] + r["feminine"] for r in rows)
        out[lang] = ([r["agresti_coull"] for r in sorted(rows, key=lambda r: r["stereotype"])], detected)
    return out


def compare() -> list[Cell]:
    """Every (system, language) of the paper that gest-translation reads, in the paper's order."""
    paper, yields = paper_rates(), paper_yield()
    pairs: dict[str, list[str]] = {}
    for system, lang, _ in paper:
        if lang in SUPPORTED and lang not in pairs.setdefault(system, []):
            pairs[system].append(lang)
    cells = []
    for system, langs in pairs.items():
        for lang, (ours, detected) in replay(system, langs).items():
            ref = [paper[(system, lang, s)] for s in range(1, 17)]
            cells.append(Cell(system, lang, ours, ref, detected, yields[(system, lang)]))
    return cells


def markdown(cells: list[Cell]) -> str:
    head = (
        "| system | language | MAD | max abs diff | mean diff (ours − paper) | cells in paper's CI | "
        "detected: ours / paper |\n|---|---|---|---|---|---|---|"
    )
    lines = [head]
    for c in cells:
        lines.append(
            f"| {c.system} | {c.language} | {c.mad:.4f} | {max(abs(d) for d in c.diffs):.3f} | "
            f"{sum(c.diffs) / 16:+.4f} | {c.inside}/16 | {c.yield_ours} / {c.yield_paper} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    result = compare()
    print(markdown(result))
    if "--cells" in sys.argv:
        for c in result:
            print(c.system, c.language, " ".join(f"{d:+.3f}" for d in c.diffs))
