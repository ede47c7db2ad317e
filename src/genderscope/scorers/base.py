"""The scorer contract: generated texts -> per-text sufficient statistics -> metrics of their sums.

A scorer turns each generated text into one row of *sufficient statistics* (counts, indicators, sums of
values; ``fields`` names the columns) and turns *column sums* of such rows into its metrics.  Every metric
is a function of summed statistics only, so the generation layer can

* stream: call :meth:`Scorer.score` chunk by chunk and add the rows up (``S.sum(axis=0)``);
* bootstrap by resampling people or prompts as a weight matrix ``C`` (``B x n``): ``sums = C @ S`` and
  ``metrics(sums)`` gives ``B`` replicates of each metric at once;
* read per-text (or per-prompt) values: ``metrics(S)`` with one row per text is the metric of each text.

Rows are finite (never NaN): a statistic that does not apply to a text adds 0 to its numerator *and* to
its denominator column, and a metric whose denominator sums to 0 is NaN (e.g. the mean compound of no
text, the word-share of an empty text).

Scorers are looked up by name (:func:`scorer_class`, :func:`make_scorer`): genderscope's own (the
``SCORERS`` table of :mod:`genderscope.catalogue`) and third-party ones registered under the entry-point
group ``genderscope.scorers`` (``name = "package.module:ScorerClass"``), as for tasks.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from types import ModuleType
from typing import Any, ClassVar

import numpy as np

from genderscope.common.errors import UsageError

#: the pip extra that provides the packages of genderscope's own offline scorers
GENERATION_EXTRA = "generation"


@dataclass(frozen=True)
class ScorerInfo:
    """What a scorer is, recorded in results.json next to its numbers.

    ``version`` is the scorer's own version (a change of rules or word lists bumps it); ``licence`` the
    licence of the model or word list it uses (shown wherever its results are shown); ``extra`` the pip
    extra of genderscope that installs its package (None: the core install suffices)."""

    name: str
    version: str
    licence: str
    description: str
    extra: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class MissingExtra(UsageError):
    """A scorer's package is not installed: one line naming the pip extra that installs it (exit 2)."""

    def __init__(self, scorer: str, package: str, extra: str | None):
        fix = f"pip install 'genderscope[{extra}]'" if extra else f"pip install {package}"
        super().__init__(f"scorer {scorer!r} needs the package {package!r}, which is not installed: {fix}")
        self.scorer = scorer
        self.package = package
        self.extra = extra


def require(
    module: str, scorer: str, extra: str | None = GENERATION_EXTRA, package: str | None = None
) -> ModuleType:
    """Import ``module`` for ``scorer``, or raise :class:`MissingExtra` naming ``extra`` (``package``: the
    distribution name when it differs from the module name)."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name is not None and module.split(".")[0] != exc.name.split(".")[0]:
            # the package is there but one of its own dependencies is missing: name that one
            raise MissingExtra(scorer, exc.name.split(".")[0], extra) from None
        raise MissingExtra(scorer, package or module.split(".")[0], extra) from None


def ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """``num / den`` elementwise, NaN where ``den`` is 0 (no warning)."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    out = np.full(np.broadcast(num, den).shape, np.nan)
    np.divide(num, den, out=out, where=den != 0)
    return out


def as_metrics(values: dict[str, Any]) -> dict[str, np.ndarray]:
    """``values`` with every value as a float64 ndarray (numpy scalars become 0-d arrays)."""
    return {name: np.asarray(value, dtype=np.float64) for name, value in values.items()}


class Scorer(ABC):
    """An offline scorer of generated texts (see the module docstring for the contract).

    Subclasses set the class attribute ``info`` and, in ``__init__`` (options may change them), the
    instance attributes ``fields`` (column names of :meth:`score`) and ``metric_docs`` (metric name ->
    one line: meaning, units, bounds; its keys are exactly the keys :meth:`metrics` returns)."""

    info: ClassVar[ScorerInfo]
    fields: tuple[str, ...]
    metric_docs: dict[str, str]

    @abstractmethod
    def score(self, texts: Sequence[str]) -> np.ndarray:
        """Per-text sufficient statistics: float64 array of shape ``(len(texts), len(self.fields))``,
        finite.  Stateless: the caller may call it on any chunking of its texts."""

    @abstractmethod
    def metrics(self, sums: np.ndarray) -> dict[str, np.ndarray]:
        """Metrics from column sums of :meth:`score` rows.

        ``sums``: shape ``(d,)`` (one total) or ``(B, d)`` (one row per bootstrap replicate, group or
        text).  Returns metric name -> array of shape ``()`` or ``(B,)``; NaN where undefined."""

    def options(self) -> dict[str, Any]:
        """The options this scorer was built with (recorded next to ``info``)."""
        return {}

    def describe(self) -> dict[str, Any]:
        """``info`` plus options and the version of the package doing the work, for results.json."""
        return {**self.info.as_dict(), "options": self.options(), "package": self.package_version()}

    def package_version(self) -> str | None:
        """``name==version`` of the third-party package this scorer runs on (None: none)."""
        return None

    def empty(self) -> np.ndarray:
        """A zero row of sums (shape ``(d,)``), the start of a streaming total."""
        return np.zeros(len(self.fields), dtype=np.float64)

    def column(self, name: str) -> int:
        """Index of field ``name`` in a row of :meth:`score`."""
        return self.fields.index(name)


def scorer_class(name: str) -> type[Scorer]:
    """The scorer class registered as ``name`` (built-in or plugin; unknown: one line naming the known)."""
    from genderscope.core.lookup import scorer_class as _lookup

    return _lookup(name)


def make_scorer(name: str, **options: Any) -> Scorer:
    """An instance of scorer ``name`` built with ``options`` (raises :class:`MissingExtra` when its
    package is absent)."""
    return scorer_class(name)(**options)


def scorer_names() -> list[str]:
    """Names of every scorer: built-in first, then installed plugins."""
    from genderscope.core.lookup import SCORERS

    return list(SCORERS)


def check_rows(scorer: Scorer, rows: np.ndarray, n: int) -> np.ndarray:
    """``rows`` as float64 of shape ``(n, len(scorer.fields))``, or a ``ValueError`` naming the scorer
    (a plugin that breaks the contract)."""
    out = np.asarray(rows, dtype=np.float64)
    if out.shape != (n, len(scorer.fields)):
        raise ValueError(
            f"scorer {scorer.info.name!r} returned shape {out.shape}, expected {(n, len(scorer.fields))}"
        )
    if not np.isfinite(out).all():
        raise ValueError(f"scorer {scorer.info.name!r} returned a non-finite statistic")
    return out
