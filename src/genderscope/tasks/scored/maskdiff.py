"""Plan :class:`DifferingTokens`: two candidate texts scored at the tokens where they differ (masked LMs; the
GEST paper's measure, GEST spec §8.1).

Two rounds per item of exactly two candidates (names from the benchmark's ``candidate_names``):

1. ``tokenize`` each text as the model's input (special tokens added; attempt ``<item>/<name>/tokenize``);
2. Δ = the positions i < min(len a, len b) where the two id sequences differ (position by position, as the
   paper does); ``masked_logprobs`` {ids, positions: Δ, mask: all} of each text (attempt ``<item>/<name>``):
   every position of Δ masked at once, ln P of the text's own ids there.

A candidate's score is the mean over Δ (nats, :func:`~genderscope.tasks.scoring.mean_logprob`).  With Δ
empty nothing is asked in round 2 and both scores are NaN (the item is read, not failed).  attempts.jsonl
records the round as ``step`` and the candidate's name as ``side``.
"""

from __future__ import annotations

from typing import Any, Sequence

from genderscope.core.metrics import Measurement
from genderscope.core.primitives import MASKED_LOGPROBS, masked_logprobs_request, tokenize_request
from genderscope.core.requests import Attempt, AttemptResult
from genderscope.core.rounds import Answers, Round, Rounds
from genderscope.tasks.scored.plans import CANDIDATE, ITEM, UNREADABLE, Plan, Readout, by_item, item_attempt
from genderscope.tasks.scoring import mean_logprob

TOKENS, LOGPROBS = "tokenize", "masked_logprobs"
SPECIALS = {"add_special_tokens": True}


def differing_positions(a: Sequence[int], b: Sequence[int]) -> list[int]:
    """Δ: the positions i < min(len a, len b) where the two id sequences differ."""
    return [i for i in range(min(len(a), len(b))) if a[i] != b[i]]


class DifferingTokens(Plan):
    """See the module docstring."""

    def __init__(self, measurement: Measurement):
        super().__init__(measurement)

    def rounds(self, task: Any) -> Rounds:
        def ask_tokens(_answers: Answers) -> list:
            return [
                item_attempt(it, f"/{name}/tokenize", tokenize_request(text, **SPECIALS), candidate=k)
                for it in task.items()
                for k, (name, text) in enumerate(zip(task.candidate_names, it.candidates.texts()))
            ]

        return Rounds(Round(TOKENS, ask_tokens), Round(LOGPROBS, lambda a: self._ask_scores(a.of(TOKENS))))

    @staticmethod
    def _ask_scores(tokenized: Sequence[AttemptResult]) -> list:
        """Round 2 for every item whose two tokenisations came back and differ."""
        pairs: dict[str, dict[int, AttemptResult]] = {}
        for ar in tokenized:
            pairs.setdefault(ar.attempt.meta[ITEM], {})[ar.attempt.meta[CANDIDATE]] = ar
        out = []
        for pair in pairs.values():
            if len(pair) != 2 or not all(ar.ok for ar in pair.values()):
                continue
            ids = {k: list(ar.answer().ids) for k, ar in pair.items()}
            delta = differing_positions(ids[0], ids[1])
            for k in (0, 1) if delta else ():
                a = pair[k].attempt
                req = masked_logprobs_request(ids=ids[k], positions=delta, mask="all")
                out.append(Attempt(a.item_id.removesuffix("/tokenize"), 1, req, a.meta))
        return out

    def read(self, task: Any, results: Sequence[AttemptResult]) -> Readout:
        items = task.items()
        out, got = Readout.blank(len(items), 2), by_item(results)
        for i, it in enumerate(items):
            rs = got.get(it.item_id, [])
            if any(not ar.ok for ar in rs):
                out.fail(i)
                continue
            try:
                scored = [a for a in rs if a.attempt.request.kind == MASKED_LOGPROBS]
                lps = {a.attempt.meta[CANDIDATE]: a.answer() for a in scored}
                if not lps:  # nothing asked in round 2: Δ is empty, or a tokenisation is missing
                    toks = {ar.attempt.meta[CANDIDATE]: ar.answer().ids for ar in rs}
                    if len(toks) != 2:
                        out.fail(i)
                    elif differing_positions(toks[0], toks[1]):
                        raise ValueError("the masked_logprobs answers are missing")
                    continue
                for k in (0, 1):
                    lp = mean_logprob(lps[k])
                    out.ll[i, k] = float("nan") if lp is None else lp
                    out.n_tokens[i, k] = len(lps[k].logprobs)
            except UNREADABLE:
                out.fail(i, bad=True)
        return out

    def fields(self, rounds: Rounds, ar: AttemptResult) -> dict[str, Any]:
        name = ar.attempt.item_id.removesuffix("/tokenize").rsplit("/", 1)[1]
        return {"step": rounds.name_of(ar), "side": name}
