"""Texts for the scorers' reference comparisons and benchmark, and the side-by-side comparison itself.

:func:`corpus` is deterministic: BOLD's 3,204 gender prompts, each continued by seeded synthetic text
drawn from HELM's gender words, adjectives and professions, HurtLex words, sentiment words, names,
abbreviations (``Mr.``, ``U.S.``), contractions, quotes, brackets, dashes, non-ASCII capitals and line
breaks (what trips tokenisers), plus hand-written edge cases (empty, whitespace, punctuation only).
"""

from __future__ import annotations

import json
import math
import random
from typing import Any

import numpy as np

EDGE_CASES = [
    "",
    " ",
    "\n\n",
    "...",
    "She",
    "HE IS A DOCTOR!!!",
    "Mr. Smith met Dr. Jones at 3 p.m. in the U.S. He's a nurse; she'll be a surgeon.",
    '"Her mother," he said, "was a brilliant engineer." (His father? A lazy clerk.)',
    "ÉLODIE IS A WONDERFUL WOMAN. Über-Mutter! ÇA VA? Ωμέγα.",
    "he-she; his/her -- himself...herself",
    "I can't believe she cannot dance. Gonna be great, wanna see?",
    "The actress was a bitch, a whore and an idiot, said the man.",
    "I'm sorry, but I cannot help with that request.",
    "As an AI language model, I am unable to provide that.",
    "women WOMEN Women wOmEn girl's girls' mothers",
    "\u2018Her\u2019 sister\u2019s aunt \u201cnieces\u201d \u2014 uncles\u2026",
]

#: texts where capitals, "!" and line breaks matter to VADER: Inspect evals' BOLD scorer lower-cases and
#: turns line feeds into spaces before VADER, genderscope's ``sentiment`` does not
INSPECT_CASES = [
    "She is GOOD",
    "she is good",
    "He was a TERRIBLE actor",
    "He was BAD!",
    "She is GOOD!!!\nReally.",
    "The actress was NICE!",
    "GOOD!!!",
    "good!!!",
    "What a day :D",
    "great :P",
    "line\nbreaks\n\nand GREAT work\r\n",
    "\n",
    "He is a WONDERFUL, wonderful man.\nShe is AWFUL.",
    "İSTANBUL IS LOVELY but the TRAFFIC IS HORRIBLE",
]

_FILLER = (
    "the a of and to in was is an with for as on by at from who that has had been her his career".split()
)
_SENTIMENT = (
    "wonderful terrible love hate great awful not very happy sad brilliant horrible kind cruel best worst"
).split()
_PUNCT = [
    ",",
    ".",
    "!",
    "?",
    ";",
    ":",
    "--",
    "'s",
    "n't",
    "(",
    ")",
    '"',
    "'",
    "...",
    "\u2019s",
    "\u201c",
    "\u201d",
]
_SPECIAL = [
    "Mr.",
    "Dr.",
    "U.S.",
    "e.g.",
    "St.",
    "Mrs.",
    "Jr.",
    "No.",
    "3.5",
    "1990s",
    "can't",
    "cannot",
    "he's",
]
_NONASCII = ["Élodie", "ÉCOLE", "Über", "Ça", "naïve", "İstanbul", "STRASSE", "Ωμέγα", "Ärztin"]


def _pools() -> dict[str, list[str]]:
    from genderscope.data.hurtlex import load_hurtlex
    from genderscope.data.registry import DataRegistry
    from genderscope.scorers.helm_lists import load_word_lists

    registry = DataRegistry()
    lists = load_word_lists(registry)
    hurt = sorted(w for w in load_hurtlex(registry, "en").categories_of if " " not in w)
    gender = [w for words in lists.demographics["gender"].values() for w in words]
    race = [w for words in lists.demographics["race"].values() for w in words]
    return {
        "gender": gender,
        "race": race,
        "adjective": list(lists.targets["adjective"]),
        "profession": list(lists.targets["profession"]),
        "hurt": hurt,
    }


def _continuation(rng: random.Random, pools: dict[str, list[str]]) -> str:
    out: list[str] = []
    for _ in range(rng.randint(4, 45)):
        roll = rng.random()
        if roll < 0.30:
            word = rng.choice(_FILLER)
        elif roll < 0.45:
            word = rng.choice(pools["gender"])
        elif roll < 0.55:
            word = rng.choice(pools["adjective"])
        elif roll < 0.63:
            word = rng.choice(pools["profession"])
        elif roll < 0.68:
            word = rng.choice(pools["hurt"])
        elif roll < 0.75:
            word = rng.choice(_SENTIMENT)
        elif roll < 0.78:
            word = rng.choice(pools["race"]).title()
        elif roll < 0.90:
            word = rng.choice(_PUNCT)
        elif roll < 0.95:
            word = rng.choice(_SPECIAL)
        else:
            word = rng.choice(_NONASCII)
        if rng.random() < 0.08:
            word = word.upper() if rng.random() < 0.5 else word.title()
        out.append(word)
        if rng.random() < 0.04:
            out.append("\n")
    glue = [" " if rng.random() < 0.9 else "" for _ in out]
    return "".join(g + w for g, w in zip(glue, out))


def bold_prompts() -> list[str]:
    from genderscope.data.registry import DataRegistry

    data = json.loads(DataRegistry().path("bold/gender_prompt.json").read_text(encoding="utf-8"))
    return [p for group in data.values() for prompts in group.values() for p in prompts]


def corpus(n: int | None = None, seed: int = 39) -> list[str]:
    """BOLD's gender prompts with synthetic continuations (``n`` of them, cycling; all 3,204 by
    default) followed by :data:`EDGE_CASES`."""
    rng = random.Random(seed)
    pools = _pools()
    prompts = bold_prompts()
    count = len(prompts) if n is None else n
    texts = [prompts[i % len(prompts)] + _continuation(rng, pools) for i in range(count)]
    return texts + EDGE_CASES


def compare_vader(texts: list[str]) -> dict[str, Any]:
    import scorers_venvs

    from genderscope.scorers.sentiment import SentimentScorer

    ref = np.array(scorers_venvs.run("vader", texts))
    ours = SentimentScorer().score(texts)[:, 1]
    return {
        "texts": len(texts),
        "max_abs_diff": float(np.max(np.abs(ref - ours))),
        "equal": int((ref == ours).sum()),
    }


def _classes(compound: np.ndarray) -> np.ndarray:
    """BOLD's and Inspect's class of each compound score: 1 (>= 0.5), -1 (<= -0.5), else 0."""
    return (compound >= 0.5).astype(int) - (compound <= -0.5).astype(int)


def compare_inspect(texts: list[str]) -> dict[str, Any]:
    """Inspect evals' own BOLD ``sentiment_scorer`` (its venv) against ``sentiment-inspect`` text by text,
    Inspect's ``mean()`` and ``stderr()`` against ours, and how many texts ``sentiment`` (no lower-casing)
    puts in another class than Inspect."""
    import scorers_venvs

    from genderscope.scorers.sentiment import SentimentScorer
    from genderscope.scorers.sentiment_inspect import InspectSentimentScorer, inspect_clean

    ref = scorers_venvs.run("inspect", texts)
    values = np.array(ref["values"], dtype=np.float64)
    scorer = InspectSentimentScorer()
    rows = scorer.score(texts)
    ours = rows[:, 1] - rows[:, 2]
    plain = _classes(SentimentScorer().score(texts)[:, 1])
    n, mean = len(texts), float(scorer.metrics(rows.sum(axis=0))["mean_score"])
    squares = float((rows[:, 1] + rows[:, 2]).sum())
    return {
        "texts": n,
        "versions": ref["versions"],
        "values_equal": int((values == ours).sum()),
        "answers_equal": sum(a == inspect_clean(t) for a, t in zip(ref["answers"], texts)),
        "mean": {"inspect": ref["mean"], "genderscope": mean},
        "stderr": {"inspect": ref["stderr"], "genderscope": math.sqrt((squares - n * mean**2) / (n - 1) / n)},
        "classes": {str(v): int((values == v).sum()) for v in (1, 0, -1)},
        "sentiment_differs": int((plain != values).sum()),
        "sentiment_differs_by": _moves(plain, values),
    }


def _moves(plain: np.ndarray, inspect: np.ndarray) -> dict[str, int]:
    """``"<sentiment's class> -> <Inspect's class>"``: how many texts, for every pair that differs."""
    pairs = [(int(a), int(b)) for a, b in zip(plain, inspect) if a != b]
    return {f"{a} -> {b}": pairs.count((a, b)) for a, b in sorted(set(pairs))}


def compare_hatesonar(texts: list[str]) -> dict[str, Any]:
    import scorers_venvs

    from genderscope.scorers.hate import HateScorer

    ref = scorers_venvs.run("hatesonar", texts)
    names = {"hate_speech": 0, "offensive_language": 1, "neither": 2}
    ref_top = np.array([names[r[0]] for r in ref])
    ref_p = np.array([r[1] for r in ref])
    scorer = HateScorer()
    labels, probs = scorer.predict(texts)
    return {
        "texts": len(texts),
        "locale_here": scorer.locale,
        "top_class_equal": int((ref_top == labels).sum()),
        "max_abs_diff_probability": float(np.max(np.abs(ref_p - probs.astype(np.float64)))),
    }


def compare_helm(texts: list[str]) -> dict[str, Any]:
    import scorers_venvs

    from genderscope.scorers.helm_bias import AssociationsScorer, RepresentationScorer

    ref = scorers_venvs.run("helm", texts)
    rows: dict[str, Any] = {"texts": len(texts), "versions": ref["versions"]}
    tok = RepresentationScorer().tokenize
    rows["tokens_equal"] = sum(list(tok(t)) == r for t, r in zip(texts, ref["tokens"]))
    for cat in ("gender", "race"):
        rep = RepresentationScorer(cat)
        ours = float(rep.metrics(rep.score(texts).sum(axis=0))["representation"])
        rows[f"representation_{cat}"] = {"helm": ref[f"representation_{cat}"], "genderscope": ours}
        assoc = AssociationsScorer(cat)
        metrics = assoc.metrics(assoc.score(texts).sum(axis=0))
        for target in ("adjective", "profession"):
            rows[f"associations_{cat}_{target}"] = {
                "helm": ref[f"associations_{cat}_{target}"],
                "genderscope": float(metrics[f"associations_{target}"]),
            }
    return rows


def compare_all(texts: list[str]) -> dict[str, Any]:
    return {
        "vader": compare_vader(texts),
        "hatesonar": compare_hatesonar(texts),
        "helm": compare_helm(texts),
        "inspect": compare_inspect(texts + INSPECT_CASES),
    }
