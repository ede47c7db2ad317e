"""Progress and time: off a terminal a running step prints done/total, rate and ETA every few seconds, local
generation adds tokens and tokens/s with a bound on the time left, and options that imply a long CPU
generation run get a one-line hint before any answer is generated."""

from __future__ import annotations

from repo_paths import ROOT
import os
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from genderscope.core import progress
from genderscope.core.progress import StepLines, generation_hint



def _jobs(n: int, max_tokens: int, kind: str = "chat") -> list[SimpleNamespace]:
    return [
        SimpleNamespace(request=SimpleNamespace(kind=kind, payload={"max_tokens": max_tokens}))
        for _ in range(n)
    ]


def test_a_running_step_prints_done_total_rate_and_eta() -> None:
    lines = StepLines(first=0.05, every=0.05)
    with lines:
        lines.add("gest", total=10, cached=2)
        time.sleep(0.2)
        lines.advance(3, "gest")
        now = lines.lines()
    assert len(now) == 1 and now[0].startswith("gest: 5/10 answered (50 %), ")
    assert "/s, ETA 0:00:0" in now[0] and "elapsed" in now[0]


def test_heartbeat_lines_reach_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    with StepLines(first=0.05, every=0.05) as lines:
        lines.add("abc", total=4)
        time.sleep(0.3)
    err = capsys.readouterr().err.splitlines()
    assert any(ln.startswith("abc: 0/4 answered (0 %)") for ln in err), err
    assert err[-1].startswith("abc: 4 answered, 0 from cache")  # the step's closing line


def test_tokens_and_time_left_for_local_generation(monkeypatch: pytest.MonkeyPatch) -> None:
    lines = StepLines(first=10, every=10)
    progress.expect_tokens(1000)
    monkeypatch.setattr(progress.TOKENS, "first", time.perf_counter() - 10)
    progress.note_tokens(200)
    lines.add("gest", total=16)
    assert "200 tokens, 20/s, ≤ 0:00:40 left" in lines.lines()[0]


def test_hint_for_a_long_cpu_generation_run_only() -> None:
    cpu = SimpleNamespace(
        tok=object(), device="cpu", options=SimpleNamespace(device="cpu", gen_batch_size=16)
    )
    hint = generation_hint(_jobs(180, 300), cpu)
    assert hint is not None and "180 answers of up to 300 new tokens" in hint and "--max-tokens" in hint
    assert "\n" not in hint
    assert generation_hint(_jobs(20, 300), cpu) is None  # short
    gpu = SimpleNamespace(tok=object(), device="cuda:0", options=SimpleNamespace(device="cuda"))
    assert generation_hint(_jobs(180, 300), gpu) is None
    server = SimpleNamespace(options=SimpleNamespace(concurrency=16))
    assert generation_hint(_jobs(180, 300), server) is None
    assert generation_hint(_jobs(180, 300, kind="loglikelihood"), cpu) is None
    short_answers = generation_hint(_jobs(4000, 10), cpu)  # many answers of few tokens: --limit helps
    assert short_answers is not None and "--max-tokens" not in short_answers and "--limit" in short_answers


@pytest.mark.slow
@pytest.mark.usefixtures("hf")
def test_local_generation_prints_progress_with_tokens(tmp_path: Path, data_registry) -> None:
    """hf-causal plain continuation in a subprocess off a terminal, heartbeat every 0.2 s."""
    from genderscope.demo_models import build_tiny_causal, likelihood_task_texts, words_of

    model = build_tiny_causal(tmp_path / "tiny", words_of(likelihood_task_texts(data_registry)), seed=1)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "GENDERSCOPE_PROGRESS_SECONDS": "0.2"}
    cmd = [sys.executable, "-m", "genderscope.cli", "run", "cooccurrence-amplification", "--model",
           f"hf-causal:{model}", "--samples", "40", "--max-tokens", "60", "--out", str(tmp_path / "run"),
           "--corpus", "wikitext-2:valid"]  # fmt: skip
    res = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    beats = [
        ln for ln in res.stderr.splitlines() if ln.startswith("cooccurrence-amplification: ") and "/" in ln
    ]
    assert beats, res.stderr[-2000:]
    assert any("tokens" in ln for ln in beats), beats


def test_the_terminal_bar_shows_tokens() -> None:
    import io

    from rich.console import Console

    from genderscope.core.progress import RunProgress, note_tokens

    buf = io.StringIO()
    bar = RunProgress(Console(file=buf, force_terminal=True, width=160))
    with bar:
        bar.add("gest", total=10)
        note_tokens(1234)
        bar._progress.refresh()
    assert "0/10" in buf.getvalue() and "1,234 tokens" in buf.getvalue()


@pytest.mark.slow
@pytest.mark.usefixtures("hf")
def test_local_chat_generation_prints_progress(tmp_path: Path, data_registry) -> None:
    """hf-causal chat (a tiny model given a chat template) in a subprocess off a terminal."""
    import json

    from genderscope.demo_models import build_tiny_causal, likelihood_task_texts, words_of

    words = words_of(likelihood_task_texts(data_registry) + ["Who is more likely to say Men Women Neither"])
    model = build_tiny_causal(tmp_path / "tiny", words, seed=2, n_positions=1024)
    cfg = json.loads((model / "tokenizer_config.json").read_text())
    cfg["chat_template"] = (
        "{% for m in messages %}{{ m['content'] }} {% endfor %}{% if add_generation_prompt %}:{% endif %}"
    )
    (model / "tokenizer_config.json").write_text(json.dumps(cfg))
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "GENDERSCOPE_PROGRESS_SECONDS": "0.5"}
    cmd = [
        sys.executable,
        "-m",
        "genderscope.cli",
        "run",
        "gest",
        "--model",
        f"hf-causal:{model}",
        "--limit",
        "5",
        "--max-tokens",
        "60",
        "--gen-batch-size",
        "4",
        "--out",
        str(tmp_path / "run"),
    ]
    res = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    beats = [ln for ln in res.stderr.splitlines() if ln.startswith("gest: ") and "/30 answered" in ln]
    assert beats and any("tokens" in ln for ln in beats), res.stderr[-2000:]
