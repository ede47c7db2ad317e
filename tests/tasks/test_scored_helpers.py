"""The scored layer's helpers that benchmarks share: glossaries as data, the TSV reader, breakdowns."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from genderscope.common.errors import DataError
from genderscope.core.metrics import MetricDoc, Reference
from genderscope.tasks.scored.docs import doc_texts, load_docs
from genderscope.tasks.scored.groups import macro_weights, nested_scopes
from genderscope.tasks.scored.jsonl_rows import each_row, require_text, tsv_rows


def test_docs_json_with_a_template(tmp_path: Path) -> None:
    raw = {
        "references": [["A 2020", "https://a"]],
        "templates": {"gap": {"formula": "{a} − {b}", "direction": "0 = none", "units": "x", "sign": 1}},
        "metrics": [{"name": "g", "template": "gap", "a": "p", "b": "q", "neutral": 0.0}, {"name": "n",
                    "formula": "f", "direction": "d", "units": "u"}],
        "texts": {"rule": "why"},
    }  # fmt: skip
    (tmp_path / "docs.json").write_text(json.dumps(raw), encoding="utf-8")
    docs, refs = load_docs(str(tmp_path / "task.py"))
    assert docs == {
        "g": MetricDoc("g", "p − q", "0 = none", "x", neutral=0.0, sign=1),
        "n": MetricDoc("n", "f", "d", "u"),
    }
    assert refs == (Reference("A 2020", "https://a"),) and doc_texts(str(tmp_path / "task.py")) == {
        "rule": "why"
    }


def test_tsv_rows_and_one_line_errors(tmp_path: Path) -> None:
    p = tmp_path / "x.tsv"
    p.write_text("a\tb\n1\tx\n\n2\ty\n", encoding="utf-8")
    assert list(tsv_rows(p)) == [(2, {"a": "1", "b": "x"}), (4, {"a": "2", "b": "y"})]
    assert each_row(p, lambda n, r: int(r["a"]), tsv_rows) == [1, 2]
    p.write_text("a\tb\n1\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"x\.tsv:2: 1 fields"):
        list(tsv_rows(p))
    with pytest.raises(ValueError, match="field 'b' missing or empty"):
        require_text({"a": "x", "b": " "}, ("a", "b"))


def test_macro_weights_and_nested_scopes() -> None:
    w = macro_weights(np.array(["t", "t", "u"]), np.array([True, True, False]))
    assert w.tolist() == [0.5, 0.5, 0.0]
    outer, inner = np.array(["x", "x", "y"]), np.array(["a", "b", "a"])
    got = [(k, m.tolist()) for k, m in nested_scopes(outer, {"X": "x", "Z": "z"}, inner, ("a", "c"))]
    assert got == [("", [True, True, True]), ("_X", [True, True, False]), ("_X_a", [True, False, False])]
