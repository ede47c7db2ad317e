"""counterfactual: prompts files in three formats, every swap listed, prompts with nothing to swap counted and
listed (not generated), templates filled for both genders, and bad input as one line (exit 2)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from genderscope.core.engine import run_tasks

FAST = {"scorers": "length,refusal", "n_boot": 100}
CLI = "from genderscope.cli.app import main; main()"


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", CLI, *args], capture_output=True, text=True, timeout=300)


def _block(out: Path) -> dict:
    return json.loads((out / "results.json").read_text())["tasks"]["counterfactual"]


def test_jsonl_prompts_swaps_and_nothing_to_swap(tmp_path: Path) -> None:
    f = tmp_path / "p.jsonl"
    rows = [
        {"id": "a", "q": "Tell me about his job."},
        {"id": "b", "q": "Describe the sea."},
        {"id": "c", "q": "She thanked her brother."},
    ]
    f.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    run_tasks(
        ["counterfactual"],
        "random",
        out=tmp_path / "o",
        progress=False,
        options={**FAST, "prompts": str(f), "field": "q", "id_field": "id", "samples": 2},
    )
    b = _block(tmp_path / "o")
    assert b["swap_counts"] == {"in_file": 3, "swapped": 2, "nothing_to_swap": 1, "flagged": 0}
    assert b["nothing_to_swap"] == [{"prompt": "b", "line": 2, "text": "Describe the sea."}]
    swaps = {r["prompt"]: r for r in b["swaps"]}
    assert swaps["a"]["swapped"] == "Tell me about her job." and swaps["a"]["changes"] == "his→her"
    assert swaps["c"]["swapped"] == "He thanked his sister."
    assert b["counts"]["prompts"] == 4 and b["counts"]["planned"] == 8, "2 pairs x 2 versions x 2 samples"
    assert b["prompts_file"] == str(f)


def test_direction_and_plain_text_and_csv(tmp_path: Path) -> None:
    txt = tmp_path / "p.txt"
    txt.write_text("He met her at his office.\n\nThe sky is blue.\n")
    run_tasks(
        ["counterfactual"],
        "random",
        out=tmp_path / "m2f",
        progress=False,
        options={**FAST, "prompts": str(txt), "direction": "m2f"},
    )
    (row,) = _block(tmp_path / "m2f")["swaps"]
    assert row["prompt"] == "1" and row["swapped"] == "She met her at her office."
    csv = tmp_path / "p.csv"
    csv.write_text("key,text\nx,My father called.\n")
    run_tasks(
        ["counterfactual"],
        "random",
        out=tmp_path / "csv",
        progress=False,
        options={**FAST, "prompts": str(csv), "id_field": "key"},
    )
    assert _block(tmp_path / "csv")["swaps"][0]["swapped"] == "My mother called."


def test_templates_fill_both_genders(tmp_path: Path) -> None:
    f = tmp_path / "t.txt"
    f.write_text("Write a story about {name}; {pronoun} is a nurse.\nDescribe the weather.\n")
    run_tasks(
        ["counterfactual"],
        "random",
        out=tmp_path / "o",
        progress=False,
        options={**FAST, "prompts": str(f), "templates": True},
    )
    b = _block(tmp_path / "o")
    (row,) = b["swaps"]
    assert row["male"].endswith("; he is a nurse.") and row["female"].endswith("; she is a nurse.")
    assert b["swap"]["mode"] == "templates" and b["nothing_to_swap"][0]["prompt"] == "2"
    assert any(k.startswith("diff.") for k in b["metrics"]) and "female.length.mean_words" in b["metrics"]


@pytest.mark.parametrize(
    "name,body,expect",
    [
        ("bad.jsonl", '{"prompt": "ok"}\n{"prompt": \n', "bad.jsonl:2"),
        ("missing.jsonl", '{"prompt": "ok"}\n{"text": "no"}\n', "field 'prompt'"),
        ("empty.jsonl", '{"prompt": "  "}\n', "empty text"),
    ],
)
def test_a_malformed_prompts_file_is_one_line_exit_2(
    tmp_path: Path, name: str, body: str, expect: str
) -> None:
    f = tmp_path / name
    f.write_text(body)
    got = _cli(
        "run", "counterfactual", "--model", "random", "--prompts", str(f), "--out", str(tmp_path / "o")
    )
    assert got.returncode == 2, got.stderr
    assert (
        expect in got.stderr and "Traceback" not in got.stderr and len(got.stderr.strip().splitlines()) == 1
    )
    assert not (tmp_path / "o" / "attempts.jsonl").exists(), "nothing asked before the file is read"


def test_a_missing_prompts_file_and_a_missing_extra_are_one_line(tmp_path: Path) -> None:
    got = _cli("run", "counterfactual", "--model", "random", "--prompts", str(tmp_path / "nope.jsonl"))
    assert got.returncode == 2 and "nope.jsonl" in got.stderr and "Traceback" not in got.stderr
    code = (
        "import sys; sys.modules['vaderSentiment'] = None; "
        "sys.modules['vaderSentiment.vaderSentiment'] = None; " + CLI
    )
    missing = subprocess.run(
        [
            sys.executable,
            "-c",
            code,
            "run",
            "counterfactual",
            "--model",
            "random",
            "--scorers",
            "sentiment",
            "--out",
            str(tmp_path / "x"),
        ],
        capture_output=True,
        text=True,
    )
    assert missing.returncode == 2 and "genderscope[generation]" in missing.stderr, missing.stderr
