"""The HTML before/after view (issue 29): `compare --paired --html` and `debias --audit` write a page whose
rows are the terminal table's cells, with the perplexity cost when a debias.json records it, and no
machine path."""

from __future__ import annotations

import json
import re
import shutil
from html import unescape

import pytest
from typer.testing import CliRunner

from genderscope.cli.app import app
from genderscope.core.paired import paired_changes
from genderscope.report.compare import paired_table


def _run(tmp_path, model, name):
    out = tmp_path / name
    args = ["run", "crows-pairs", "--model", model, "--limit", "30", "--out", str(out)]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    return out


def _html_rows(html: str) -> list[list[str]]:
    body = html.split('<table class="paired">', 1)[1].split("</table>", 1)[0]
    rows = re.findall(r"<tr class=\"state-[^\"]+\">(.*?)</tr>", body, re.S)
    return [[unescape(re.sub(r"<[^>]+>", "", c)).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", r, re.S)]
            for r in rows]  # fmt: skip


def _table_rows(changes) -> list[list[str]]:
    cols = paired_table(changes).columns
    return [[str(col._cells[i]) for col in cols] for i in range(len(changes))]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ba")
    return tmp, _run(tmp, "random:1", "before"), _run(tmp, "random:2", "after")


def test_compare_paired_html_rows_match_the_terminal_table(runs):
    tmp, a, b = runs
    page = tmp / "view.html"
    res = CliRunner().invoke(app, ["compare", "--paired", str(a), str(b), "--html", str(page)])
    assert res.exit_code == 0, res.output
    html = page.read_text()
    rows = _html_rows(html)
    assert rows == _table_rows(paired_changes(a, b)) and len(rows) >= 2
    assert any(r[1] == "pct_stereotype" and r[0] == "crows-pairs" for r in rows)
    assert "Not recorded" in html and str(tmp) not in html and "<script" not in html


def test_the_cost_comes_from_the_debias_record_and_paths_are_relative(runs, tmp_path):
    _, a, b = runs
    audit = tmp_path / "smol-cda" / "audit"
    shutil.copytree(a, audit / "before")
    shutil.copytree(b, audit / "after")
    manifest = json.loads((audit / "after" / "run.json").read_text())
    manifest["model"]["spec"] = f"hf-causal:{tmp_path}/smol-cda/model"
    (audit / "after" / "run.json").write_text(json.dumps(manifest))
    ppl = {"corpus": "wikitext-2:test", "before": {"ppl": 20.5, "tokens": 2000},
           "after": {"ppl": 22.25, "tokens": 2000}}  # fmt: skip
    (tmp_path / "smol-cda" / "debias.json").write_text(json.dumps({"perplexity": ppl}))
    page = tmp_path / "out.html"
    res = CliRunner().invoke(app, ["compare", "--paired", str(audit / "before"), str(audit / "after"),
                                   "--html", str(page)])  # fmt: skip
    assert res.exit_code == 0, res.output
    html = page.read_text()
    cost = html.split('<table class="cost">', 1)[1].split("</table>", 1)[0]
    assert all(v in cost for v in ("wikitext-2:test", "20.5", "22.2", "1.09"))
    assert "hf-causal:smol-cda/model" in html and str(tmp_path) not in html


def test_html_without_paired_is_one_line(runs):
    _, a, b = runs
    from genderscope.common.errors import UsageError

    res = CliRunner().invoke(app, ["compare", str(a), str(b), "--html", "x.html"])
    assert res.exit_code != 0 and isinstance(res.exception, UsageError) and "--paired" in str(res.exception)


@pytest.mark.slow  # fine-tunes and audits a tiny model (~10 s on a quiet machine)
def test_debias_audit_writes_the_view_with_its_perplexity(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from genderscope.demo_models import build_tiny_causal

    words = "he she his her him man woman the a ran said met doctor nurse table chair".split()
    tiny = build_tiny_causal(tmp_path / "tiny", words)
    corpus = tmp_path / "train.txt"
    corpus.write_text("\n".join(["he met the doctor", "she said the nurse ran", "his table"] * 20))
    out = tmp_path / "deb"
    res = CliRunner().invoke(app, [
        "debias", "cda", "--model", f"hf-causal:{tiny}", "--out", str(out), "--corpus", str(corpus),
        "--eval-corpus", str(corpus), "--eval-tokens", "32", "--steps", "1", "--batch-size", "2",
        "--seq-len", "8", "--audit", "crows-pairs", "--audit-limit", "3",
    ])  # fmt: skip
    assert res.exit_code == 0, res.output
    rec = json.loads((out / "debias.json").read_text())
    html = (out / "audit" / "report.html").read_text()
    assert rec["audit"]["report"].endswith("report.html") and str(tmp_path) not in html
    from genderscope.core.paired import PairedChange

    assert _html_rows(html) == _table_rows([PairedChange(**c) for c in rec["audit"]["changes"]])
    cost = html.split('<table class="cost">', 1)[1].split("</table>", 1)[0]
    from genderscope.core.textfmt import fmt

    assert fmt(rec["perplexity"]["before"]["ppl"]) in cost and fmt(rec["perplexity"]["after"]["ppl"]) in cost
    assert "hf-causal:../model" in html
