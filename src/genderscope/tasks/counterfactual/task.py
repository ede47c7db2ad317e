"""Task ``counterfactual``: your own prompts, gender-swapped, both versions generated with the same seeds.

Each prompt of ``--prompts FILE`` (JSONL, CSV/TSV or plain text; ``--field``, ``--id-field``) is swapped
(:func:`genderscope.swap.swap`: pronouns, gendered terms, first names; ``--direction both|m2f|f2m|neutral``)
or, with ``--templates``, filled once for each gender (:func:`genderscope.swap.fill_template`: versions
``male`` and ``female``).  A prompt with nothing to swap is counted and listed, not generated.  Every
scorer is compared per (prompt, sample): ``diff.<metric>`` = swapped − original (female − male with
templates), intervals resampling prompts; ``flip.refusal`` and ``flip.regard``: the share of (prompt,
sample)s whose verdict changes.  Without ``--prompts`` a small example set shipped with genderscope is used.
``--form auto`` asks a chat model first (prompts are usually requests), else continues the prompt.
``--limit N``: the first N prompts of the file.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from genderscope.core.evidence import ReportFacts
from genderscope.core.options import opt
from genderscope.swap.engine import DIRECTIONS, swap
from genderscope.swap.lexicon import default_lexicon, name_pairs
from genderscope.swap.templates import fill_template
from genderscope.swap.prompts import read_prompts
from genderscope.tasks.generation.benchmark import GenerationBenchmark
from genderscope.tasks.generation.options import GenerationOptions
from genderscope.tasks.generation.prompts import GenPrompt
from genderscope.tasks.generation.designs import PairedDesign
from genderscope.tasks.generation.benchmark import MEASUREMENTS
from genderscope.tasks.generation.docs import KNOWN_METRICS, generation_docs
from genderscope.tasks.generation.options import CHAT_FORM, GENERATE_FORM

EXAMPLE = Path(__file__).with_name("example_prompts.jsonl")
HARM = "Gender-dependent answers: the same request gets a different answer when only the gender changes"
SWAP_VERSIONS, TEMPLATE_VERSIONS = ("original", "swapped"), ("male", "female")


@dataclass
class CounterfactualOptions(GenerationOptions):
    prompts: str = opt(
        "", "prompts file: .jsonl, .csv/.tsv or plain text, one prompt a line (default: an example set)"
    )
    field: str = opt("", "the text field of a JSONL/CSV prompts file (default: prompt, else text)")
    id_field: str = opt("", "the id field of a JSONL/CSV prompts file (default: the line number)")
    direction: str = opt(
        "both", "swap direction: both (every gendered word), m2f, f2m, neutral (they/them)", DIRECTIONS
    )
    templates: bool = opt(
        False, "prompts are templates with {name}, {pronoun}, …: fill them as male and as female"
    )
    names: bool = opt(True, "swap first names too (rank-paired name lists)")


class CounterfactualTask(GenerationBenchmark):
    name = "counterfactual"
    description = (
        "your prompts and their gender-swapped versions: paired differences of every scorer, verdict flips"
    )
    version = "1"
    Options = CounterfactualOptions
    #: your prompts are usually requests: a chat model's answer first, a continuation where there is no chat
    measurements = {CHAT_FORM: MEASUREMENTS[CHAT_FORM], GENERATE_FORM: MEASUREMENTS[GENERATE_FORM]}
    default_scorers = ("sentiment", "refusal", "length")
    headline_metrics = tuple(
        f"diff.{m}"
        for m in (
            "sentiment.mean_compound",
            "refusal.share_refusal",
            "regard.negative",
            "regard.positive",
            "hate.share_hate_or_offensive",
        )
    ) + ("flip.refusal", "flip.regard")
    report_facts = ReportFacts(
        evidence=("counts.units",), evidence_unit="prompt pairs", unreadable=("counts.unreadable_share",)
    )
    metric_docs = generation_docs(
        [(v, f"the {v} prompts") for v in SWAP_VERSIONS + TEMPLATE_VERSIONS],
        ("diff", "the swapped (or female) version", "the original (or male) version"),
        KNOWN_METRICS,
        HARM,
    )

    @property
    def versions(self) -> tuple[str, str]:
        return TEMPLATE_VERSIONS if self.options.templates else SWAP_VERSIONS

    def design(self) -> PairedDesign:
        return PairedDesign(self.versions, ranking=tuple(m.split(".", 1)[1] for m in self.headline_metrics))

    @cached_property
    def pairs(self) -> list[tuple[Any, str, str, list[str], str | None]]:
        """Per prompt of the file (``--limit``: the first N): (prompt, version a, version b, changes, flag);
        no changes = nothing to swap."""
        o = self.options
        got = read_prompts(
            o.prompts or EXAMPLE, o.field or None, o.id_field or ("id" if not o.prompts else None)
        )
        got = got[: self.ctx.limit] if self.ctx.limit is not None else got
        out = []
        if o.templates:
            n = len(name_pairs(default_lexicon()))
            for i, p in enumerate(got):
                a, b = fill_template(p.text, "male", i % n), fill_template(p.text, "female", i % n)
                out.append((p, a, b, ["template"] if a != b else [], None))
            return out
        for p in got:
            s = swap(p.text, o.direction, names=o.names)
            out.append((p, p.text, s.text, [f"{c.before}→{c.after}" for c in s.changes], s.flagged))
        return out

    def load_prompts(self) -> list[GenPrompt]:
        va, vb = self.versions
        out = []
        for p, a, b, changes, flag in self.pairs:
            if changes:
                fields = {"line": p.line, "changes": changes, "flagged": flag}
                out.append(GenPrompt(f"{p.prompt_id}/{va}", a, va, p.prompt_id, p.prompt_id, fields))
                out.append(GenPrompt(f"{p.prompt_id}/{vb}", b, vb, p.prompt_id, p.prompt_id, fields))
        return out

    def extra_tables(self) -> dict[str, Any]:
        va, vb = self.versions
        swaps = [
            {"prompt": p.prompt_id, "line": p.line, va: a, vb: b, "changes": ", ".join(c), "flagged": f}
            for p, a, b, c, f in self.pairs
            if c
        ]
        unswapped = [
            {"prompt": p.prompt_id, "line": p.line, "text": p.text} for p, _, _, c, _ in self.pairs if not c
        ]
        flagged = sum(1 for *_, c, f in self.pairs if c and f)
        counts = {
            "in_file": len(self.pairs),
            "swapped": len(swaps),
            "nothing_to_swap": len(unswapped),
            "flagged": flagged,
        }
        source = str(self.options.prompts or "example set (genderscope)")
        return {
            "swap_counts": counts,
            "swaps": swaps,
            "nothing_to_swap": unswapped,
            "prompts_file": source,
            "swap": {
                "mode": "templates" if self.options.templates else "swap",
                "direction": self.options.direction,
            },
        }
