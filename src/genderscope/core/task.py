"""The task interface: build attempts from data, then score the answers.

A task never talks to a model.  It declares which request kinds it can use
(``measurements``), builds :class:`~genderscope.core.requests.Attempt` objects and
later turns :class:`~genderscope.core.requests.AttemptResult` objects into a
:class:`TaskResult`.  Register a task with one line in ``genderscope/catalogue.py``.
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar, Sequence

from genderscope.core.evidence import ReportFacts
from genderscope.core.options import NoOptions
from genderscope.core.metrics import Measurement, Metric, MetricDoc, Reference, doc_for
from genderscope.core.results_file import TaskResults
from genderscope.core.requests import AttemptResult, Attempt
from genderscope.core.rounds import Rounds
from genderscope.core.seeds import DEFAULT_SEED, Seeds, derive_seeds


@dataclass
class TaskResult:
    """What a task reports.

    ``metrics``: name -> :class:`Metric`; ``extra``: further JSON-able entries of the task's
    block in ``results.json`` (tables such as ``summary``, marks, parameters);
    ``records``: per attempt (same order as the attempts) the task's extra fields for
    ``attempts.jsonl`` (e.g. the parsed label); ``table``: rows for the terminal summary.
    """

    metrics: dict[str, Metric] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    records: list[dict[str, Any]] = field(default_factory=list)
    headline: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The task's block of results.json (what :class:`TaskResults` writes)."""
        return TaskResults.of(self).to_json()


@dataclass
class RunContext:
    """What a task may know about the run: not the backend itself, only what it answers."""

    seed: int = DEFAULT_SEED  # the run seed; tasks read its parts through ``seeds``
    trials: int | None = None
    limit: int | None = None
    request_kinds: frozenset[str] = frozenset()
    model_kind: str = ""
    model_target: str = ""  # the part of the model spec after "kind:" (e.g. for model-specific compat quirks)
    generation: dict[str, Any] = field(default_factory=dict)  # temperature / max_tokens overrides
    data: Any = None  # genderscope.data.registry.DataRegistry

    @property
    def seeds(self) -> Seeds:
        """The run seed's per-purpose parts (:func:`~genderscope.core.runspec.derive_seeds`)."""
        return derive_seeds(self.seed)


class Task(ABC):
    """Base class for tasks.  Subclasses set the class attributes and implement :meth:`score` and either
    :meth:`attempts` (one round) or :meth:`rounds` (several rounds, see :mod:`genderscope.core.rounds`).

    Tasks are stateless between :meth:`attempts` and :meth:`score`: whatever scoring needs travels with
    the attempts (``Attempt.meta``, the attempt's own item only) or is derived again from the options and
    the data.

    **Measurements.**  ``measurements`` (name -> :class:`Measurement`, in order of preference) says what
    the task can measure with which request kinds.  ``measurement_option`` names the option whose value
    is a measurement (``scoring``, ``form``), ``auto`` or a key of ``measurement_groups`` (e.g.
    ``candidates`` -> ``loglik``, ``pll``).  When the task is built, that option is resolved to the first
    admitted measurement the model answers (recorded in run.json, so ``reparse`` asks the same questions);
    :meth:`check_model` fails with a message naming, from the registry, the model kinds that work.
    """

    name: ClassVar[str]
    description: ClassVar[str]
    Options: ClassVar[type] = NoOptions
    #: measurement name -> what it needs, in order of preference (see genderscope.core.matrix)
    measurements: ClassVar[dict[str, Measurement]] = {}
    #: the option whose value names the measurement (e.g. "scoring"); "" = the task has none
    measurement_option: ClassVar[str] = ""
    #: option values that admit several measurements, in order of preference (besides ``auto`` = all)
    measurement_groups: ClassVar[dict[str, tuple[str, ...]]] = {}
    #: added to the "cannot run on this model" message (e.g. which task to use instead; may be a property)
    model_hint: str = ""
    #: metric name (or a ``prefix*`` pattern for families of metrics) -> its definition (report glossary)
    metric_docs: ClassVar[dict[str, MetricDoc]] = {}
    #: where the results block holds the evidence count, unreadable share and mark (report summary)
    report_facts: ClassVar[ReportFacts] = ReportFacts()
    #: the method's papers and code, first = the one to cite (model cards link them)
    references: ClassVar[tuple[Reference, ...]] = ()
    #: published reference numbers, stated as context in the report (never as this run's), e.g.
    #: "bias-bench leaderboard, CrowS-Pairs gender stereotype score: BERT 57.25, GPT-2 56.87"
    published: ClassVar[tuple[str, ...]] = ()
    #: the task's own version, written to results.json and run.json: raise it when a change of the task
    #: (items, prompts, parsing, metrics) can change its numbers for the same answers
    version: ClassVar[str] = "1"
    #: the languages of the task's texts (ISO 639-1), when its options do not choose them
    text_languages: ClassVar[tuple[str, ...]] = ("en",)
    #: optional packages the task reads with, as (module, extra) pairs: a suite leaves the task out (and
    #: says which extra to install) where one is missing
    needs_packages: ClassVar[tuple[tuple[str, str], ...]] = ()
    #: what ``--limit N`` keeps, in one line (shown by ``genderscope tasks --options``)
    limit_meaning: ClassVar[str] = "the first N items in the dataset's order"
    #: True when the task's own ``render`` already states each headline's evidence state (the terminal
    #: then adds no evidence line of its own)
    renders_evidence: ClassVar[bool] = False

    def __init__(self, options: Any, ctx: RunContext):
        self.options = options
        self.ctx = ctx
        self.options = self.resolve_options(options)

    # -- measurements ---------------------------------------------------------------------------------

    def allowed_measurements(self) -> list[str]:
        """The measurements the options admit, in order of preference (all declared for ``auto``)."""
        value = getattr(self.options, self.measurement_option, "auto") if self.measurement_option else "auto"
        if value in self.measurement_groups:
            return list(self.measurement_groups[value])
        if value == "auto" or value not in self.measurements:
            return list(self.measurements)
        return [value]

    def chosen_measurement(self) -> str | None:
        """The first admitted measurement whose request kinds the run's model answers (None: none)."""
        from genderscope.core.matrix import chosen_measurement

        return chosen_measurement(type(self), self.ctx.request_kinds, self.allowed_measurements())

    def resolve_options(self, options: Any) -> Any:
        """``options`` with ``measurement_option`` resolved to the measurement this run makes (the only one
        admitted, even when the model cannot make it: :meth:`check_model` then says why); left as it is when
        the model answers none of several admitted ones."""
        if not self.measurement_option:
            return options
        allowed = self.allowed_measurements()
        got = self.chosen_measurement() or (allowed[0] if len(allowed) == 1 else None)
        if got is None or got == getattr(options, self.measurement_option):
            return options
        return dataclasses.replace(options, **{self.measurement_option: got})

    def check_model(self) -> None:
        """Fail early (before any model loads) unless the model answers an admitted measurement: the
        UsageError names what it answers, what the task needs and every model kind that works."""
        from genderscope.core.matrix import require_kinds

        require_kinds(self, self.allowed_measurements(), self.model_hint)

    # -- questions ------------------------------------------------------------------------------------

    def tested_languages(self) -> list[str]:
        """The languages this run tests (ISO 639-1; recorded in results.json, listed by the report and the
        model card): :attr:`text_languages`, unless the task's options choose them."""
        chosen = getattr(self, "languages", None) or getattr(self.options, "languages", None)
        if isinstance(chosen, str):
            chosen = [x.strip() for x in chosen.split(",") if x.strip()]
        return list(chosen) if chosen else list(self.text_languages)

    def datasets(self) -> list[str]:
        """Logical names of the dataset files this run reads (recorded with their sha256)."""
        return []

    def rounds(self) -> Rounds | None:
        """The task's rounds when it asks in several (None: :meth:`attempts` asks everything)."""
        return None

    def attempts(self) -> list[Attempt]:
        """All attempts of the first round, in a stable order (default: round 0 of :meth:`rounds`)."""
        plan = self.rounds()
        if plan is None:
            raise NotImplementedError(f"task {self.name} defines neither attempts() nor rounds()")
        return plan.first()

    def next_attempts(self, results: Sequence[AttemptResult]) -> list[Attempt]:
        """Further attempts that depend on the answers so far (``results``, in order of all earlier
        rounds); an empty list ends the run.  Default: the next of :meth:`rounds`, else none."""
        plan = self.rounds()
        return plan.next(results) if plan is not None else []

    @abstractmethod
    def score(self, results: Sequence[AttemptResult]) -> TaskResult:
        """Parse answers and compute metrics; ``results`` is in the order of ``attempts()`` followed by
        every round of ``next_attempts()``."""

    def reproduces_reference_intervals(self) -> bool:
        """True when this run's intervals are a reference tool's, verbatim (a compat mode, e.g. GenderBench's
        ``--ci-method normal``): the finisher then leaves them unclipped, so that they equal the
        reference's even where they reach past the metric's ``bounds``."""
        return False

    @classmethod
    def metric_doc(cls, metric: str) -> MetricDoc | None:
        """The doc of ``metric`` in :attr:`metric_docs` (:func:`doc_for`)."""
        return doc_for(cls.metric_docs, metric)
