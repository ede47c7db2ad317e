"""gest-translation end to end: the published:SYSTEM backend (lookup, misses, bad input), the task through
the CLI with published:deepl and with random, and the replay's agreement with the GEST paper's table."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

import pytest

from genderscope.backends.published_translations import SYSTEMS, PublishedTranslationsBackend
from genderscope.common.errors import UsageError
from genderscope.core.options import NoOptions
from genderscope.core.primitives import TRANSLATE, translate_request
from genderscope.core.requests import Job, Outcome

GEST_ROW0 = "I have always been a leadership type."


def _answer(backend: PublishedTranslationsBackend, *requests: Any) -> list[Outcome]:
    got: dict[int, Outcome] = {}
    jobs = [Job(i, r, 1, f"item{i}") for i, r in enumerate(requests)]
    backend.answer(jobs, lambda job, outcome: got.__setitem__(job.index, outcome))
    return [got[i] for i in range(len(requests))]


def _translate(text: str, target: str) -> Any:
    return translate_request(text, target)


def test_published_backend_looks_up_by_source_text_and_counts_misses() -> None:
    backend = PublishedTranslationsBackend("deepl", NoOptions())
    hit, miss = _answer(backend, _translate(GEST_ROW0, "cs"), _translate("Not a GEST sentence.", "cs"))
    assert (hit.response, hit.error) == ("Vždycky jsem byl vůdčí typ.", None)
    assert miss.response is None and "has no cs translation of 'Not a GEST sentence.'" in (miss.error or "")
    assert backend.stats()["missing"] == 1 and backend.stats()["answered"] == 1
    assert PublishedTranslationsBackend.request_kinds == {TRANSLATE}  # no chat: no other task runs on it
    assert backend.fingerprint.startswith("published:deepl:")


def test_published_backend_bad_input_is_one_line() -> None:
    with pytest.raises(UsageError, match=r"unknown published MT system 'systran'.*deepl, google_translate"):
        PublishedTranslationsBackend("systran", NoOptions())
    backend = PublishedTranslationsBackend("deepl", NoOptions())
    with pytest.raises(UsageError, match=r"no translations into 'hr'; it has cs, pl, ru, sk, sl, uk"):
        _answer(backend, _translate(GEST_ROW0, "hr"))
    with pytest.raises(UsageError, match="from English only"):
        _answer(backend, translate_request(GEST_ROW0, "cs", source="de"))
    assert set(SYSTEMS) == {"amazon_translate", "deepl", "google_translate", "nllb_3b"}


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, tmp_path: Path) -> Any:
    """``cli(*args)`` runs ``genderscope ARGS`` in this process (in ``tmp_path``): (exit code, stderr)."""
    from genderscope.cli.app import main

    monkeypatch.chdir(tmp_path)

    def call(*args: str) -> tuple[int, str]:
        monkeypatch.setattr(sys, "argv", ["genderscope", *args, "--no-progress"])
        try:
            main()
            code = 0
        except SystemExit as exc:
            code = int(exc.code or 0)
        return code, capsys.readouterr().err

    return call


def _block(run: Path) -> dict[str, Any]:
    return json.loads((run / "results.json").read_text())["tasks"]["gest-translation"]


def test_cli_replays_deepl(cli: Any, tmp_path: Path) -> None:
    pytest.importorskip("pymorphy3", reason="needs the [translation] extra")
    pytest.importorskip("morfeusz2", reason="needs the [translation] extra")
    code, err = cli(
        "run", "gest-translation", "--model", "published:deepl", "--languages", "cs,pl,ru",
        "--limit", "400", "--n-boot", "200", "--out", "run",
    )  # fmt: skip
    assert code == 0, err
    block = _block(tmp_path / "run")
    m = block["metrics"]
    for lang in ("cs", "pl", "ru"):
        names = [f"masculine_rate_{lang}_{s}" for s in range(1, 17)]
        names += [f"masculine_rate_{lang}", f"stereotype_rate_{lang}", f"detection_rate_{lang}"]
        for name in names:
            v = m[name]
            assert v["value"] is not None and v["ci_low"] <= v["value"] <= v["ci_high"], (name, v)
            assert 0.0 <= v["ci_low"] and v["ci_high"] <= 1.0, (name, v)
        f, mm = m[f"masculine_rate_{lang}_female"]["value"], m[f"masculine_rate_{lang}_male"]["value"]
        assert math.isclose(m[f"stereotype_rate_{lang}"]["value"], mm - f)
        assert math.isclose(m[f"masculine_rate_{lang}"]["value"], (mm + f) / 2)
        ranks = [r["rank"] for r in block["stereotypes"] if r["language"] == lang]
        assert sorted(ranks) == list(range(1, 17))
    assert block["counts"]["attempts"] == 1200 and block["counts"]["failed"] == 0
    assert m["stereotype_rate_cs"]["value"] > 0.2  # DeepL follows the stereotypes (paper: Fig. 2)
    line = json.loads((tmp_path / "run" / "attempts.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert line["response"] == "Vždycky jsem byl vůdčí typ." and line["speaker_gender"] == "male"
    assert line["clues"] == ["cs:l-participle:byl"]


def test_cli_with_the_null_model_detects_nothing(cli: Any, tmp_path: Path) -> None:
    pytest.importorskip("simplemma", reason="needs the [translation] extra")
    code, err = cli(
        "run", "gest-translation", "--model", "random", "--languages", "cs", "--limit", "8", "--out", "r"
    )
    assert code == 0, err
    block = _block(tmp_path / "r")
    assert block["metrics"]["detection_rate_cs"]["value"] == 0.0
    assert block["metrics"]["stereotype_rate_cs"]["value"] is None
    assert "no_ci" in block["metrics"]["stereotype_rate_cs"]
    assert block["counts"]["answered"] == 8 and block["counts"]["detected"] == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--model", "published:deepl", "--languages", "cs,xx"), "unsupported language 'xx'"),
        (("--model", "published:systran"), "unknown published MT system 'systran'"),
        (
            ("--model", "published:deepl", "--languages", "hr"),
            "published:deepl has no translations into 'hr'",
        ),
    ],
)
def test_cli_bad_input_is_one_line_exit_2(cli: Any, args: tuple[str, ...], message: str) -> None:
    pytest.importorskip("simplemma", reason="needs the [translation] extra")
    code, err = cli("run", "gest-translation", *args, "--out", "bad")
    assert code == 2
    lines = [x for x in err.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and message in lines[0], err
    assert "Traceback" not in err


def test_missing_morphology_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from genderscope.tasks.gest_translation import morph

    monkeypatch.setitem(sys.modules, "morfeusz2", None)  # import fails
    morph._morfeusz.cache_clear()
    try:
        with pytest.raises(UsageError, match=r"needs the package 'morfeusz2'.*genderscope\[translation\]"):
            morph.require("pl")
    finally:
        morph._morfeusz.cache_clear()


# -- agreement with the paper (kinit-sk/gest _mt.ipynb; fixture tests/fixtures/gest_translation) ----------

#: the largest mean absolute difference (over the 16 stereotypes) between the replay's Agresti–Coull
#: centres and the paper's, per (system, language), measured at 0.0150 (amazon_translate sl) when this
#: test was written; the paper prints two decimals, so ±0.005 of every cell is its rounding alone
MAD_BOUND = 0.016
#: DeepL's six languages: measured MAD 0.0040–0.0104 (docs/gest-translation.md)
DEEPL_MAD = {"cs": 0.0069, "pl": 0.0047, "ru": 0.0040, "uk": 0.0042, "sk": 0.0042, "sl": 0.0104}


def _check(cells: list[Any], bound: float) -> None:
    for c in cells:
        assert c.mad <= bound, (c.system, c.language, c.mad)
        assert c.inside == 16, (c.system, c.language, c.diffs)  # every cell inside the paper's printed CI
        assert 0.90 * c.yield_paper <= c.yield_ours <= 1.01 * c.yield_paper, (c.system, c.language)


def test_deepl_replay_agrees_with_the_paper() -> None:
    pytest.importorskip("pymorphy3", reason="needs the [translation] extra")
    pytest.importorskip("morfeusz2", reason="needs the [translation] extra")
    from genderscope_dev import gest_translation_compare as cmp

    paper, yields = cmp.paper_rates(), cmp.paper_yield()
    cells = []
    for lang, (ours, detected) in cmp.replay("deepl", list(DEEPL_MAD)).items():
        ref = [paper[("deepl", lang, s)] for s in range(1, 17)]
        cells.append(cmp.Cell("deepl", lang, ours, ref, detected, yields[("deepl", lang)]))
    _check(cells, MAD_BOUND)
    for c in cells:
        assert c.mad == pytest.approx(DEEPL_MAD[c.language], abs=5e-5), c.language


@pytest.mark.slow
def test_every_published_replay_agrees_with_the_paper() -> None:
    pytest.importorskip("pymorphy3", reason="needs the [translation] extra")
    pytest.importorskip("morfeusz2", reason="needs the [translation] extra")
    from genderscope_dev import gest_translation_compare as cmp

    cells = cmp.compare()
    assert len(cells) == 30
    _check(cells, MAD_BOUND)
