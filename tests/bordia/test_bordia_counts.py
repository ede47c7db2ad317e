"""Bordia & Bowman co-occurrence counts: spec §10 vectors, fast == direct definitions (§3.7)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import _bordia_naive as naive
from genderscope.bordia.cooccurrence import CountConfig, count_cooccurrences
from genderscope.bordia.text import Document
from genderscope.bordia.bias import ScoreOptions, bias_scores
from genderscope.bordia.pairs import parse_gender_pairs
from genderscope.bordia.text import tokenize_documents

RHO = 0.95
PAIRS = parse_gender_pairs("he she\n\nhim her\nhis her\nwife husband\n", "vectors")
STOP = frozenset({"the", "and", "at", "was"})
DOC1 = "the doctor said he met her and the nurse saw his wife at the clinic"
DOC2 = "she told him the nurse was kind and the doctor was late"
ELIGIBLE = ["doctor", "said", "met", "nurse", "saw", "clinic", "told", "kind", "late"]


def score(cfg: CountConfig, docs=(DOC1, DOC2), pairs=PAIRS, **opts):
    cfg = cfg.resolved()
    stream = tokenize_documents(
        [Document(str(i), t) for i, t in enumerate(docs)], cfg.boundary, cfg.drop_tokens
    )
    counts = count_cooccurrences(stream, pairs, cfg)
    return counts, bias_scores(counts, ScoreOptions(stopwords=STOP, bootstrap=0, **opts))


def eligible_counts(counts):
    d = counts.as_dict()
    return {w: d[w] for w in ELIGIBLE}


def test_v1_paper_fixed_k2():
    counts, b = score(CountConfig(k=2))
    assert eligible_counts(counts) == {
        "doctor": (1, 0),
        "said": (1, 0),
        "met": (1, 1),
        "nurse": (2, 0),
        "saw": (2, 0),
        "clinic": (0, 0),
        "told": (1, 1),
        "kind": (0, 0),
        "late": (0, 0),
    }
    assert (b.summary["Z_male"], b.summary["Z_female"]) == (8, 2)
    assert b.as_dict() == pytest.approx({"met": math.log(4), "told": math.log(4)}, abs=1e-12)
    assert b.mu == pytest.approx(1.386294, abs=1e-6) and b.sigma == 0
    assert b.summary["n_only_male"] == 4 and b.summary["n_no_gender"] == 3
    assert (counts.n_male, counts.n_female) == (4, 2)
    assert b.summary["n_eligible"] == 9


def test_v1_variants():
    counts, b = score(CountConfig(k=2), docs=(DOC1 + " " + DOC2,))
    assert counts.as_dict()["clinic"] == (0, 1)
    assert b.as_dict()["met"] == pytest.approx(0.980829, abs=1e-6)
    assert b.as_dict()["told"] == pytest.approx(math.log(8 / 3), abs=1e-12)
    fixed = parse_gender_pairs("he she\n\nhim her\nhis her\nwife husband\n", fix_wife_husband=True)
    counts, b = score(CountConfig(k=2), pairs=fixed)
    assert counts.as_dict()["saw"] == (1, 1)
    assert set(b.words) == {"met", "saw", "told"}
    assert all(v == pytest.approx(0.847298, abs=1e-6) for v in b.bias)
    _, b = score(CountConfig(k=2), paper_formula_shift=True)
    assert all(v == pytest.approx(2.079442, abs=1e-6) for v in b.bias)


def test_v2_paper_fixed_k10():
    counts, b = score(CountConfig(k=10))
    assert eligible_counts(counts) == {
        "doctor": (4, 2),
        "said": (3, 1),
        "met": (3, 1),
        "nurse": (4, 2),
        "saw": (3, 1),
        "clinic": (2, 1),
        "told": (1, 1),
        "kind": (1, 1),
        "late": (1, 0),
    }
    assert (b.summary["Z_male"], b.summary["Z_female"]) == (22, 10)
    assert b.summary["n_scored"] == 8
    assert b.mu == pytest.approx(0.349164, abs=1e-6) and b.sigma == pytest.approx(0.425809, abs=1e-6)


def test_v3_paper_infinite_d3():
    r = RHO
    counts, b = score(CountConfig(context="infinite", max_distance=3))
    expect = {
        "doctor": (r**2, 0),
        "said": (r, r**3),
        "met": (r, r),
        "nurse": (2 * r**2 + r**3, r**3),
        "saw": (r + r**2, 0),
        "clinic": (r**3, 0),
        "told": (r, r),
        "kind": (0, 0),
        "late": (0, 0),
    }
    got = eligible_counts(counts)
    for w, (m, f) in expect.items():
        assert got[w][0] == pytest.approx(m, rel=1e-12) and got[w][1] == pytest.approx(f, rel=1e-12)
        assert (got[w][0] == 0) == (m == 0) and (got[w][1] == 0) == (f == 0)  # exact zeros
    assert b.summary["Z_male"] == pytest.approx(9.12475, abs=1e-5)
    assert b.summary["Z_female"] == pytest.approx(3.61475, abs=1e-5)
    assert b.as_dict() == pytest.approx(
        {"said": 0.823381, "met": 0.925968, "nurse": -0.207131, "told": 0.925968}, abs=1e-6
    )
    assert b.mu == pytest.approx(0.720612, abs=1e-6) and b.sigma == pytest.approx(0.477678, abs=1e-6)


def test_v4_reference_fixed_w5():
    counts, b = score(CountConfig(geometry="reference", W=5))
    assert eligible_counts(counts) == {
        "doctor": (0, 0),
        "said": (1, 0),
        "met": (1, 1),
        "nurse": (1, 1),
        "saw": (1, 0),
        "clinic": (1, 0),
        "told": (1, 0),
        "kind": (0, 0),
        "late": (0, 0),
    }
    assert (b.summary["Z_male"], b.summary["Z_female"]) == (6, 2)
    assert b.as_dict() == pytest.approx({"met": math.log(3), "nurse": math.log(3)}, abs=1e-12)


def test_v5_reference_infinite_w7():
    r = RHO
    counts, b = score(CountConfig(geometry="reference", context="infinite", W=7))
    got = eligible_counts(counts)
    assert got["met"] == (r, r) and got["saw"] == (r + r**2, 0)
    assert got["nurse"][0] == pytest.approx(2 * r**2 + r**3, rel=1e-15) and got["nurse"][1] == r**3
    assert all(got[w] == (0, 0) for w in ("doctor", "said", "clinic", "told", "kind", "late"))
    assert b.summary["Z_male"] == pytest.approx(5.464875, abs=1e-9)
    assert b.summary["Z_female"] == pytest.approx(1.807375, abs=1e-9)
    assert b.as_dict() == pytest.approx({"met": 1.106466, "nurse": -0.026633}, abs=1e-6)
    assert b.mu == pytest.approx(0.566549, abs=1e-6) and b.sigma == pytest.approx(0.566549, abs=1e-6)


# --------------------------------------------------------------------------------------------- fast == direct

ALPHABET = ["he", "she", "him", "her", "his", "a", "b", "c", "d", "e"]
MALE, FEMALE = frozenset({"he", "him", "his"}), frozenset({"she", "her"})
GP = parse_gender_pairs("he she\nhim her\nhis her\n")
docs_strategy = st.lists(st.lists(st.sampled_from(ALPHABET), min_size=0, max_size=40), min_size=1, max_size=5)


def fast_counts(docs, cfg):
    cfg = cfg.resolved()
    stream = tokenize_documents(
        [Document(str(i), " ".join(d)) for i, d in enumerate(docs)], cfg.boundary, cfg.drop_tokens
    )
    return count_cooccurrences(stream, GP, cfg)


def assert_same_keys(fast, direct):
    assert set(fast.types) == {w for w in direct}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docs_strategy, st.integers(1, 12))
def test_paper_fixed_equals_direct(docs, k):
    fast = fast_counts(docs, CountConfig(k=k))
    direct = naive.paper_fixed(docs, MALE, FEMALE, k)
    assert_same_keys(fast, direct)
    assert fast.c_male.dtype == np.int64
    assert fast.as_dict() == {w: tuple(v) for w, v in direct.items()}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docs_strategy, st.one_of(st.none(), st.integers(1, 40)), st.floats(0.05, 0.99))
def test_paper_infinite_equals_direct(docs, D, rho):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fast = fast_counts(docs, CountConfig(context="infinite", max_distance=D, decay=rho))
    direct = naive.paper_infinite(docs, MALE, FEMALE, rho, D)
    assert_same_keys(fast, direct)
    for w, (m, f) in fast.as_dict().items():
        dm, df = direct[w]
        assert (m == 0) == (dm == 0) and (f == 0) == (df == 0)  # identical zero pattern
        assert abs(m - dm) <= 1e-10 * abs(dm) and abs(f - df) <= 1e-10 * abs(df)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docs_strategy, st.integers(3, 30))
def test_reference_fixed_equals_direct(docs, W):
    fast = fast_counts(docs, CountConfig(geometry="reference", W=W))
    direct = naive.reference_fixed(docs, MALE, FEMALE, W)
    assert_same_keys(fast, direct)
    assert fast.as_dict() == {w: tuple(v) for w, v in direct.items()}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docs_strategy, st.integers(3, 30), st.floats(0.05, 0.99))
def test_reference_infinite_bit_identical(docs, W, rho):
    fast = fast_counts(docs, CountConfig(geometry="reference", context="infinite", W=W, decay=rho))
    direct = naive.reference_infinite(docs, MALE, FEMALE, W, rho)
    assert_same_keys(fast, direct)
    assert fast.as_dict() == {w: tuple(v) for w, v in direct.items()}  # == on float64


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from(ALPHABET + ["<eos>"]), max_size=15), min_size=1, max_size=6),
    st.integers(1, 6),
)
def test_line_boundary_equals_one_document_per_line(lines, k):
    """boundary=line cuts at newlines and <eos>; equals scoring every piece as its own document."""
    text = "\n".join(" ".join(line) for line in lines)
    cfg = CountConfig(k=k, boundary="line").resolved()
    fast = count_cooccurrences(tokenize_documents([Document("d", text)], "line", cfg.drop_tokens), GP, cfg)
    pieces: list[list[str]] = []
    for line in lines:
        cur: list[str] = []
        for t in line:
            if t == "<eos>":
                pieces.append(cur)
                cur = []
            else:
                cur.append(t)
        pieces.append(cur)
    direct = naive.paper_fixed(pieces, MALE, FEMALE, k)
    assert fast.as_dict() == {w: tuple(v) for w, v in direct.items()}


def test_exact_zero_guard_matters():
    """A gendered token just beyond D leaves a residue without the guard; with it the count is exactly 0."""
    for D in range(1, 40):
        docs = [["he", "she"] * 20 + ["c"] * D + ["b"] + ["a"] * 30]
        fast = fast_counts(docs, CountConfig(context="infinite", max_distance=D))
        assert fast.as_dict()["b"] == (0.0, 0.0)
        assert fast.as_dict()["c"][1] > 0


@pytest.mark.parametrize("W", [21, 100, 201])
def test_reference_on_ptb_slice(data_registry, W):
    from genderscope.bordia.pairs import load_gender_pairs

    text = data_registry.path("corpora/ptb/ptb.valid.txt").read_text().split("\n")
    files = [" ".join(text[:60]).split(), " ".join(text[60:100]).split()]
    gp = load_gender_pairs("penn")
    docs = [Document(str(i), " ".join(f)) for i, f in enumerate(files)]
    for ctx in ("fixed", "infinite"):
        cfg = CountConfig(geometry="reference", context=ctx, W=W).resolved()
        fast = count_cooccurrences(tokenize_documents(docs, "document", ()), gp, cfg)
        if ctx == "fixed":
            direct = naive.reference_fixed(files, gp.male, gp.female, W)
        else:
            direct = naive.reference_infinite(files, gp.male, gp.female, W, 0.95)
        assert fast.as_dict() == {w: tuple(v) for w, v in direct.items()}
        assert sum(fast.c_male) > 0


@pytest.mark.filterwarnings("ignore:no word co-occurs:UserWarning")  # toy corpus: μ, σ NaN expected
def test_authors_format_keys_and_swapped_labels():
    counts, _ = score(CountConfig(geometry="reference", W=14))  # doc 1 has 15 tokens, doc 2 has 12
    js = counts.authors_json()
    assert "clinic" in js and "late" not in js and "kind" not in js
    assert set(js["he"]) == {"f", "m"}
    d = counts.as_dict()
    assert all((v["f"], v["m"]) == d[w] for w, v in js.items())  # "f" = column 1 = male


@pytest.mark.filterwarnings("ignore:no word co-occurs:UserWarning")  # toy corpus: μ, σ NaN expected
def test_drop_tokens_close_up_positions():
    counts, _ = score(CountConfig(k=1), docs=("he <eos> doctor",))
    assert counts.as_dict()["doctor"] == (1, 0) and "<eos>" not in counts.types
    counts, _ = score(CountConfig(geometry="reference", W=3), docs=("he <eos> doctor",))
    assert "<eos>" in counts.types  # reference mode keeps <eos>
