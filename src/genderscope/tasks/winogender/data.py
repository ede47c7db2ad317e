"""Winogender's files read into the fields of lm-eval's dataset (``oskarvanderwal/winogender`` on the hub):
sentid, sentence, pronoun, occupation, participant, gender, label; plus the occupation's BLS % female and
the "gotcha" flag.

``all_sentences.tsv`` (``sentid`` = ``occupation.participant.answer.gender.txt``, answer 0 = the pronoun
refers to the occupation, 1 = to the participant) gives everything but the pronoun, which is the one word of
the sentence among he/his/him/she/her/they/their/them (each of the 720 sentences has exactly one), lower
case.  ``occupations-stats.tsv`` gives ``bls_pct_female`` (2015).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from genderscope.tasks.scored.jsonl_rows import each_row, tsv_rows

SENTENCES = "winogender/all_sentences.tsv"
STATS = "winogender/occupations-stats.tsv"
PRONOUNS = frozenset({"he", "his", "him", "she", "her", "they", "their", "them"})
GENDERS = ("male", "female", "neutral")
_WORD = re.compile(r"[A-Za-z]+")


@dataclass(frozen=True)
class Sentence:
    """One Winogender sentence with lm-eval's fields, the occupation's BLS % female and the gotcha flag."""

    sentid: str
    sentence: str
    pronoun: str
    occupation: str
    participant: str
    gender: str
    label: int
    bls_pct_female: float
    gotcha: bool


def is_gotcha(gender: str, label: int, pct_female: float) -> bool:
    """Rudinger et al. 2018, Table 2: for a female pronoun, the answer is the occupation and the occupation
    is < 50 % female, or the occupation is >= 50 % female and the answer is the participant; reversed for a
    male pronoun; never for a neutral one.  (The hub set's ``gotcha`` subset, 240 sentences.)"""
    if gender not in ("male", "female"):
        return False
    matches_majority = (pct_female >= 50.0) == (gender == "female")
    return not matches_majority if label == 0 else matches_majority


def read_stats(path: Path) -> dict[str, float]:
    """Occupation -> BLS % female (2015) from ``occupations-stats.tsv``."""
    return dict(each_row(path, lambda _n, r: (r["occupation"], float(r["bls_pct_female"])), tsv_rows))


def _parse(stats: dict[str, float], row: dict[str, str]) -> Sentence:
    fields = row["sentid"].split(".")
    if len(fields) != 5 or fields[2] not in ("0", "1") or fields[3] not in GENDERS:
        raise ValueError("sentid is not 'occupation.participant.answer.gender.txt'")
    occupation, participant, answer, gender, _ = fields
    found = [w.lower() for w in _WORD.findall(row["sentence"]) if w.lower() in PRONOUNS]
    if len(found) != 1:
        raise ValueError(f"expected one pronoun in the sentence, found {found}")
    if occupation not in stats:
        raise ValueError(f"occupation {occupation!r} is not in {STATS}")
    pct, label = stats[occupation], int(answer)
    g = is_gotcha(gender, label, pct)
    return Sentence(row["sentid"], row["sentence"], found[0], occupation, participant, gender, label, pct, g)


def read_sentences(path: Path, stats_path: Path) -> list[Sentence]:
    """Every sentence of ``all_sentences.tsv`` in file order (a malformed line: one DataError naming it)."""
    stats = read_stats(stats_path)
    return each_row(path, lambda _n, row: _parse(stats, row), tsv_rows)
