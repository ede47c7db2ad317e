"""The Bordia & Bowman step of ``genderscope demo``: a tiny λ-sweep (λ ∈ {0, 0.1}) on WikiText-2 valid.

To stay within a few minutes on 2 CPU cores the WikiText-2 validation split (from the data registry) is cut
by lines into train (first 25 %), valid (next 5 %) and test (next 5 %) slices written into the output
folder; tiny preset with batch 20 and 1 epoch; 100 samples × 100 words per λ; 200 bootstrap resamples.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

DEMO_LAMBDAS = (0.0, 0.1)


def split_lines(text: str, fractions: tuple[float, float, float] = (0.25, 0.05, 0.05)) -> list[str]:
    """Consecutive line slices of ``text`` with the given shares of its lines."""
    lines = text.split("\n")
    n = len(lines)
    out, start = [], 0
    for f in fractions:
        stop = start + int(n * f)
        out.append("\n".join(lines[start:stop]) + "\n")
        start = stop
    return out


def run_bordia_demo(out_dir: Path, console: Console | None = None) -> Path:
    """Run the tiny sweep into ``out_dir``; returns the folder."""
    import warnings

    from genderscope.bordia.cooccurrence import atomic_write_text
    from genderscope.bordia.tables import print_sweep_table
    from genderscope.bordia.text import read_corpus
    from genderscope.commands.bordia.options import SweepOptions
    from genderscope.commands.bordia.sweep import run_sweep

    console = console or Console()
    out_dir = Path(out_dir)
    text = read_corpus(["wikitext-2:valid"])[0].text
    paths = []
    for name, part in zip(("train.txt", "valid.txt", "test.txt"), split_lines(text)):
        atomic_write_text(out_dir / "data" / name, part)
        paths.append(str(out_dir / "data" / name))
    options = SweepOptions(
        dataset="wikitext-2",
        train=paths[0],
        valid=paths[1],
        test=paths[2],
        pairs="wiki",
        lambdas=DEMO_LAMBDAS,
        preset="tiny",
        batch_size=20,
        epochs=1,
        test_batch_size=10,
        eval_batch_size=10,
        samples=100,
        words=100,
        bootstrap=200,
        out=out_dir,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = run_sweep(options, log=lambda s: console.print(f"[dim]{s}[/dim]"))
    print_sweep_table(result.rows, "wikitext-2 (valid slices, tiny preset)", console)
    return out_dir


def run_bordia_score_demo(out_dir: Path, console: Console | None = None) -> Path:
    """``bordia score`` on the WikiText-2 validation text (pairs ``wiki``) into ``out_dir``."""
    from genderscope.bordia.tables import print_scores
    from genderscope.commands.bordia.options import CorpusScoreOptions
    from genderscope.commands.bordia.score import score_corpus

    scores = score_corpus(CorpusScoreOptions(corpora=["wikitext-2:valid"], pairs="wiki", out=Path(out_dir)))
    print_scores(scores, console=console or Console())
    return Path(out_dir)
