"""Run folders for the report tests: small real runs on the random model, and hand-written fixtures
(tests/fixtures/report/, written before run logs carried a schema_version) for results that need a real
model (dawinobias, abc) or a long sweep (bordia-sweep)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "report"
MALICIOUS = ["<script>alert(1)</script>", "<img src=x onerror=alert(1)>"]


def gest_run(out: Path, seed: int = 0, limit: int = 40) -> Path:
    """GEST on the random null model (``limit`` sentences, 200 bootstrap resamples)."""
    from genderscope.core.engine import run_tasks

    run_tasks(
        ["gest"], f"random:{seed}", limit=limit, out=out, progress=False, options={"bootstrap_cycles": "200"}
    )
    return out


def winobias_adjectives_run(out: Path, limit: int = 12) -> Path:
    """WinoBias + adjectives on the random model: 3 conditions (baseline included), 2 trials."""
    from genderscope.core.engine import run_tasks

    run_tasks(
        ["winobias-adjectives"],
        "random",
        limit=limit,
        trials=2,
        out=out,
        progress=False,
        options={"conditions": "arrogant_responsive,none_blond", "bootstrap_samples": "200"},
    )
    return out


def fixture_run(name: str, out: Path) -> Path:
    """A copy of a hand-written fixture run folder (so tests may modify it)."""
    shutil.copytree(FIXTURES / name, out)
    return out


def poison_attempts(run_dir: Path) -> None:
    """Replace the first answers in attempts.jsonl by HTML/script payloads (an untrusted model's output)."""
    path = run_dir / "attempts.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    for i, payload in enumerate(MALICIOUS):
        rec = json.loads(lines[i])
        rec["response"] = payload
        rec["parsed_option"] = payload
        lines[i] = json.dumps(rec)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def cli_run(*args: str) -> None:
    """``genderscope run ARGS`` through the CLI (in process); fails the test with the CLI's output."""
    from typer.testing import CliRunner

    from genderscope.cli.app import app

    res = CliRunner().invoke(app, ["run", *args])
    assert res.exit_code == 0, res.output


def demo_like_runs(root: Path) -> list[Path]:
    """Runs shaped like the demo's, made with ``genderscope run`` on the random model and the tiny models
    (random-weight BERT and GPT-2 over the tasks' vocabulary), plus the bordia-sweep fixture."""
    from genderscope.data.registry import DataRegistry
    from genderscope.demo_models import (
        build_tiny_causal,
        build_tiny_mlm,
        genda_lens_texts,
        likelihood_task_texts,
        words_of,
    )

    mlm = build_tiny_mlm(root / "models" / "tiny-mlm-model", words_of(genda_lens_texts(DataRegistry())))
    causal = build_tiny_causal(
        root / "models" / "tiny-gpt-model", words_of(likelihood_task_texts(DataRegistry()))
    )
    runs = {
        "gest-random": ["gest", "--model", "random", "--limit", "200", "--bootstrap-cycles", "200"],
        "wba-random": [
            "winobias-adjectives",
            "--model",
            "random",
            "--limit",
            "40",
            "--trials",
            "2",
            "--conditions",
            "arrogant_responsive,none_blond",
            "--bootstrap-samples",
            "200",
        ],
        "gest-random9": ["gest", "--model", "random:9", "--limit", "20", "--bootstrap-cycles", "200"],
        "genda-tiny-mlm": [
            "dawinobias",
            "abc",
            "--model",
            f"hf-mlm:{mlm}",
            "--limit",
            "40",
            "--n-boot",
            "200",
        ],
        "genda-tiny-mlm-compat": ["abc", "--model", f"hf-mlm:{mlm}", "--limit", "40", "--mode", "genda-lens"],
        "likelihood-tiny-gpt": [
            "winobias-lm",
            "gest-likelihood",
            "--model",
            f"hf-causal:{causal}",
            "--limit",
            "40",
        ],
    }
    out = []
    for name, args in runs.items():
        cli_run(*args, "--out", str(root / name))
        out.append(root / name)
    out.append(fixture_run("bordia-sweep", root / "bordia-sweep"))
    return out


#: model labels of :func:`many_model_runs`: long and short, some alike (the columns of a 12-model audit)
MANY_MODELS = [
    "Llama-3.1-70B-Instruct",
    "Llama-3.1-8B-Instruct",
    "gpt-4o-mini-2024-07-18",
    "gpt-4o",
    "Qwen2.5-0.5B-Instruct (temperature 0.7)",
    "Qwen2.5-7B-Instruct",
    "SmolLM2-135M-Instruct",
    "gemma-3-270m-it",
    "Mistral-7B-Instruct-v0.3",
    "Phi-3.5-mini-instruct",
    "random",
    "my-finetune@a1b2c3d",
]


def _shifted(block: dict, shift: float, widen: float) -> dict:
    """A results block with every metric's value and interval moved by ``shift``, the interval widened."""
    out = json.loads(json.dumps(block))
    for m in out.get("metrics", {}).values():
        if isinstance(m.get("value"), (int, float)):
            m["value"] += shift
        if isinstance(m.get("ci_low"), (int, float)) and isinstance(m.get("ci_high"), (int, float)):
            m["ci_low"] += shift - widen
            m["ci_high"] += shift + widen
    return out


def many_model_runs(root: Path, extra_tests: int = 10) -> list[Path]:
    """One run folder per :data:`MANY_MODELS` label, each with every task of ``run all`` (the summary
    entries of a real random-model run, tests/fixtures/report/all-random-summary.json, moved per model so
    that every state shows) plus ``extra_tests`` tests no registry knows (descriptive), and the
    bordia-sweep fixture: 12 models × 31 tests (cheap: no model runs)."""
    fixture = json.loads((FIXTURES / "all-random-summary.json").read_text(encoding="utf-8"))
    out = []
    for k, label in enumerate(MANY_MODELS):
        shift, widen = (k % 5 - 2) * 0.06, (k % 3) * 0.05
        tasks = {t: _shifted(b, shift, widen) for t, b in fixture["tasks"].items()}
        for i in range(extra_tests):
            value = round(0.1 * i + shift, 3)
            tasks[f"custom-probe-{i + 1:02d}"] = {
                "metrics": {"score": {"value": value, "ci_low": value - 0.05, "ci_high": value + 0.05}},
                "headline": ["score"],
            }
        folder = root / f"model-{k:02d}"
        folder.mkdir(parents=True)
        results = {"schema_version": fixture["schema_version"], "model": "random", "tasks": tasks}
        (folder / "results.json").write_text(json.dumps(results), encoding="utf-8")
        manifest = {
            "schema_version": 1,
            "created": "2026-01-01T00:00:00",
            "label": label,
            "model": {"spec": "random", "kind": "random", "target": "", "options": {}, "fingerprint": "r"},
            "tasks": {t: {"options": {}} for t in tasks},
        }
        (folder / "run.json").write_text(json.dumps(manifest), encoding="utf-8")
        out.append(folder)
    out.append(fixture_run("bordia-sweep", root / "bordia-sweep"))
    return out
