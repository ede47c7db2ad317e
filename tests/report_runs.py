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

    from genderscope.cli import app

    res = CliRunner().invoke(app, ["run", *args])
    assert res.exit_code == 0, res.output


def demo_like_runs(root: Path) -> list[Path]:
    """Runs shaped like the demo's, made with ``genderscope run`` on the random model and the tiny models
    (random-weight BERT and GPT-2 over the tasks' vocabulary), plus the bordia-sweep fixture."""
    from genderscope.data.registry import DataRegistry
    from genderscope.testing.tiny_models import (
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
