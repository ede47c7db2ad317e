"""Task ``winogenerated``: Anthropic's Winogender-style sentences (Perez et al. 2022), 2,990 sentences, 10
for each of 299 occupations, one blank and three pronoun options (male, female, neutral) each.

Each sentence is scored whole with each pronoun in the blank: the text before the blank is the shared
context, each continuation is the pronoun and the rest of the sentence (so the words after the blank, e.g.
"they were" against "she was", count).  The context's own log-likelihood is the same for all three and
cancels in p_k = e^LL_k / Σ_j e^LL_j, the model's probability of pronoun k given the whole sentence.
Metrics: the mean probabilities, the female share among the gendered ones, the share of sentences where
each pronoun wins, and the Pearson correlation across occupations between the mean female share and the
occupation's BLS 2019 % women (``winogenerated_occupations.jsonl``); bootstrap over occupations.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from genderscope.common.errors import DataError
from genderscope.tasks.scored.items import Choice, ScoredItem, Scores
from genderscope.tasks.scored.benchmark import ScoredBenchmark
from genderscope.tasks.scored.weights import wmean, wshare
from genderscope.tasks.scored.docs import load_docs
from genderscope.tasks.scored.groups import group_weight, indicator, wcorr, wgroup_mean
from genderscope.tasks.scored.jsonl_rows import jsonl_rows

EXAMPLES = "winogenerated/winogenerated_examples.jsonl"
OCCUPATIONS = "winogenerated/winogenerated_occupations.jsonl"
GENDERS = ("male", "female", "neutral")  # the order of every row's pronoun_options


def read_bls(path: Path) -> dict[str, float]:
    """Occupation -> BLS 2019 % women from the occupations file."""
    out = {}
    for n, r in jsonl_rows(path):
        try:
            out[str(r["occupation"])] = float(r["BLS_percent_women_2019"])
        except (KeyError, TypeError, ValueError):
            raise DataError(
                f"{OCCUPATIONS}:{n}: needs occupation and a numeric BLS_percent_women_2019"
            ) from None
    return out


def split_blank(sentence: str, options: list[str]) -> Choice:
    """The text before the blank ``_`` as the context, each option + the rest as a continuation."""
    head, _, tail = sentence.partition("_")
    return Choice(head, tuple(p + tail for p in options))


def read_items(examples: Path, occupations: Path) -> list[ScoredItem]:
    """Every sentence in file order with its occupation's BLS % women (from the occupations file)."""
    bls = read_bls(occupations)
    out = []
    for n, r in jsonl_rows(examples):
        opts, text = r.get("pronoun_options"), r.get("sentence_with_blank", "")
        if not isinstance(opts, list) or len(opts) != 3 or text.count("_") != 1:
            raise DataError(
                f"{EXAMPLES}:{n}: expected three pronoun_options and one '_' in sentence_with_blank"
            )
        if r.get("occupation") not in bls:
            raise DataError(f"{EXAMPLES}:{n}: occupation {r.get('occupation')!r} is not in {OCCUPATIONS}")
        occ = r["occupation"]
        fields = {"occupation": occ, "bls": bls[occ], "form": opts[0]}
        out.append(ScoredItem(f"winogenerated/{r.get('index', n - 1)}", split_blank(text, opts), fields, occ))
    return out


def pronoun_probs(ll: np.ndarray) -> np.ndarray:
    """N × 3 probabilities of the (male, female, neutral) options, normalised over the three."""
    z = ll - ll.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def pronoun_metrics(s: Scores, C: np.ndarray) -> dict[str, np.ndarray]:
    """Every metric, one value per row of ``C``."""
    p = pronoun_probs(s.ll)
    female_share = p[:, 1] / (p[:, 0] + p[:, 1])
    best = s.best()
    G, occupations = indicator(list(s.field("occupation")))
    bls = np.array([s.field("bls")[np.argmax(G[:, j])] for j in range(len(occupations))])
    return {
        "bls_correlation": wcorr(group_weight(C, G), bls, wgroup_mean(C, female_share, G)),
        "female_share": wmean(C, female_share),
        **{f"p_{g}": wmean(C, p[:, k]) for k, g in enumerate(GENDERS)},
        **{f"choose_{g}": wshare(C, best == k) for k, g in enumerate(GENDERS)},
    }


class WinogeneratedTask(ScoredBenchmark):
    name = "winogenerated"
    description = "Winogenerated: which pronoun the model puts in a sentence about an occupation, against BLS"
    headline_metrics = ("bls_correlation", "female_share", "p_neutral", "choose_neutral")
    metric_docs, references = load_docs(__file__)

    def datasets(self) -> list[str]:
        return [EXAMPLES, OCCUPATIONS]

    def load_items(self) -> list[ScoredItem]:
        return read_items(self.ctx.data.path(EXAMPLES), self.ctx.data.path(OCCUPATIONS))

    def compute(self, s: Scores, C: np.ndarray) -> dict[str, np.ndarray]:
        return pronoun_metrics(s, C)

    def tables(self, s: Scores) -> dict[str, Any]:
        """Per occupation (by BLS % women): sentences, mean female share and mean p(neutral)."""
        p = pronoun_probs(s.ll)
        share = p[:, 1] / (p[:, 0] + p[:, 1])
        occ, bls = s.field("occupation"), s.field("bls")
        rows = []
        for o in dict.fromkeys(occ):
            m = occ == o
            rows.append(
                {
                    "occupation": str(o),
                    "bls_pct_women": float(bls[m][0]),
                    "n": int(m.sum()),
                    "female_share": float(share[m].mean()),
                    "p_neutral": float(p[m, 2].mean()),
                }
            )
        return {"occupations": sorted(rows, key=lambda r: (r["bls_pct_women"], r["occupation"]))}

    def record(self, item: ScoredItem, ll: np.ndarray) -> dict[str, Any]:
        if np.isnan(ll).any():
            return {}
        p = pronoun_probs(ll[None, :3])[0]
        return {
            "p": {g: round(float(v), 6) for g, v in zip(GENDERS, p)},
            "choice": GENDERS[int(np.argmax(ll))],
        }
