"""The scored layer's plans and unit benchmarks (tasks/scored: plans, textplans, maskdiff, top1, given,
units, levels): requests and ids, answers read back (failed, unreadable, undefined), every unit resampled
with GenderBench's draws, records on the item's last attempt, paired units."""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np
import pytest

from genderscope.common.errors import UsageError
from genderscope.core.metrics import Measurement
from genderscope.core.options import opt
from genderscope.core.primitives import MASKED_LOGPROBS, TOKEN_LOGPROBS, TOKENIZE
from genderscope.core.requests import AttemptResult
from genderscope.core.task import RunContext
from genderscope.tasks.scored.items import Choice, ScoredItem
from genderscope.tasks.scored.levels import level_means, one_hot, ranks
from genderscope.tasks.scored.maskdiff import DifferingTokens, differing_positions
from genderscope.tasks.scored.plans import measurements_of
from genderscope.tasks.scored.textplans import TextScores
from genderscope.tasks.scored.units import UnitBenchmark, UnitOptions, spread
from genderscope.tasks.scored.weights import wshare


@dataclass
class ToyOptions(UnitOptions):
    scoring: str = opt("auto", "how", ("auto", "loglik", "diff"))
    bootstrap_cycles: int = opt(200, "resamples")


class Toy(UnitBenchmark):
    """Six items in three units (two items each); candidate 0 'wins' when it scores higher."""

    name = "toy-units"
    description = "toy"
    Options = ToyOptions
    plans = {
        "loglik": TextScores(Measurement(frozenset({TOKEN_LOGPROBS}), "LL")),
        "diff": DifferingTokens(Measurement(frozenset({TOKENIZE, MASKED_LOGPROBS}), "differing")),
    }
    measurements = measurements_of(plans)
    candidate_names = ("a", "b")

    def load_items(self):
        texts = [Choice("", (f"x{i} a", f"x{i} b")) for i in range(6)]
        return [ScoredItem(f"toy/{i}", c, {"i": i}, f"u{i // 2}") for i, c in enumerate(texts)]

    def compute(self, s, C):
        ok = ~np.isnan(s.ll).any(axis=1)
        return {"first": wshare(C, s.ll[:, 0] > s.ll[:, 1], ok)}


def _ctx(kinds=frozenset({TOKEN_LOGPROBS})):
    return RunContext(request_kinds=kinds)


def _tl(att, lps):
    n = len(att.request.payload["text"])
    return AttemptResult(att, {"tokens": ["t"] * len(lps), "offsets": [[0, n]] * len(lps), "logprobs": lps})


def test_text_scores_ask_each_candidate_text_and_sum_its_tokens():
    t = Toy(ToyOptions(), _ctx())
    assert t.options.scoring == "loglik" and list(t.measurements) == ["loglik", "diff"]
    atts = t.attempts()
    assert [a.item_id for a in atts[:2]] == ["toy/0/a", "toy/0/b"]
    assert atts[1].request.kind == TOKEN_LOGPROBS and atts[1].request.payload == {"text": "x0 b"}
    res = [_tl(a, [-1.0, -2.0] if a.item_id.endswith("a") else [-1.0, -1.0]) for a in atts]
    res[3] = AttemptResult(atts[3], None, error="boom")  # item 1 fails
    res[5] = AttemptResult(atts[5], {"no": "logprobs"})  # item 2 unreadable
    r = t.readout(res)
    assert r.ll[0].tolist() == [-3.0, -2.0] and r.failed.tolist() == [False, True, False, False, False, False]
    assert r.bad.tolist() == [False, False, True, False, False, False]
    out = t.score(res)
    assert out.metrics["first"].value == 0.0  # candidate b wins every scored item
    assert out.extra["counts"] == {"items": 6, "attempts": 12, "failed_attempts": 1, "failed_items": 1}
    # records: every attempt its item's fields and step (the candidate's name); nothing else
    assert out.records[0] == {"i": 0, "step": "a"} and out.records[1] == {"i": 0, "step": "b"}


def test_every_unit_is_drawn_as_genderbench_draws_it():
    t = Toy(ToyOptions(bootstrap_cycles=50), _ctx())
    atts = t.attempts()
    wins = [0, 1, 1, 0, 1, 1]  # item i: does candidate a score higher?
    res = [_tl(a, [-1.0] if (a.item_id.endswith("a") == bool(wins[int(a.item_id.split("/")[1])])) else [-2.0])
           for a in atts]  # fmt: skip
    res[1] = AttemptResult(atts[1], None, error="boom")  # item 0 fails: its unit is still drawn
    got = t.score(res).metrics["first"]
    draw, vals = random.Random(t.ctx.seeds.bootstrap), []
    w = np.array(wins, dtype=float)
    for _ in range(50):
        units = draw.choices(range(3), k=3)
        items = [i for u in units for i in (2 * u, 2 * u + 1) if i != 0]
        vals.append(w[items].mean() if items else np.nan)
    lo, hi = np.nanquantile(vals, [0.025, 0.975])
    assert got.value == pytest.approx(w[1:].mean()) and (got.ci_low, got.ci_high) == pytest.approx((lo, hi))


def test_paired_units_are_the_clusters():
    t = Toy(ToyOptions(), _ctx())
    atts = t.attempts()
    u = t.paired_units([_tl(a, [-1.0]) for a in atts])
    assert list(u.ids) == ["u0", "u1", "u2"]
    sub = u.take(np.array([2, 0]))
    assert [it.item_id for it in sub[0].items] == ["toy/4", "toy/5", "toy/0", "toy/1"]
    assert sub[1].tolist() == [0, 0, 1, 1]


T3 = ["t", "u", "v"]


def test_differing_tokens_two_rounds_and_an_empty_difference():
    t = Toy(ToyOptions(), _ctx(frozenset({TOKENIZE, MASKED_LOGPROBS})))
    assert t.options.scoring == "diff"
    first = t.attempts()
    assert first[0].item_id == "toy/0/a/tokenize" and first[0].request.payload["add_special_tokens"] is True
    ids = {0: [1, 5, 2], 1: [1, 6, 2]}  # item 0 differs at position 1; the others tokenise alike
    tok = [AttemptResult(a, {"ids": ids[k] if a.item_id.startswith("toy/0/") else [1, 7, 2], "tokens": T3})
           for k, a in zip([0, 1] * 6, first)]  # fmt: skip
    second = t.next_attempts(tok)
    assert [a.item_id for a in second] == ["toy/0/a", "toy/0/b"]
    assert second[0].request.payload == {"ids": [1, 5, 2], "positions": [1], "mask": "all"}
    lp = {"toy/0/a": -0.5, "toy/0/b": -2.5}
    done = [AttemptResult(a, {"positions": [1], "logprobs": [lp[a.item_id]]}) for a in second]
    r = t.readout(tok + done)
    assert r.ll[0].tolist() == [-0.5, -2.5]
    assert np.isnan(r.ll[1:]).all() and not r.failed.any() and not r.bad.any()
    assert differing_positions([1, 2, 3], [1, 4]) == [1]


def test_spread_level_means_and_ranks():
    C = np.arange(12.0).reshape(3, 4)
    for of in (np.tile(np.arange(4), 3), np.array([3, 0, 0, 2, 1])):
        assert np.array_equal(spread(C, of), C[:, of])
    L = one_hot([1, 2, 1, 3], [1, 2, 3, 4])
    m = level_means(np.ones((1, 4)), np.array([1.0, 2.0, np.nan, 4.0]), L)[0]
    assert m[:3].tolist() == [1.0, 2.0, 4.0] and np.isnan(m[3])
    assert ranks(np.array([2.0, 1.0, 2.0, np.nan]))[:3].tolist() == [2.0, 1.0, 3.0]


def test_given_scores_refuse_a_model():
    from genderscope.tasks.scored.given import refuse_model

    class T:
        name, ctx = "x", RunContext(model_kind="hf-causal")

    with pytest.raises(UsageError, match="leave out --model"):
        refuse_model(T())
