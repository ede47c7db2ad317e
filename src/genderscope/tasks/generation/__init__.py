"""The generation-audit layer: open-ended generations, scored offline, compared between groups or between
the two versions of a prompt, with cluster-bootstrap intervals (see :mod:`.benchmark`)."""

from genderscope.tasks.generation.benchmark import GenerationBenchmark
from genderscope.tasks.generation.designs import GroupDesign, PairedDesign
from genderscope.tasks.generation.options import GenerationOptions
from genderscope.tasks.generation.prompts import GenPrompt, limit_by_group, sample_seed

__all__ = [
    "GenPrompt",
    "GenerationBenchmark",
    "GenerationOptions",
    "GroupDesign",
    "PairedDesign",
    "limit_by_group",
    "sample_seed",
]
