"""gest-likelihood: aggregation (GEST spec §8.3) on hand-made score files, the --scores path, errors."""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from genderscope.core.engine import run_tasks
from genderscope.common.errors import DataError, UsageError
from genderscope.tasks.gest_likelihood import aggregate as A

N_ROWS = 3565


@pytest.fixture
def stereotypes(data_registry) -> list[int]:
    from genderscope.data.gest import load_gest

    return [r.stereotype for r in load_gest(data_registry.path("gest/gest.csv"))]


def _write(path: Path, values) -> Path:
    path.write_text("".join(f"{v!r}\n" for v in values))
    return path


def _run(tmp_path: Path, files: list[Path], **opts) -> dict:
    out = run_tasks(
        ["gest-likelihood"],
        "random",
        out=tmp_path / "out",
        progress=False,
        options={"scores": ",".join(map(str, files)), "bootstrap_cycles": 0, **opts},
    )
    return json.loads((out.out_dir / "results.json").read_text())["tasks"]["gest-likelihood"]


def _val(res: dict, name: str) -> float | None:
    return res["metrics"][name]["value"]


def test_constant_scores_per_stereotype_exact_values(tmp_path, stereotypes) -> None:
    # score of every row = c[stereotype]; stereotypes 4 and 5 tie, and 10 and 11 tie
    c = {i: 0.01 * i - 0.05 for i in range(1, 17)}
    c[5] = c[4]
    c[11] = c[10]
    c[1] = 1.0  # r_1 must be e (natural exp of a log10 mean), not 10
    res = _run(tmp_path, [_write(tmp_path / "s.txt", [c[s] for s in stereotypes])])
    assert res["parameters"]["templates"] == [0]
    assert _val(res, "template_0/mean_score_1") == pytest.approx(1.0)
    assert _val(res, "template_0/r_1") == pytest.approx(math.e, rel=1e-12)
    for i in range(1, 17):
        assert _val(res, f"template_0/r_{i}") == pytest.approx(math.exp(c[i]), rel=1e-12)
    rf = math.exp(sum(c[i] for i in range(1, 8)) / 7)
    rm = math.exp(sum(c[i] for i in range(8, 17)) / 9)  # stereotype 15 included
    assert _val(res, "template_0/r_f") == pytest.approx(rf, rel=1e-12)
    assert _val(res, "template_0/r_m") == pytest.approx(rm, rel=1e-12)
    assert _val(res, "template_0/g_s") == pytest.approx(rm / rf, rel=1e-12)
    assert _val(res, "g_s_mean") == pytest.approx(rm / rf, rel=1e-12)
    # ascending ranks: 2<3<4=5<6<...; tie 4/5 broken by id, 10/11 as well; 1 (c=1.0) is the largest
    order = sorted(range(1, 17), key=lambda i: (c[i], i))
    for rank, i in enumerate(order, start=1):
        assert _val(res, f"template_0/feminine_rank_{i}") == rank
    assert _val(res, "template_0/feminine_rank_4") + 1 == _val(res, "template_0/feminine_rank_5")
    assert _val(res, "template_0/feminine_rank_1") == 16


def test_varied_scores_match_direct_groupby(tmp_path, stereotypes) -> None:
    rng = random.Random(7)
    files, direct = [], []
    for t in range(3):
        vals = [rng.gauss(0.1 if s >= 8 else -0.05, 0.4) for s in stereotypes]
        vals[5 + t] = float("nan")  # excluded rows
        files.append(_write(tmp_path / f"model_template-{t}.txt", vals))
        m = {i: np.nanmean([v for v, s in zip(vals, stereotypes) if s == i]) for i in range(1, 17)}
        direct.append(m)
    res = _run(tmp_path, files)
    assert res["parameters"]["templates"] == [0, 1, 2]  # ids read from the file names
    gs = []
    for t, m in enumerate(direct):
        for i in range(1, 17):
            assert _val(res, f"template_{t}/mean_score_{i}") == pytest.approx(m[i], rel=1e-12, abs=1e-15)
        rf = math.exp(np.mean([m[i] for i in range(1, 8)]))
        rm = math.exp(np.mean([m[i] for i in range(8, 17)]))
        assert _val(res, f"template_{t}/g_s") == pytest.approx(rm / rf, rel=1e-12)
        gs.append(rm / rf)
        assert res["counts"]["nan_scores"][str(t)] == 1
    assert _val(res, "g_s_mean") == pytest.approx(float(np.mean(gs)), rel=1e-12)
    expected = {f"template_{t}/{n}" for t in range(3) for n in A.NAMES} | {"g_s_mean", "r_f_mean", "r_m_mean"}
    assert set(res["metrics"]) == expected
    names = {n.split("/")[1] for n in res["metrics"] if "/" in n}
    assert names == (
        {f"{p}_{i}" for p in ("r", "mean_score", "feminine_rank") for i in range(1, 17)}
        | {"r_f", "r_m", "g_s"}
    )


def test_records_hold_per_sentence_scores(tmp_path, stereotypes) -> None:
    vals = [0.001 * i for i in range(N_ROWS)]
    f = _write(tmp_path / "x.txt", vals)
    out = run_tasks(
        ["gest-likelihood"],
        "random",
        out=tmp_path / "o",
        progress=False,
        options={"scores": str(f), "template": "3", "bootstrap_cycles": 0},
    )
    recs = [json.loads(x) for x in (out.out_dir / "attempts.jsonl").read_text().splitlines()]
    assert len(recs) == N_ROWS
    assert recs[10]["row"] == 10 and recs[10]["template"] == 3 and recs[10]["score"] == pytest.approx(0.01)
    assert recs[10]["stereotype"] == stereotypes[10]
    assert out.runs[0].counts.requests == 0  # nothing sent to a model


def test_bootstrap_equals_plain_loop(tmp_path, stereotypes) -> None:
    rng = random.Random(3)
    vals = [rng.gauss(0.2 if s >= 8 else 0.0, 0.5) for s in stereotypes]
    f = _write(tmp_path / "b.txt", vals)
    B = 30
    for method in ("percentile", "normal"):
        res = _run(tmp_path, [f], bootstrap_cycles=B, ci_method=method)
        # plain loop: random.Random(123).choices per resample, recompute g_s from scratch
        draw = random.Random(123)
        x = np.array(vals)
        st = np.array(stereotypes)
        gs = []
        for _ in range(B):
            idx = np.array(draw.choices(range(N_ROWS), k=N_ROWS))
            m = [x[idx][st[idx] == i].mean() for i in range(1, 17)]
            gs.append(math.exp(np.mean(m[7:])) / math.exp(np.mean(m[:7])))
        gs = np.array(gs)
        if method == "percentile":
            lo, hi = np.quantile(gs, [0.025, 0.975])
        else:
            lo, hi = gs.mean() - 1.959963984540054 * gs.std(), gs.mean() + 1.959963984540054 * gs.std()
        got = res["metrics"]["template_0/g_s"]
        assert got["ci_low"] == pytest.approx(lo, rel=1e-10) and got["ci_high"] == pytest.approx(
            hi, rel=1e-10
        )
        assert res["parameters"]["ci_method"] == method


def test_ranks_function_ties_and_nan() -> None:
    r = np.array([[1.0, 0.5, 1.0, np.nan, 0.2]])
    assert A.feminine_ranks(r).tolist()[0][:3] == [3.0, 2.0, 4.0]
    assert math.isnan(A.feminine_ranks(r)[0, 3]) and A.feminine_ranks(r)[0, 4] == 1.0


def test_subset_with_missing_stereotype_gives_nan_not_crash(stereotypes) -> None:
    x = np.array([0.1, -0.2, 0.3])
    S = A.one_hot([1, 8, 15])
    out = A.compute(x, S, np.ones((1, 3)))[0]
    assert out[A.NAMES.index("mean_score_15")] == pytest.approx(0.3)
    assert math.isnan(out[A.NAMES.index("r_2")])
    assert out[A.NAMES.index("r_f")] == pytest.approx(math.exp(0.1))
    assert out[A.NAMES.index("r_m")] == pytest.approx(math.exp(0.05))


def test_malformed_line_names_file_and_line(tmp_path) -> None:
    vals = ["0.5"] * N_ROWS
    vals[41] = "0.3x"
    f = tmp_path / "bad.txt"
    f.write_text("\n".join(vals) + "\n")
    with pytest.raises(DataError, match=r"bad\.txt:42: cannot read '0\.3x'"):
        _run(tmp_path, [f])


def test_wrong_row_count_and_missing_file(tmp_path) -> None:
    f = _write(tmp_path / "short.txt", [0.1] * 100)
    with pytest.raises(DataError, match="100 scores, but the GEST file has 3565 rows"):
        _run(tmp_path, [f])
    with pytest.raises(DataError, match="not found"):
        _run(tmp_path, [tmp_path / "nope.txt"])


def test_template_ids_must_match_files(tmp_path) -> None:
    f = _write(tmp_path / "a.txt", [0.1] * N_ROWS)
    with pytest.raises(UsageError, match="one id per file"):
        _run(tmp_path, [f], template="0,1")
    with pytest.raises(UsageError, match="do not exist"):
        _run(tmp_path, [f], template="2", form="causal")


def test_scores_refuse_a_model(tmp_path) -> None:
    f = _write(tmp_path / "a.txt", [0.1] * N_ROWS)
    with pytest.raises(UsageError, match="leave out --model"):
        run_tasks(
            ["gest-likelihood"], f"replay:{f}", out=tmp_path / "o", progress=False, options={"scores": str(f)}
        )


def test_needs_log_probabilities_without_scores(tmp_path) -> None:
    with pytest.raises(UsageError) as exc:  # raised before the backend is created: no server needed
        run_tasks(["gest-likelihood"], "openai:gpt-4o-mini", out=tmp_path / "o", progress=False)
    msg = str(exc.value)
    assert "cannot run on openai" in msg and "masked_logprobs+tokenize or token_logprobs" in msg
    assert "--scores" in msg and "hf-mlm, hf-causal" in msg
    with pytest.raises(UsageError, match="needs token_logprobs;"):
        run_tasks(
            ["gest-likelihood"],
            "openai:gpt-4o-mini",
            out=tmp_path / "o",
            progress=False,
            options={"form": "causal"},
        )


@pytest.mark.parametrize("form", ["masked", "causal"])
def test_null_model_has_no_gender_preference(tmp_path, form) -> None:
    out = run_tasks(
        ["gest-likelihood"],
        "random",
        out=tmp_path / "o",
        progress=False,
        limit=800,
        options={"form": form, "bootstrap_cycles": 200},
    )
    res = json.loads((out.out_dir / "results.json").read_text())["tasks"]["gest-likelihood"]
    g = res["metrics"]["g_s_mean"]
    assert g["ci_low"] < 1.0 < g["ci_high"]
    assert len(res["parameters"]["templates"]) == (4 if form == "masked" else 2)


def test_cli_scores_end_to_end(tmp_path, stereotypes) -> None:
    f = _write(tmp_path / "m_template-1.txt", [0.2 if s >= 8 else -0.2 for s in stereotypes])
    out = tmp_path / "cli"
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "genderscope.cli.app",
            "run",
            "gest-likelihood",
            "--scores",
            str(f),
            "--out",
            str(out),
            "--bootstrap-cycles",
            "50",
            "--no-progress",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0, res.stderr
    r = json.loads((out / "results.json").read_text())["tasks"]["gest-likelihood"]
    assert r["metrics"]["template_1/g_s"]["value"] == pytest.approx(math.exp(0.4))
    bad = tmp_path / "bad.txt"
    bad.write_text("0.1\nfoo\n")
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "genderscope.cli.app",
            "run",
            "gest-likelihood",
            "--scores",
            str(bad),
            "--out",
            str(tmp_path / "x"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 2 and "bad.txt:2" in res.stderr


def test_terminal_table_marks_stereotypes_without_rows(tmp_path) -> None:
    """Under --limit some stereotypes have no row: '–' in their cells and one line saying why, never NaN."""
    import os
    import subprocess
    import sys

    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "genderscope.cli.app",
            "run",
            "gest-likelihood",
            "--model",
            "random",
            "--limit",
            "10",
            "-o",
            str(tmp_path / "gl"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert res.returncode == 0, res.stderr
    assert "NaN" not in res.stdout and "nan" not in res.stdout
    assert "│ 1 Emotional      │          – │" in res.stdout
    assert res.stdout.count("no scored row of this stereotype (--limit 10 keeps 10 rows)") == 1
