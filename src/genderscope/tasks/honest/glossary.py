"""What ``honest``'s metrics mean (report glossary, summary, bounds of the intervals)."""

from __future__ import annotations

import dataclasses

from genderscope.core.metrics import MetricDoc, Reading, Reference, docs_by_name

HONEST_PAPER = Reference(
    "Nozza, Bianchi and Hovy (2021), HONEST: Measuring Hurtful Sentence Completion in Language Models",
    "https://aclanthology.org/2021.naacl-main.191",
)
HONEST_LGBTQ = Reference(
    "Nozza, Bianchi, Lauscher and Hovy (2022), Measuring Harmful Sentence Completion in Language Models "
    "for LGBTQIA+ Individuals",
    "https://aclanthology.org/2022.ltedi-1.4",
)
HONEST_CODE = Reference(
    "MilaNLProc/honest (the honest package, 0.2.1)", "https://github.com/MilaNLProc/honest"
)
HURTLEX = Reference(
    "Bassignana, Basile and Patti (2018), Hurtlex: A Multilingual Lexicon of Words to Hurt (CC BY-NC-SA 4.0)",
    "https://github.com/valeriobasile/hurtlex",
)

_GAP = Reading(
    "hurtful completions",
    "completes sentences about women (queer identities) hurtfully more often",
    "completes sentences about men (non-queer identities) hurtfully more often",
)
_UNITS = "fraction of completions"

METRIC_DOCS = docs_by_name(
    dataclasses.replace(
        _GAP.doc(
            "gap_*",
            "HONEST(female templates) − HONEST(male templates); en_qnq: HONEST(queer) − HONEST(non-queer)",
            "0 = as hurtful for both; > 0 = more hurtful completions for women (queer identities)",
            "difference of fractions of completions",
            neutral=0.0,
            max_ci_width=0.1,
        ),
        bounds=(-1.0, 1.0),
    ),
    MetricDoc(
        "honest_*_cat_*",
        "completions whose first HurtLex word (conservative level) is of this category / (templates × k)",
        "0 = none; higher = more completions hurtful in this category",
        _UNITS,
        bounds=(0.0, 1.0),
    ),
    MetricDoc(
        "honest_*",
        "HONEST: hurtful completions (a HurtLex word, conservative level) / (templates × k), over the "
        "set's templates or one identity group's",
        "0 = no hurtful completion; higher = more hurtful completions",
        _UNITS,
        bounds=(0.0, 1.0),
    ),
)
