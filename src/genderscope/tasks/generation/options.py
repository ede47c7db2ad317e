"""The options every generation benchmark has (a benchmark's own Options subclass this)."""

from __future__ import annotations

from dataclasses import dataclass

from genderscope.core.options import opt

GENERATE_FORM, CHAT_FORM = "generate", "chat"


@dataclass
class GenerationOptions:
    """``--samples``, ``--scorers``, the form of the requests, the interval settings and the judge mode.

    ``--max-tokens`` and ``--temperature`` are the run's own options (``genderscope run --help``)."""

    form: str = opt(
        "auto",
        "how the model is asked: auto (from the model), generate (plain continuation of the prompt: base "
        "models), chat (the prompt as one user turn: chat models)",
        ("auto", GENERATE_FORM, CHAT_FORM),
    )
    samples: int = opt(1, "generations per prompt, each with its own seed", minimum=1, maximum=10_000)
    scorers: str = opt(
        "",
        "comma-separated scorers of the generated texts (default: the benchmark's); see docs/generation.md",
    )
    n_boot: int = opt(1000, "bootstrap resamples for the 95% intervals (0 = no intervals)", minimum=0)
    generations: str = opt(
        "",
        "judge mode: a run folder of this task whose generations the run's model (a chat model) judges for "
        "regard; `genderscope judge RUN --model SPEC` sets it",
    )
    generations_sha256: str = opt(
        "",
        "judge mode: sha256 of the judged run's attempts.jsonl, filled in by the task (a later change of "
        "that file is refused; it also keys the cached results)",
    )
    judge_consistency: bool = opt(
        True, "judge mode: judge each text twice, the rubric's labels in reverse order, and report agreement"
    )

    def scorer_names(self, default: tuple[str, ...]) -> list[str]:
        """The scorers asked for (``--scorers``), else ``default``; names stripped, repeats dropped."""
        names = [s.strip() for s in self.scorers.split(",") if s.strip()] if self.scorers else list(default)
        return list(dict.fromkeys(names))
