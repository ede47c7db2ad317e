"""The scorers of a run: built once, run over the generated texts in chunks, their columns side by side.

Every scorer (:mod:`genderscope.scorers`, and the judge's :class:`~.judge.RegardTally`) turns a text into a
row of sufficient statistics and column sums into metrics, named ``<scorer>.<metric>`` here (two scorers may
both have a ``share_empty``).  :class:`ScoreTable` keeps the rows of all
scorers side by side (texts × Σ fields) with each scorer's columns, so a weight matrix C (rows × texts)
gives every scorer's metrics for every row at once: ``metrics(C @ S[:, cols])``.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import numpy as np

from genderscope.common.errors import UsageError

#: texts scored per call of a scorer (bounds the memory of a scorer's intermediate arrays)
CHUNK = 2048


def build_scorers(names: Sequence[str], data: Any = None) -> list[Any]:
    """An instance of each scorer in ``names`` (:func:`genderscope.scorers.make_scorer`), in order; a scorer
    whose constructor takes ``data`` (or ``registry``) gets the run's data registry.  An unknown name or a
    missing package is one line (:class:`~genderscope.scorers.MissingExtra` names the pip extra)."""
    from genderscope.scorers.base import scorer_class

    if not names:
        raise UsageError("--scorers names no scorer (e.g. --scorers sentiment,length)")
    out = []
    for name in names:
        cls = scorer_class(name)
        params = inspect.signature(cls).parameters
        kwargs = {k: data for k in ("data", "registry", "data_registry") if k in params and data is not None}
        out.append(cls(**kwargs))
    return out


def build_default_scorers(names: Sequence[str], data: Any = None) -> tuple[list[Any], dict[str, str]]:
    """The benchmark's default scorers that can be built, and for each left out the one line saying which
    extra installs it (a run without ``--scorers`` still runs; results.json names what is missing).  None
    buildable: the first error."""
    from genderscope.scorers.base import MissingExtra

    built, left_out, first = [], {}, None
    for name in names:
        try:
            built += build_scorers([name], data)
        except MissingExtra as exc:
            left_out[name], first = str(exc), first or exc
    if not built and first is not None:
        raise first
    return built, left_out


def scorer_datasets(scorer: Any) -> list[str]:
    """The data-registry files a scorer reads (pinned in results.json, their licences shown): its own
    ``datasets()`` when it declares one, else HurtLex's lexicon for ``hurtlex`` (CC BY-NC-SA 4.0: the
    run's licence notice must name it)."""
    own = getattr(scorer, "datasets", None)
    if callable(own):
        return list(own())
    if scorer_name(scorer) == "hurtlex":
        from genderscope.data.hurtlex import dataset_name

        return [dataset_name(getattr(scorer, "language", "en"))]
    return []


def score_rows(scorer: Any, texts: Sequence[str], chunk: int = CHUNK) -> np.ndarray:
    """``scorer.score`` of ``texts`` chunk by chunk, stacked (texts × fields, float64, finite)."""
    from genderscope.scorers.base import check_rows

    parts = [
        check_rows(scorer, scorer.score(texts[i : i + chunk]), len(texts[i : i + chunk]))
        for i in range(0, len(texts), chunk)
    ]
    return np.vstack(parts) if parts else np.zeros((0, len(scorer.fields)))


@dataclass
class ScoreTable:
    """Rows of every scorer side by side: ``S`` (texts × Σ fields) and each scorer with its columns."""

    S: np.ndarray
    scorers: list[tuple[Any, slice]]

    @classmethod
    def of(cls, blocks: Iterable[tuple[Any, np.ndarray]], n: int) -> ScoreTable:
        """From ``(scorer, rows)`` pairs (each ``n`` rows)."""
        mats, scorers, at = [], [], 0
        for scorer, rows in blocks:
            width = rows.shape[1]
            mats.append(rows)
            scorers.append((scorer, slice(at, at + width)))
            at += width
        return cls(np.hstack(mats) if mats else np.zeros((n, 0)), scorers)

    def metrics(self, sums: np.ndarray) -> dict[str, np.ndarray]:
        """Every scorer's metrics of column sums ``sums`` (… × Σ fields): name -> values (one per row)."""
        out: dict[str, np.ndarray] = {}
        for scorer, cols in self.scorers:
            name = scorer_name(scorer)
            for metric, v in scorer.metrics(sums[..., cols]).items():
                out[f"{name}.{metric}"] = np.asarray(v, dtype=np.float64)
        return out

    def metric_names(self) -> list[str]:
        """The metric names, in scorer order (from a zero row of sums)."""
        return list(self.metrics(np.zeros((1, self.S.shape[1]))))

    def per_text(self) -> dict[str, np.ndarray]:
        """Each metric of each text alone (``metrics`` of its own row; NaN where undefined)."""
        return self.metrics(self.S)

    def describe(self) -> list[dict[str, Any]]:
        """What each scorer is (name, version, licence, …), for results.json."""
        return [s.describe() for s, _ in self.scorers]

    def docs(self) -> dict[str, str]:
        """Metric name (``<scorer>.<metric>``) -> the scorer's one-line description."""
        return {
            f"{scorer_name(s)}.{k}": v
            for s, _ in self.scorers
            for k, v in getattr(s, "metric_docs", {}).items()
        }


def scorer_name(scorer: Any) -> str:
    """The name a scorer's metrics are prefixed with: its ``info.name`` (the judge's tally: ``regard``)."""
    info = getattr(scorer, "info", None)
    return str(info.name if info is not None else scorer.name)
