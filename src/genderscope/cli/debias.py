"""``genderscope debias METHOD --model SPEC --out DIR``: the command line of :mod:`.run`."""

from __future__ import annotations

import typer
from rich.console import Console

from genderscope.cli.options import routed_command
from genderscope.commands.debias.options import DebiasOptions

out = Console()


def register(app: typer.Typer) -> None:
    """Add ``debias`` to the top-level command line."""
    routed_command(app, "debias", DebiasOptions, "debias")(debias_cmd)


def debias_cmd(options: DebiasOptions) -> None:
    """Fine-tune a model to reduce gender bias; writes OUT/model (a model folder every task accepts) and
    OUT/debias.json (method, data, hyper-parameters, steps, seed, perplexity before and after).

    Examples:

    * `genderscope debias cda --model hf-causal:SmolLM2-135M-Instruct.Q4_1.gguf --out runs/smol-cda`

    * `genderscope debias bordia --model hf-causal:./gpt2 --lambda 1 --adapter embeddings --out runs/gpt2-bb`

    Then audit both: `genderscope run crows-pairs --model hf-causal:runs/smol-cda/model`.
    """
    from genderscope.commands.debias.run import debias
    from genderscope.core.paths import display_path

    rec = debias(options)
    ppl = rec["perplexity"]
    if ppl["before"] and ppl["after"]:
        out.print(f"perplexity on {ppl['corpus']}: {ppl['before']['ppl']:.2f} -> {ppl['after']['ppl']:.2f}")
    if "audit" in rec:
        from genderscope.core.paired import PairedChange
        from genderscope.report.compare import paired_table

        out.print(paired_table([PairedChange(**c) for c in rec["audit"]["changes"]]))
        out.print(f"before/after view: [bold]{display_path(rec['audit']['report'])}[/bold]")
    out.print(f"debiased model: [bold]{rec['model']}[/bold]; record in {options.out}/debias.json")
