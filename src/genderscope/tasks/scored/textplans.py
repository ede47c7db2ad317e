"""Plan :class:`TextScores`: one request per candidate text, its score summed over its tokens.

Each candidate ``context + continuation`` of an item is asked alone (attempt id ``<item>/<candidate
name>``, the names from the benchmark's ``candidate_names``):

* ``token_logprobs`` (causal LMs): with an empty context the log-likelihood of the whole text, Σ ln p of
  every scored token (:func:`~genderscope.tasks.scoring.sentence_score`: after the model's start token); else
  Σ ln p of the tokens that end after the context (:func:`~genderscope.tasks.scoring.continuation_score`,
  teacher-forced over a multi-token continuation);
* ``masked_logprobs`` with mask = each (masked LMs): the text's pseudo-log-likelihood (Salazar et al. 2020).

Unlike the layer's ``loglik`` (one ``loglikelihood`` request per item) each text is its own request, so
candidates shared by several items (e.g. the same sentence judged as pro- and as anti-stereotypical) are
asked once.  An item fails when one of its answers is missing; an answer that cannot be read marks it
unreadable.
"""

from __future__ import annotations

from typing import Any, Sequence

from genderscope.core.metrics import Measurement
from genderscope.core.primitives import text_score_request
from genderscope.core.requests import AttemptResult
from genderscope.core.rounds import Round, Rounds
from genderscope.tasks.scored.plans import CANDIDATE, UNREADABLE, Plan, Readout, by_item, item_attempt
from genderscope.tasks.scoring import continuation_score, sentence_score


class TextScores(Plan):
    """See the module docstring.  ``name_key``: the attempts.jsonl field holding the candidate's name
    (``step``, or another field beside ``step`` = the round's name ``round_name``)."""

    def __init__(self, measurement: Measurement, round_name: str = "candidates", name_key: str = "step"):
        super().__init__(measurement)
        (self.kind,) = measurement.kinds
        self.round_name, self.name_key = round_name, name_key

    def rounds(self, task: Any) -> Rounds:
        def ask(_answers: Any) -> list:
            return [
                item_attempt(it, f"/{name}", text_score_request(text, self.kind), candidate=k)
                for it in task.items()
                for k, (name, text) in enumerate(zip(task.candidate_names, it.candidates.texts()))
            ]

        return Rounds(Round(self.round_name, ask))

    def read(self, task: Any, results: Sequence[AttemptResult]) -> Readout:
        items = task.items()
        out = Readout.blank(len(items), max(len(it.candidates.continuations) for it in items))
        got = by_item(results)
        for i, it in enumerate(items):
            rs = {ar.attempt.meta[CANDIDATE]: ar for ar in got.get(it.item_id, [])}
            width = len(it.candidates.continuations)
            if len(rs) < width or not all(ar.ok for ar in rs.values()):
                out.fail(i)
                continue
            try:
                for k in range(width):
                    answer, ctx = rs[k].answer(), len(it.candidates.context)
                    sc = continuation_score(answer, ctx) if ctx else sentence_score(answer)
                    out.ll[i, k], out.n_tokens[i, k] = sc.loglik, sc.n_scored
            except UNREADABLE:
                out.fail(i, bad=True)
        return out

    def fields(self, rounds: Rounds, ar: AttemptResult) -> dict[str, Any]:
        name = ar.attempt.item_id.rsplit("/", 1)[1]
        if self.name_key == "step":
            return {"step": name}
        return {"step": rounds.name_of(ar), self.name_key: name}
