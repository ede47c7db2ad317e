"""The two ways a generation benchmark compares its texts: groups (BOLD) and paired versions (swaps).

Each design turns the scored texts into metrics with intervals (:mod:`.stats`) and its tables:

* :class:`GroupDesign`: ``<group>.<metric>`` per group and ``gap.<metric>`` = group a − group b, clusters
  resampled (BOLD: people); table ``groups`` (people, prompts, texts and empty texts per group);
* :class:`PairedDesign`: ``<a>.<metric>``, ``<b>.<metric>``, ``diff.<metric>`` = b − a over the complete
  (pair, sample)s, ``flip.<verdict>`` shares, pairs resampled; tables ``pairs`` (counts) and
  ``largest_differences`` (the pairs whose per-pair difference of the ranking metric is largest, both
  prompts and both first generations side by side).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from genderscope.core.metrics import Metric
from genderscope.tasks.generation.scoring import ScoreTable
from genderscope.tasks.generation.stats import (
    Flip,
    cluster_index,
    group_stat,
    metrics_with_intervals,
    paired_stat,
    per_unit_metrics,
)
from genderscope.tasks.generation.texts import Generated

#: rows of ``largest_differences``
TOP_PAIRS = 10
#: verdicts compared by ``flip.<name>``: the per-text metrics that make the verdict (each 0 or 1 per text)
FLIP_VERDICTS: dict[str, tuple[str, ...]] = {
    "refusal": ("refusal.share_refusal",),
    "regard": ("regard.positive", "regard.neutral", "regard.negative", "regard.other"),
}


@dataclass(frozen=True)
class GroupDesign:
    """Groups of prompts (``groups``, in display order) and the ``gap`` = (a, b) reported as a − b;
    ``unit``: what a cluster is (for the counts: ``people``)."""

    groups: tuple[str, ...]
    gap: tuple[str, str]
    unit: str = "prompts"

    def units(self, ok: Sequence[Generated]) -> int:
        return len({g.prompt.cluster for g in ok})

    def evaluate(
        self, task: Any, table: ScoreTable, ok: Sequence[Generated]
    ) -> tuple[dict[str, Metric], dict[str, Any]]:
        group = np.array([g.prompt.group for g in ok])
        clusters = cluster_index([g.prompt.cluster for g in ok])
        stat = group_stat(table, group, self.groups, self.gap)
        seed = task.ctx.seeds.bootstrap
        metrics = metrics_with_intervals(stat, len(ok), clusters, task.options.n_boot, seed, task.metric_docs)
        rows = []
        for name in self.groups:
            mine = [g for g in ok if g.prompt.group == name]
            rows.append(
                {
                    "group": name,
                    self.unit: len({g.prompt.cluster for g in mine}),
                    "prompts": len({g.prompt.prompt_id for g in mine}),
                    "texts": len(mine),
                    "empty": sum(g.empty for g in mine),
                }
            )
        return metrics, {"groups": rows}

    def default_headline(self, metrics: Mapping[str, Metric]) -> list[str]:
        return [k for k in metrics if k.startswith("gap.")][:6]


@dataclass(frozen=True)
class PairedDesign:
    """Two versions of each prompt (``versions`` = (a, b): the groups of the pair's two GenPrompts),
    compared per (pair, sample); ``ranking``: metrics (first present wins) whose per-pair difference ranks
    ``largest_differences``."""

    versions: tuple[str, str]
    ranking: tuple[str, ...] = ()
    flips: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: dict(FLIP_VERDICTS))
    unit: str = "prompts"

    def complete(self, ok: Sequence[Generated]) -> np.ndarray:
        """Each text's version where both versions of its (pair, sample) were generated, else ''."""
        seen: dict[tuple[str, int], set[str]] = {}
        for g in ok:
            seen.setdefault((g.prompt.pair, g.sample), set()).add(g.prompt.group)
        full = set(self.versions)
        return np.array([g.prompt.group if seen[(g.prompt.pair, g.sample)] >= full else "" for g in ok])

    def units(self, ok: Sequence[Generated]) -> int:
        version = self.complete(ok)
        return len({g.prompt.pair for g, v in zip(ok, version) if v})

    def flip_arrays(self, table: ScoreTable, ok: Sequence[Generated], version: np.ndarray) -> list[Flip]:
        """Per verdict of :attr:`flips` whose metrics the run has: flipped/defined on each version-a text."""
        per_text = table.per_text()
        a, b = self.versions
        where = {(g.prompt.pair, g.sample, v): j for j, (g, v) in enumerate(zip(ok, version)) if v}
        out = []
        for name, cols in self.flips.items():
            if not all(c in per_text for c in cols):
                continue
            vals = np.column_stack([per_text[c] for c in cols])
            flipped, defined = np.zeros(len(ok)), np.zeros(len(ok))
            for (pair, k, v), j in where.items():
                if v != a:
                    continue
                other = vals[where[(pair, k, b)]]
                if np.isfinite(vals[j]).all() and np.isfinite(other).all():
                    defined[j], flipped[j] = 1.0, float((vals[j] != other).any())
            out.append(Flip(name, flipped, defined))
        return out

    def evaluate(
        self, task: Any, table: ScoreTable, ok: Sequence[Generated]
    ) -> tuple[dict[str, Metric], dict[str, Any]]:
        version = self.complete(ok)
        clusters = cluster_index([g.prompt.pair for g in ok])
        stat = paired_stat(table, version, self.versions, self.flip_arrays(table, ok, version))
        seed = task.ctx.seeds.bootstrap
        metrics = metrics_with_intervals(stat, len(ok), clusters, task.options.n_boot, seed, task.metric_docs)
        incomplete = sorted({g.prompt.pair for g, v in zip(ok, version) if not v})
        tables = {
            "pairs": {
                "complete": self.units(ok),
                "incomplete": len(incomplete),
                "incomplete_pairs": incomplete[:20],
            },
            "largest_differences": self.largest(table, ok, version, clusters),
        }
        return metrics, tables

    def largest(
        self, table: ScoreTable, ok: Sequence[Generated], version: np.ndarray, clusters: np.ndarray
    ) -> list[dict[str, Any]]:
        """The :data:`TOP_PAIRS` pairs with the largest |per-pair difference| of the ranking metric."""
        a, b = self.versions
        n_units = int(clusters.max()) + 1 if clusters.size else 0
        va = per_unit_metrics(table, clusters, n_units, version == a)
        vb = per_unit_metrics(table, clusters, n_units, version == b)
        metric = next((m for m in self.ranking if m in va), next(iter(va), None))
        if metric is None:
            return []
        diff = vb[metric] - va[metric]
        order = [u for u in np.argsort(-np.nan_to_num(np.abs(diff), nan=-1.0)) if np.isfinite(diff[u])]
        first: dict[tuple[int, str], Generated] = {}
        for g, c, v in zip(ok, clusters, version):
            if v:  # the first complete sample of each version
                first.setdefault((int(c), str(v)), g)
        rows = []
        for u in order[:TOP_PAIRS]:
            ga, gb = first.get((int(u), a)), first.get((int(u), b))
            if ga is None or gb is None:
                continue
            rows.append(
                {
                    "pair": ga.prompt.pair,
                    "metric": metric,
                    a: _num(va[metric][u]),
                    b: _num(vb[metric][u]),
                    "difference": _num(diff[u]),
                    f"prompt_{a}": ga.prompt.text,
                    f"prompt_{b}": gb.prompt.text,
                    f"text_{a}": ga.text,
                    f"text_{b}": gb.text,
                }
            )
        return rows

    def default_headline(self, metrics: Mapping[str, Metric]) -> list[str]:
        return [k for k in metrics if k.startswith(("diff.", "flip."))][:6]


def _num(x: Any) -> float | None:
    v = float(x)
    return None if np.isnan(v) else v
