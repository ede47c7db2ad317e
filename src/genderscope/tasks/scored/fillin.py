"""Scoring ``fill``: a masked LM fills a slot piece by piece (bias-bench's StereoSet intrasentence scoring).

A mixin for :class:`~.benchmark.ScoredBenchmark` (list it first among the bases).  An item declares a
:class:`Slot` (:meth:`FillInScoring.slot`): a template whose marker stands for the slot, and per candidate
the word that fills it.  Three rounds:

1. ``tokenize`` one probe text: the mask token's string and whether the tokenizer marks word starts (no
   ``##`` continuation prefix: BPE / SentencePiece, whose words are encoded after a space, as bias-bench
   does for RoBERTa);
2. ``tokenize`` each template with every marker replaced by the mask token (special tokens added) and
   each fill word (none added);
3. per candidate and word-piece i: the template's ids with pieces 0..i-1 and a mask at each marker,
   ``masked_logprobs`` (mask = none) of piece i at the first marker.

A candidate's score is the mean *probability* of its pieces (bias-bench's ``np.mean`` of softmax values; a
log of it would order candidates differently).  Items without a slot (``slot`` is None: e.g. StereoSet's
intersentence items, or a template the candidates do not fit) are scored by the pseudo-log-likelihood of
each candidate text, mean per token.
"""

from __future__ import annotations

import math
import re
import string
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from genderscope.core.primitives import MASKED_LOGPROBS, TOKENIZE, masked_logprobs_request, tokenize_request
from genderscope.core.requests import Attempt, AttemptResult
from genderscope.core.rounds import Answers, Round, Rounds
from genderscope.core.metrics import Measurement
from genderscope.tasks.scored.items import ScoredItem, Scores, stack_fields

FILL = "fill"
FILL_MEASUREMENT = Measurement(
    frozenset({TOKENIZE, MASKED_LOGPROBS}),
    "mean probability of the slot word's pieces, each at a mask left to right (bias-bench)",
)


@dataclass(frozen=True)
class Slot:
    """``template`` with ``marker`` where the slot is (every occurrence is masked, the first scored) and
    the ``words`` filling it, one per candidate."""

    template: str
    words: tuple[str, ...]
    marker: str = "BLANK"


NO_PUNCT = str.maketrans("", "", string.punctuation)


def blank_slot(template: str, sentences: Sequence[str], marker: str = "BLANK") -> Slot | None:
    """bias-bench's slot of a fill-in-the-blank template: the word of each sentence at the (last) word of
    ``template`` holding ``marker``, split on spaces, punctuation stripped; None when a sentence has no such
    word."""
    at = [i for i, w in enumerate(template.split(" ")) if marker in w]
    words = []
    for sent in sentences:
        parts = sent.split(" ")
        words.append(parts[at[-1]].translate(NO_PUNCT) if at and at[-1] < len(parts) else "")
    return Slot(template, tuple(words), marker) if all(words) else None


def fills_template(template: str, sentence: str, marker: str = "BLANK") -> bool:
    """Whether ``sentence`` is ``template`` with each ``marker`` filled (case and spaces ignored)."""
    norm = lambda t: re.sub(r"\s+", " ", t.strip().lower())  # noqa: E731
    parts = norm(template).split(marker.lower())
    if len(parts) < 2:
        return False
    return re.fullmatch("(.+?)".join(re.escape(p) for p in parts), norm(sentence)) is not None


def splice(ids: list[int], mask_id: int, pieces: list[int]) -> tuple[list[int], int]:
    """``ids`` with ``pieces`` inserted before every ``mask_id``, and the first mask's new position."""
    out: list[int] = []
    first = -1
    for t in ids:
        if t == mask_id:
            out += pieces
            first = len(out) if first < 0 else first
        out.append(t)
    return out, first


def _id(item_id: str, *parts: object) -> str:
    return "/".join([item_id, *map(str, parts)])


class FillInScoring:
    """Mixin: ``--scoring fill`` (see the module docstring)."""

    def slot(self, item: ScoredItem) -> Slot | None:
        """The item's slot (None: score its candidate texts by PLL)."""
        return None

    def rounds(self) -> Rounds | None:
        if self.options.scoring != FILL:  # type: ignore[attr-defined]
            return super().rounds()  # type: ignore[misc]
        return Rounds(
            Round("probe", self._ask_probe), Round("encode", self._ask_encode), Round("fill", self._ask_fill)
        )

    def attempts(self) -> list[Attempt]:
        if self.options.scoring != FILL:  # type: ignore[attr-defined]
            return super().attempts()  # type: ignore[misc]
        return self.rounds().first()  # type: ignore[union-attr]

    def _ask_probe(self, _answers: Answers) -> list[Attempt]:
        pll = [
            Attempt(
                _id(it.item_id, "pll", k), 1, masked_logprobs_request(text, mask="each"), {"candidate": k}
            )
            for it in self.items()  # type: ignore[attr-defined]
            if self.slot(it) is None
            for k, text in enumerate(it.candidates.texts())
        ]
        return [Attempt(f"{self.name}/probe", 1, tokenize_request("a"))] + pll  # type: ignore[attr-defined]

    def _ask_encode(self, answers: Answers) -> list[Attempt]:
        probe = answers.first("probe")
        if probe is None or not probe.ok or not probe.answer().specials.mask:
            return []
        tok = probe.answer()
        lead = " " if tok.continuation_prefix is None else ""
        out = []
        for it in self.items():  # type: ignore[attr-defined]
            s = self.slot(it)
            if s is None:
                continue
            text = s.template.replace(s.marker, tok.specials.mask)
            out.append(
                Attempt(_id(it.item_id, "template"), 1, tokenize_request(text, add_special_tokens=True))
            )
            for k, w in enumerate(s.words):
                out.append(
                    Attempt(_id(it.item_id, "word", k), 1, tokenize_request(lead + w), {"candidate": k})
                )
        return out

    def _ask_fill(self, answers: Answers) -> list[Attempt]:
        got = {ar.attempt.item_id: ar for ar in answers.of("encode") if ar.ok}
        out = []
        for it in self.items():  # type: ignore[attr-defined]
            tmpl = got.get(_id(it.item_id, "template"))
            if tmpl is None:
                continue
            t = tmpl.answer()
            mask_id = t.ids[t.tokens.index(t.specials.mask)] if t.specials.mask in t.tokens else None
            for k in range(len(it.candidates.continuations)):
                word = got.get(_id(it.item_id, "word", k))
                pieces = list(word.answer().ids) if word is not None else []
                for i in range(len(pieces) if mask_id is not None else 0):
                    ids, pos = splice(list(t.ids), mask_id, pieces[:i])
                    req = masked_logprobs_request(ids=ids, positions=[pos], targets=[pieces[i]], mask="none")
                    out.append(Attempt(_id(it.item_id, "fill", k, i), 1, req, {"candidate": k}))
        return out

    def scores(self, results: Sequence[AttemptResult]) -> tuple[Scores, list[ScoredItem], np.ndarray]:
        if self.options.scoring != FILL:  # type: ignore[attr-defined]
            return super().scores(results)  # type: ignore[misc]
        items = self.items()  # type: ignore[attr-defined]
        k_max = max(len(it.candidates.continuations) for it in items)
        probs: dict[tuple[str, int], list[float]] = {}
        ll = np.full((len(items), k_max), np.nan)
        index = {it.item_id: i for i, it in enumerate(items)}
        for ar in results:
            parts = ar.attempt.item_id.rsplit("/", 3)
            if not ar.ok or ar.attempt.request.kind != MASKED_LOGPROBS:
                continue
            lps = [float(x) for x in ar.answer().logprobs]
            if parts[-2] == "pll":  # <item>/pll/<k>
                key, k = ar.attempt.item_id.rsplit("/", 2)[0], int(ar.attempt.meta["candidate"])
                ll[index[key], k] = sum(lps) / max(len(lps), 1)
            elif ar.attempt.round == 2:  # <item>/fill/<k>/<i>
                key = ar.attempt.item_id.rsplit("/", 3)[0]
                probs.setdefault((key, int(ar.attempt.meta["candidate"])), []).extend(
                    math.exp(x) for x in lps
                )
        for (key, k), ps in probs.items():
            ll[index[key], k] = float(np.mean(ps))
        ok = ~np.isnan(ll).any(axis=1)
        kept = [it for it, good in zip(items, ok) if good]
        fields = stack_fields(kept)
        failed = [it for it, good in zip(items, ok) if not good]
        return Scores(ll[ok], np.ones_like(ll[ok]), fields, kept), failed, ll

    def _records(self, results: Sequence[AttemptResult], ll_all: np.ndarray) -> list[dict[str, Any]]:
        if self.options.scoring != FILL:  # type: ignore[attr-defined]
            return super()._records(results, ll_all)  # type: ignore[misc]
        index = {it.item_id: i for i, it in enumerate(self.items())}  # type: ignore[attr-defined]
        items = self.items()  # type: ignore[attr-defined]
        out = []
        for ar in results:
            key = next(
                (
                    ar.attempt.item_id.rsplit("/", n)[0]
                    for n in (1, 2, 3)
                    if ar.attempt.item_id.rsplit("/", n)[0] in index
                ),
                None,
            )
            out.append(self.record(items[index[key]], ll_all[index[key]]) if key and ar.ok else {})
        return out
