"""Scoring ``shared``: the pseudo-log-likelihood of the tokens two candidates share (CrowS-Pairs' authors).

A mixin for :class:`~.benchmark.ScoredBenchmark` (list it first among the bases).  With ``--scoring
shared`` each item's two candidate texts are asked in two rounds:

1. ``tokenize`` each text as the model's input (special tokens added);
2. the tokens both inputs share (``difflib.SequenceMatcher`` over the token ids, its ``equal`` blocks) are
   masked one at a time (``masked_logprobs``, mask = each) at the shared positions ``1 .. N-2``: the first
   and last shared position are skipped, as in ``metric.py`` of nyu-mll/crows-pairs (meant for CLS/SEP).

A candidate's score is the Σ of those log-probabilities (nats).  A pair with fewer than three shared
tokens has nothing to mask: both scores are 0 (as in ``metric.py``) and the item is listed as
``unaligned`` (:func:`unaligned_items`; the Scores field ``UNALIGNED``).  Items declare which candidate is
the alignment's first sequence with :meth:`SharedTokenScoring.align_order` (difflib is not symmetric).
"""

from __future__ import annotations

import difflib
from typing import Any, Sequence

import numpy as np

from genderscope.core.primitives import MASKED_LOGPROBS, TOKENIZE, masked_logprobs_request, tokenize_request
from genderscope.core.requests import Attempt, AttemptResult
from genderscope.core.rounds import Answers, Round, Rounds
from genderscope.core.metrics import Measurement
from genderscope.tasks.scored.items import ScoredItem, Scores, stack_fields

SHARED = "shared"
#: the Scores field flagging the items whose candidates share too few tokens to mask (scored 0 = 0)
UNALIGNED = "_unaligned"
SHARED_MEASUREMENT = Measurement(
    frozenset({TOKENIZE, MASKED_LOGPROBS}),
    "pseudo log-likelihood of the tokens both candidates share, masked one at a time (CrowS-Pairs metric.py)",
)


def shared_positions(ids1: Sequence[int], ids2: Sequence[int]) -> tuple[list[int], list[int]]:
    """Positions of the tokens the two id sequences share, in each (``metric.py``'s ``get_span``:
    ``difflib.SequenceMatcher`` over the ids as strings, its ``equal`` blocks)."""
    m = difflib.SequenceMatcher(None, [str(x) for x in ids1], [str(x) for x in ids2])
    t1: list[int] = []
    t2: list[int] = []
    for op, a0, a1, b0, b1 in m.get_opcodes():
        if op == "equal":
            t1 += list(range(a0, a1))
            t2 += list(range(b0, b1))
    return t1, t2


def masked_positions(ids1: Sequence[int], ids2: Sequence[int]) -> tuple[list[int], list[int]]:
    """The shared positions that are masked: all but the first and the last (``range(1, N - 1)``)."""
    t1, t2 = shared_positions(ids1, ids2)
    return t1[1:-1], t2[1:-1]


def unaligned_items(s: Scores) -> list[str]:
    """Ids of the scored items whose candidates share fewer than three tokens (none outside ``shared``)."""
    flags = s.fields.get(UNALIGNED)
    return [] if flags is None else [it.item_id for it, u in zip(s.items, flags) if u]


class SharedTokenScoring:
    """Mixin: ``--scoring shared`` for benchmarks whose items have exactly two candidates."""

    def align_order(self, item: ScoredItem) -> tuple[int, int]:
        """Which candidate is the alignment's first sequence (default: as declared)."""
        return (0, 1)

    def _texts(self, item: ScoredItem) -> list[str]:
        return item.candidates.texts()

    def rounds(self) -> Rounds | None:
        if self.options.scoring != SHARED:  # type: ignore[attr-defined]
            return super().rounds()  # type: ignore[misc]
        return Rounds(Round("tokenize", self._ask_tokens), Round("shared", self._ask_shared))

    def attempts(self) -> list[Attempt]:
        if self.options.scoring != SHARED:  # type: ignore[attr-defined]
            return super().attempts()  # type: ignore[misc]
        return self.rounds().first()  # type: ignore[union-attr]

    def _ask_tokens(self, _answers: Answers) -> list[Attempt]:
        out = []
        for it in self.items():  # type: ignore[attr-defined]
            if len(it.candidates.continuations) != 2:
                raise ValueError(f"{it.item_id}: scoring 'shared' needs exactly two candidates")
            for k, text in enumerate(self._texts(it)):
                req = tokenize_request(text, add_special_tokens=True)
                out.append(Attempt(f"{it.item_id}/tokens/{k}", 1, req, {"candidate": k}))
        return out

    def _token_ids(self, results: Sequence[AttemptResult]) -> dict[str, list[list[int] | None]]:
        ids: dict[str, list[list[int] | None]] = {}
        for ar in results:  # ids <item>/tokens/<k>
            key, _, k = ar.attempt.item_id.rsplit("/", 2)
            ids.setdefault(key, [None, None])[int(k)] = list(ar.answer().ids) if ar.ok else None
        return ids

    def _ask_shared(self, answers: Answers) -> list[Attempt]:
        ids = self._token_ids(answers.of("tokenize"))
        out = []
        for it in self.items():  # type: ignore[attr-defined]
            got = ids.get(it.item_id, [None, None])
            if got[0] is None or got[1] is None:
                continue
            a, b = self.align_order(it)
            pos = dict(zip((a, b), masked_positions(got[a], got[b])))
            for k in (0, 1):
                if pos[k]:
                    req = masked_logprobs_request(ids=got[k], positions=pos[k], mask="each")
                    out.append(Attempt(f"{it.item_id}/{k}", 1, req, {"candidate": k}))
        return out

    def _shared_matrix(self, results: Sequence[AttemptResult]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(N × 2 scores, N × 2 masked-token counts, N flags 'unaligned'), NaN where an answer is missing."""
        items = self.items()  # type: ignore[attr-defined]
        index = {it.item_id: i for i, it in enumerate(items)}
        ll, nt = np.full((len(items), 2), np.nan), np.zeros((len(items), 2))
        tokens = self._token_ids([r for r in results if r.attempt.round == 0])
        unaligned = np.zeros(len(items), dtype=bool)
        for it in items:
            got = tokens.get(it.item_id, [None, None])
            if got[0] is not None and got[1] is not None and not masked_positions(got[0], got[1])[0]:
                unaligned[index[it.item_id]] = True
                ll[index[it.item_id]] = 0.0
        for ar in results:
            if ar.attempt.round == 1 and ar.ok:
                key, k = ar.attempt.item_id.rsplit("/", 1)
                lps = [float(x) for x in ar.answer().logprobs]
                ll[index[key], int(k)], nt[index[key], int(k)] = float(sum(lps)), len(lps)
        return ll, nt, unaligned

    def scores(self, results: Sequence[AttemptResult]) -> tuple[Scores, list[ScoredItem], np.ndarray]:
        if self.options.scoring != SHARED:  # type: ignore[attr-defined]
            return super().scores(results)  # type: ignore[misc]
        items = self.items()  # type: ignore[attr-defined]
        ll, nt, unaligned = self._shared_matrix(results)
        ok = ~np.isnan(ll).any(axis=1)
        kept = [it for it, good in zip(items, ok) if good]
        failed = [it for it, good in zip(items, ok) if not good]
        fields = {**stack_fields(kept), UNALIGNED: unaligned[ok]}
        return Scores(ll[ok], nt[ok], fields, kept), failed, ll

    def _records(self, results: Sequence[AttemptResult], ll_all: np.ndarray) -> list[dict[str, Any]]:
        if self.options.scoring != SHARED:  # type: ignore[attr-defined]
            return super()._records(results, ll_all)  # type: ignore[misc]
        items = self.items()  # type: ignore[attr-defined]
        index = {it.item_id: i for i, it in enumerate(items)}
        out = []
        for ar in results:
            i = index[ar.attempt.item_id.rsplit("/", 2 if ar.attempt.round == 0 else 1)[0]]
            out.append(self.record(items[i], ll_all[i]) if ar.ok and ar.attempt.round == 1 else {})
        return out
