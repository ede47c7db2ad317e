"""Task ``bold``: BOLD's gender domain (Dhamala et al. 2021), open-ended generations scored offline.

Prompts: ``bold/gender_prompt.json`` (CC BY-SA 4.0): 3,204 sentence beginnings from the Wikipedia pages of
2,363 American actors and actresses (groups ``American_actors``: 1,587 people, 2,048 prompts;
``American_actresses``: 776 people, 1,156 prompts); a person has one or more prompts.  Each prompt is
continued (``generate``) or asked (``chat``) ``--samples`` times; the scorers read the generated text alone.
Metrics per group and the headline gap actresses − actors of each, with intervals that resample people.
``--limit N``: the first ⌈N/2⌉ actor and ⌊N/2⌋ actress prompts in file order.
"""

from __future__ import annotations

import json

from genderscope.common.errors import DataError
from genderscope.core.evidence import ReportFacts
from genderscope.core.metrics import Reference
from genderscope.tasks.generation.benchmark import GenerationBenchmark
from genderscope.tasks.generation.prompts import GenPrompt, limit_by_group
from genderscope.tasks.generation.designs import GroupDesign
from genderscope.tasks.generation.docs import KNOWN_METRICS, generation_docs

DATA = "bold/gender_prompt.json"
ACTRESSES, ACTORS = "American_actresses", "American_actors"
HARM = "Unequal portrayal: text about actresses differs in tone or hostility from text about actors"


class BoldTask(GenerationBenchmark):
    name = "bold"
    description = "BOLD gender prompts: sentiment, hate, HurtLex, regard of text about actresses vs actors"
    version = "1"
    default_scorers = ("sentiment", "hate", "hurtlex", "representation")
    data_files = (DATA,)
    headline_metrics = tuple(
        f"gap.{m}"
        for m in (
            "sentiment.mean_compound",
            "sentiment.share_positive",
            "sentiment.share_negative",
            "sentiment-inspect.mean_score",
            "hate.share_hate_or_offensive",
            "hurtlex.hurtlex_rate",
            "regard.negative",
            "regard.positive",
            "representation.representation",
        )
    )
    metric_docs = generation_docs(
        [(ACTRESSES, "the actresses' prompts"), (ACTORS, "the actors' prompts")],
        ("gap", ACTRESSES, ACTORS),
        KNOWN_METRICS,
        HARM,
    )
    report_facts = ReportFacts(
        evidence=("counts.units",), evidence_unit="people", unreadable=("counts.unreadable_share",)
    )
    references = (
        Reference(
            "Dhamala, Sun, Kumar, Krishna, Pruksachatkun, Chang and Gupta 2021. BOLD: Dataset and Metrics "
            "for "
            "Measuring Biases in Open-Ended Language Generation. FAccT.",
            "https://arxiv.org/abs/2101.11718",
        ),
        Reference("amazon-science/bold (prompts, CC BY-SA 4.0)", "https://github.com/amazon-science/bold"),
    )

    def design(self) -> GroupDesign:
        return GroupDesign((ACTRESSES, ACTORS), (ACTRESSES, ACTORS), unit="people")

    def load_prompts(self) -> list[GenPrompt]:
        path = self.ctx.data.path(DATA)
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise DataError(
                f"{path}: not BOLD's gender_prompt.json ({exc}); run `genderscope data verify`"
            ) from None
        out = []
        for group in (ACTORS, ACTRESSES):
            for person, texts in raw.get(group, {}).items():
                for i, text in enumerate(texts):
                    out.append(
                        GenPrompt(
                            f"{group}/{person}/{i}",
                            text,
                            group,
                            f"{group}/{person}",
                            fields={"person": person.replace("_", " ")},
                        )
                    )
        return limit_by_group(out, self.ctx.limit, (ACTORS, ACTRESSES))
