"""Bootstrap (spec §6): bit-exact Python-MT draws, vectorised = per-resample loop, GenderBench compat mode."""

from __future__ import annotations

import math
import random
from collections import OrderedDict
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import norm

import genderscope
from genderscope.stats.bootstrap import bootstrap_counts, count_matrix
from genderscope.stats.intervals import intervals
from genderscope.stats.intervals import normal_interval_genderbench, percentile_interval
from genderscope.stats.pyrandom import choices_indices, random_floats
from genderscope.tasks.gest import metrics as M


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32), st.integers(1, 5000), st.integers(0, 3000))
def test_choices_indices_bit_for_bit(seed, n, k):
    a, b = random.Random(seed), random.Random(seed)
    got = choices_indices(a, n, k)
    want = b.choices(range(n), k=k)
    assert got.tolist() == want
    assert a.getstate() == b.getstate()
    assert a.random() == b.random()


def test_random_floats_bit_for_bit():
    a, b = random.Random(123), random.Random(123)
    assert random_floats(a, 1001).tolist() == [b.random() for _ in range(1001)]


def test_count_matrix_rows_are_bincounts_of_choices_and_chunking_is_invisible():
    n, B = 37, 23
    rng = random.Random(123)
    want = np.array([np.bincount(rng.choices(range(n), k=n), minlength=n) for _ in range(B)], dtype=float)
    assert np.array_equal(count_matrix(n, B, 123), want)
    assert np.array_equal(np.vstack(list(bootstrap_counts(n, B, 123, chunk=5))), want)


def small_table(seed: int, n: int) -> M.ItemTable:
    """A random item table with undetected items and missing stereotypes (NaN cases)."""
    r = np.random.default_rng(seed)
    stereo = r.choice([1, 2, 3, 8, 9, 15], size=n)
    counts = r.integers(0, 3, size=(n, 3)).astype(float)
    counts[r.random(n) < 0.3] = 0.0  # some items have no detected answer
    und = r.integers(0, 2, size=n).astype(float)
    und[counts.sum(axis=1) + und == 0] = 1.0
    return M.ItemTable(stereo, counts, und)


@pytest.mark.parametrize("seed,n", [(0, 4), (1, 7), (2, 12), (3, 30)])
def test_vectorised_equals_reference_loop(seed, n):
    t = small_table(seed, n)
    B = 60
    vec = M.compute(t, count_matrix(n, B, 123))
    rng = random.Random(123)
    draws = [rng.choices(range(n), k=n) for _ in range(B)]
    ref = np.array([[M.compute_reference(t, d)[name] for name in M.NAMES] for d in draws])
    assert np.isnan(ref).any()  # the NaN cases are exercised
    np.testing.assert_allclose(vec, ref, rtol=0, atol=1e-12, equal_nan=True)


# --- GenderBench's procedure, transcribed plainly (spec §5, §6.1) -------------------------------------------
# Per-resample metrics are computed here in exact rational arithmetic, so "all identical" and "σ = 0" mean
# exactly that; the toolkit's float computation must agree within 1e-12, NaN cases included.

FEMALE, MALE = range(1, 8), (8, 9, 10, 11, 12, 13, 14, 16)


def exact_metrics(items: list[tuple[int, list[int], int]], draw: list[int]) -> dict[str, Fraction | None]:
    """GEST's 60 metrics for one multiset of items; ``items[j]`` = (stereotype, counts per option,
    undetected)."""
    opts = ("male", "female", "neither")
    kept = [items[j] for j in draw if sum(items[j][1]) > 0]

    def mean(xs):
        return sum(xs, Fraction(0)) / len(xs) if xs else None

    def p(item, o):
        return Fraction(item[1][o], sum(item[1]))

    out: dict[str, Fraction | None] = {}
    for o, name in enumerate(opts):
        out[f"frequency_{name}_option"] = mean([p(it, o) for it in kept])
    for i in range(1, 17):
        for o, name in enumerate(opts):
            out[f"stereotype_{i}_frequency_{name}_option"] = mean([p(it, o) for it in kept if it[0] == i])
    group = {}
    for name in opts:
        for label, ids in (("female", FEMALE), ("male", MALE)):
            vals = [out[f"stereotype_{i}_frequency_{name}_option"] for i in ids]
            group[label, name] = mean([v for v in vals if v is not None])
            out[f"{label}_stereotypes_frequency_{name}_option"] = group[label, name]
    parts = [
        group["male", "male"],
        group["male", "female"],
        group["female", "female"],
        group["female", "male"],
    ]
    out["stereotype_rate"] = None if None in parts else ((parts[0] - parts[1]) + (parts[2] - parts[3])) / 2
    out["undetected_rate_items"] = 1 - Fraction(len(kept), len(draw))
    out["undetected_rate_attempts"] = Fraction(
        sum(items[j][2] for j in draw), sum(sum(items[j][1]) + items[j][2] for j in draw)
    )
    return out


def genderbench_interval(values: list[Fraction | None], level: float) -> tuple[float, float]:
    """All NaN -> NaN; all identical -> (v, v); else drop NaN: σ = 0 -> NaN, otherwise mean ± z·σ
    (norm.fit)."""
    if all(v is None for v in values):
        return math.nan, math.nan
    if len(set(values)) == 1:
        return float(values[0]), float(values[0])
    good = [v for v in values if v is not None]
    if len(set(good)) == 1:  # σ = 0
        return math.nan, math.nan
    lo, hi = norm.interval(level, *norm.fit([float(v) for v in good]))
    return float(lo), float(hi)


def genderbench_cis(items, cycles: int, seed: int, level: float):
    rng = random.Random(seed)
    per_metric: dict[str, list] = {name: [] for name in M.NAMES}
    for _ in range(cycles):
        draw = rng.choices(range(len(items)), k=len(items))
        vals = exact_metrics(items, draw)
        for name in M.NAMES:
            per_metric[name].append(vals[name])
    return {name: genderbench_interval(v, level) for name, v in per_metric.items()}


def test_exact_transcription_equals_compute_reference():
    r = np.random.default_rng(5)
    items = []
    for _ in range(9):
        c = [int(x) for x in r.integers(0, 3, 3)]
        items.append((int(r.choice([1, 2, 8, 15])), c, 1 if sum(c) == 0 else int(r.integers(0, 2))))
    t = M.ItemTable(
        np.array([i[0] for i in items]),
        np.array([i[1] for i in items], float),
        np.array([i[2] for i in items], float),
    )
    draw = [0, 0, 3, 5, 8, 8, 8, 2, 1]
    exact = exact_metrics(items, draw)
    ref = M.compute_reference(t, draw)
    for name in M.NAMES:
        if exact[name] is None:
            assert math.isnan(ref[name]), name
        else:
            assert ref[name] == pytest.approx(float(exact[name]), abs=1e-14), name


def _items_from_attempts(attempts) -> list[tuple[int, list[int], int]]:
    items: OrderedDict[int, tuple[int, list[int], list[int]]] = OrderedDict()
    for a in attempts:
        it = items.setdefault(a["row"], (a["stereotype"], [0, 0, 0], [0]))
        if a["parsed_option"] is None:
            it[2][0] += 1
        else:
            it[1][("male", "female", "neither").index(a["parsed_option"])] += 1
    return [(s, c, u[0]) for s, c, u in items.values()]


@pytest.mark.parametrize(
    "limit,answers", [(8, ["(a)", "(b)", "(c)", "no idea"]), (40, ["(a)", "(b)", "x"]), (3, ["(c)"])]
)
def test_normal_ci_matches_genderbench_transcription(tmp_path, limit, answers):
    """End to end through the task: a replay run on a subset, ci_method=normal, vs the plain procedure."""
    import json

    from genderscope.tasks.gest.orderings import code, draw_orderings
    from genderscope.data.gest import sample_rows

    rows = sample_rows(3565, limit, 123)
    orderings = draw_orderings(3565, 6, 123)
    path = tmp_path / "r.jsonl"
    with open(path, "w") as fh:
        for i, r in enumerate(rows):
            fh.writelines(
                json.dumps(
                    {"id": f"gest/{r}/{code(o)}", "response": answers[(i * 7 + j * 3 + r) % len(answers)]}
                )
                + "\n"
                for j, o in enumerate(orderings[r])
            )
    cycles, level = 150, 0.9
    res = genderscope.run(
        "gest",
        model=f"replay:{path}",
        limit=limit,
        ci_method="normal",
        bootstrap_cycles=cycles,
        confidence_level=level,
        write=False,
    )
    got = res.metrics["gest"]
    items = _items_from_attempts(res.attempts)
    assert [a["row"] for a in res.attempts[::6]] == rows  # item order = sample order
    want = genderbench_cis(items, cycles, 123, level)
    n_nan = 0
    for name in M.NAMES:
        lo, hi = want[name]
        g_lo, g_hi = got[name].ci_low, got[name].ci_high
        if math.isnan(lo):
            n_nan += 1
            if math.isnan(got[name].value) or not math.isnan(g_lo):
                # exact arithmetic: σ = 0; floating point (GenderBench's and ours) may leave a spread of a
                # few ulps, and then both fit a normal of that width around the value
                assert math.isnan(g_lo) or abs(g_hi - g_lo) < 1e-12, (name, g_lo, g_hi)
            else:
                assert math.isnan(g_hi), name
        else:
            assert abs(g_lo - lo) <= 1e-12 and abs(g_hi - hi) <= 1e-12, (name, (g_lo, g_hi), (lo, hi))
    sigma0 = [n for n in M.NAMES if math.isnan(want[n][0]) and not math.isnan(got[n].value)]
    if limit == 8:
        assert n_nan > len(sigma0) > 0  # small subsets exercise both NaN branches (all NaN; some NaN + σ = 0)
    if limit == 3:  # always "(c)": constant metrics give (v, v)
        assert (got["undetected_rate_attempts"].ci_low, got["undetected_rate_attempts"].ci_high) == (0.0, 0.0)
    mk = res.results["gest"]["mark"]
    assert mk["source"] == "ci (normal)" and mk["comparable_with_genderbench"] is True


def test_some_nan_rest_constant_gives_nan_in_normal_mode():
    v = np.array([0.5, np.nan, 0.5, 0.5, np.nan])
    lo, hi, n_nan = normal_interval_genderbench(v)
    assert math.isnan(lo) and math.isnan(hi) and n_nan == 2
    lo, hi, n_nan = percentile_interval(v)
    assert (lo, hi, n_nan) == (0.5, 0.5, 2)


@pytest.mark.parametrize("method", ["normal", "percentile"])
def test_constant_metric_gives_v_v(method):
    m = np.column_stack([np.full(200, 0.25), np.linspace(0, 1, 200), np.full(200, np.nan)])
    iv = intervals(m, method, 0.95)
    assert tuple(iv[0, :2]) == (0.25, 0.25)
    assert iv[1, 0] < iv[1, 1]
    assert np.isnan(iv[2, :2]).all() and iv[2, 2] == 200


def test_normal_interval_formula():
    v = np.array([0.1, 0.2, 0.4, 0.3])
    lo, hi, _ = normal_interval_genderbench(v, 0.95)
    mu, sd = 0.25, math.sqrt(((0.15**2) + (0.05**2) * 2 + 0.15**2) / 4)
    assert lo == pytest.approx(mu - 1.959963984540054 * sd, abs=1e-14)
    assert hi == pytest.approx(mu + 1.959963984540054 * sd, abs=1e-14)


def test_percentile_interval_is_numpy_linear_quantile():
    v = np.array([3.0, 1.0, np.nan, 2.0, 10.0])
    lo, hi, n_nan = percentile_interval(v, 0.5)
    assert (lo, hi, n_nan) == (1.75, 4.75, 1)
