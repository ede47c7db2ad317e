""" "her"/"his" resolution measured on WinoBias: each pro-stereotyped sentence and its anti-stereotyped twin
differ only in the pronoun's gender, so the twin is the gold swap of every "her" (object "him" or
possessive "his") and "his" (determiner "her" or pronoun "hers"). Rules tuned on these sentences, so this
guards against regressions rather than estimating accuracy on new text (docs/decisions.md)."""

from __future__ import annotations

import re
from collections import Counter

from genderscope.swap.engine import swap

PRONOUNS = {"he", "she", "him", "her", "his", "hers", "himself", "herself"}


def _clean(line: str) -> str:
    return re.sub(r"^\d+\s+", "", line).replace("[", "").replace("]", "")


def _word(token: str) -> str:
    return token.lower().strip(".,")


def gold_cases(registry) -> list[tuple[str, int, str]]:
    """(sentence, word index of a her/his, the gold swapped word) over the dev and test files, both ways."""
    cases = []
    for kind in (1, 2):
        for split in ("dev", "test"):
            pro, anti = (
                registry.path(f"winobias/{s}_stereotyped_type{kind}.txt.{split}")
                .read_text("utf-8")
                .splitlines()
                for s in ("pro", "anti")
            )
            for a, b in [*zip(pro, anti), *zip(anti, pro)]:
                ta, tb = _clean(a).split(" "), _clean(b).split(" ")
                if len(ta) != len(tb):
                    continue
                if any(x != y and x.lower().strip(".,") not in PRONOUNS for x, y in zip(ta, tb)):
                    continue  # the twin differs in more than the pronoun
                cases += [
                    (" ".join(ta), i, _word(tb[i])) for i, w in enumerate(ta) if _word(w) in ("her", "his")
                ]
    return cases


def test_her_and_his_against_winobias_twins(data_registry):
    cases = gold_cases(data_registry)
    right: Counter[tuple[str, bool]] = Counter()
    for text, i, gold in cases:
        got = _word(swap(text, names=False).text.split(" ")[i])
        right[(_word(text.split(" ")[i]), got == gold)] += 1
    n_her = right[("her", True)] + right[("her", False)]
    n_his = right[("his", True)] + right[("his", False)]
    assert n_her > 850 and n_his > 180
    assert right[("her", True)] / n_her >= 0.98, right
    assert right[("his", True)] / n_his >= 0.98, right
    # HELM's rule ("her" is always the object) on the same cases, for the record
    helm_right = sum(1 for t, i, g in cases if _word(t.split(" ")[i]) == "her" and g == "him")
    assert helm_right / n_her < 0.85
