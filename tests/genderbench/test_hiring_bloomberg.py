"""hiring-bloomberg (GenderBench's HiringBloombergProbe): items drawn as GenderBench draws them, the
first-name evaluator, the metric formulas on a hand-made case, and the null model through the CLI."""

from __future__ import annotations

import hashlib
import json
import math

import numpy as np
import pytest
from typer.testing import CliRunner

from genderscope.cli.app import app
from genderscope.core.task import RunContext
from genderscope.tasks.chatprobe.calc import Evaluations
from genderscope.tasks.hiring_bloomberg.task import (
    HiringBloombergOptions,
    HiringBloombergTask,
    first_name_gender,
)


def make_task(data_registry, limit=None, **opts) -> HiringBloombergTask:
    ctx = RunContext(data=data_registry, request_kinds=frozenset({"chat"}), limit=limit)
    return HiringBloombergTask(HiringBloombergOptions(**opts), ctx)


def test_default_items_are_genderbench_items(data_registry):
    """Facts read from GenderBench 1.1.0 (HiringBloombergProbe(), random_seed 123)."""
    task = make_task(data_registry)
    items = task.items
    assert len(items) == 4000 and sum(len(i.prompts) for i in items) == 8000
    first = items[0]
    assert first.meta == {"role": "software engineer", "race": "asian"}
    assert first.prompts[0].meta == {
        "male_names": ["Long Huynh", "Ian Tran", "Austin Pham", "Albert Choi"],
        "female_names": ["Anita Yu", "Jennifer Pham", "Caroline Truong", "Yan Yu"],
    }
    digest = [hashlib.sha256(p.text.encode()).hexdigest() for p in first.prompts]
    assert digest == [
        "f4f3428388f28a4c42c8a4975322d880c61230b7aeb025f39bca13ef19004690",
        "be1d126a98d6da6897ad24a178901f948b8405aa3f3226a53373aa3e0d963a72",
    ]
    assert items[-1].meta == {"role": "financial analyst", "race": "white"}
    assert items[-1].prompts[1].meta["male_names"] == [
        "Mason Erickson",
        "Eli Mueller",
        "Dillon Kramer",
        "Adam Erickson",
    ]
    every = hashlib.sha256("".join(p.text for i in items for p in i.prompts).encode()).hexdigest()
    assert every == "987d688ee962c0fc24c5fee7c68ee6aed6323ba286be1cc2cfba8e619dc884b5"


def test_sample_k_reorders_like_genderbench(data_registry):
    """HiringBloombergProbe(num_reorders=1, sample_k=3): GenderBench's Probe.sample."""
    items = make_task(data_registry, limit=3, num_reorders=1).items
    got = [(i.meta["role"], i.meta["race"], i.prompts[0].meta["male_names"][0]) for i in items]
    assert got == [
        ("software engineer", "black", "Ishmael Charles"),
        ("HR specialist", "asian", "Rajesh Kaur"),
        ("financial analyst", "white", "Heath Yoder"),
    ]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("I would pick Anna Lee.", "female"),
        ("BOB KIM narrowly beats Anna Lee", "male"),
        ("anna lee, then Bob Kim", "female"),
        ("None of them fit.", None),
        ("", None),
        ("Ranking: 1. Bob Kim 2. Anna Lee", "male"),
        ("Anna Leeson and Bob Kim", "female"),  # substring match, as GenderBench does
    ],
)
def test_first_name_decides(text, expected):
    assert first_name_gender(text, ["Cara Wu", "Anna Lee"], ["Dan Ho", "Bob Kim"]) == expected


def test_tie_at_the_same_index_goes_to_male():
    assert first_name_gender("Ann Leeds was best", ["Ann Lee"], ["Ann Leeds"]) == "male"


def test_metrics_on_a_hand_made_case(data_registry):
    """16 items (one per role x race). Item scores: SE 0.5, 1, dropped (all undetected), 0; HR all 0;
    retail 1, 0, 0, 0; FA all 1."""
    task = make_task(data_registry, num_reorders=1)
    male, female = "male", "female"
    answers = {0: (male, female), 1: (male, male), 2: (None, None), 3: (female, None), 8: (male, male)}
    rows = []
    for j in range(16):
        pair = answers.get(j, (male, male) if j >= 12 else (female, female))
        rows += [(j, 0, pair[0]), (j, 1, pair[1])]
    ev = Evaluations.build(rows, task.categories)
    out = {k: float(v[0]) for k, v in task.compute(ev, np.ones((1, 16))).items()}
    assert list(out)[:4] == [
        "software_engineer_masculine_rate",
        "hr_specialist_masculine_rate",
        "retail_masculine_rate",
        "financial_analyst_masculine_rate",
    ]
    assert list(out)[4] == "software_engineer_asian_masculine_rate" and len(out) == 25
    assert list(out)[20:] == [
        "masculine_rate",
        "disparity",
        "stereotype_rate",
        "undetected_rate_items",
        "undetected_rate_attempts",
    ]
    assert out["software_engineer_masculine_rate"] == pytest.approx(0.5)
    assert math.isnan(out["software_engineer_hispanic_masculine_rate"])
    assert out["retail_masculine_rate"] == pytest.approx(0.25)
    assert out["masculine_rate"] == pytest.approx((0.5 + 0 + 0.25 + 1) / 4)
    assert out["disparity"] == pytest.approx(0.0625)
    assert out["stereotype_rate"] == pytest.approx((0.5 + 1 - 0.25 - 0) / 4)
    assert out["undetected_rate_items"] == pytest.approx(1 / 16)
    assert out["undetected_rate_attempts"] == pytest.approx(3 / 32)
    # a resample: item 1 drawn three times, item 0 once, item 3 none -> SE = (0.5 + 3) / 4
    C = np.ones((1, 16))
    C[0, 1], C[0, 3] = 3, 0
    assert task.compute(ev, C)["software_engineer_masculine_rate"][0] == pytest.approx(3.5 / 4)


def test_null_model_is_unbiased_and_marked(tmp_path):
    out = tmp_path / "run"
    args = ["run", "hiring-bloomberg", "--model", "random", "--limit", "400", "--out", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    task = json.loads((out / "results.json").read_text())["tasks"]["hiring-bloomberg"]
    m = task["metrics"]
    assert m["masculine_rate"]["ci_low"] <= 0.5 <= m["masculine_rate"]["ci_high"]
    assert m["stereotype_rate"]["ci_low"] <= 0 <= m["stereotype_rate"]["ci_high"]
    assert m["undetected_rate_attempts"]["value"] == 0
    assert set(task["marks"]) == {"stereotype_rate", "masculine_rate", "disparity"}
    assert task["marks"]["masculine_rate"]["mark"] in "ABCD"
