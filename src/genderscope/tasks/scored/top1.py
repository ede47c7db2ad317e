"""Plan :class:`TopOne`: a masked LM fills an item's slot; its unrestricted top-1 prediction picks a candidate
(DaWinoBias style).

The benchmark declares per item its slot (:meth:`slot`: the text left and right of it) and how a prediction
maps to a candidate (:meth:`pick`: a name of ``candidate_names``, anything else = no candidate).  Three
rounds:

1. ``specials``: ``tokenize`` {text: ""} (attempt ``task.probe_id()``) gives the tokenizer's mask string M;
2. ``tokenize``: {left + M + right, special tokens added} per item (attempt ``<item>/tokenize``): the
   model input; a boundary piece standing alone before M (SentencePiece ``▁``, byte-level ``Ġ``: what
   `` <mask>`` may encode to) is dropped so the mask holds the whole word (:func:`mask_slot`);
3. ``fill_mask``: {ids, position, top_k: 1} per input holding exactly one mask (attempt ``<item>``).

The scores are one-hot (N × K: 1 for the picked candidate; a row of zeros when the prediction picks none).
An item without a fill-in (its input had no single mask, or a request failed) fails, with the reason as
``problem``; the top-1 token is recorded as ``pred_token``.
"""

from __future__ import annotations

from typing import Any, Sequence

from genderscope.common.errors import UsageError
from genderscope.core.metrics import Measurement
from genderscope.core.primitives import FILL_MASK, FillMask, Tokens, fill_mask_request, tokenize_request
from genderscope.core.requests import Attempt, AttemptResult
from genderscope.core.rounds import Answers, Round, Rounds
from genderscope.tasks.scored.plans import ITEM, Plan, Readout, by_item, item_attempt

SPECIALS, TOKENS, FILL = "specials", "tokenize", "fill_mask"
#: SentencePiece ▁ and byte-level Ġ standing alone
BOUNDARY_PIECES = ("\u2581", "\u0120")


def mask_slot(answer: Tokens, mask: str) -> tuple[list[int], int]:
    """(ids, mask position) of the model input from a ``tokenize`` answer (special tokens added) for
    ``left + mask + right``, a lone boundary piece before the mask dropped.  ValueError unless the input
    holds exactly one mask token."""
    ids, toks = list(answer.ids), list(answer.tokens)
    n_mask = toks.count(mask)
    if n_mask != 1:
        raise ValueError(f"the encoded input has {n_mask} mask tokens, not 1")
    k = toks.index(mask)
    if k > 0 and toks[k - 1] in BOUNDARY_PIECES:
        del ids[k - 1]
        k -= 1
    return ids, k


class TopOne(Plan):
    """See the module docstring; ``choices``: what the null model picks from (``fill_mask`` choices).  The
    benchmark defines ``slot(item) -> (left, right)``, ``pick(item, top: Prediction) -> candidate name`` and
    ``probe_id() -> str``."""

    def __init__(self, measurement: Measurement, choices: Sequence[str] | None = None):
        super().__init__(measurement)
        self.choices = list(choices) if choices is not None else None

    def rounds(self, task: Any) -> Rounds:
        def ask_specials(_: Answers) -> list[Attempt]:
            return [Attempt(task.probe_id(), 1, tokenize_request(""))]

        def ask_inputs(answers: Answers) -> list[Attempt]:
            mask = mask_string(task, answers.first(SPECIALS))
            return [
                item_attempt(it, "/tokenize", tokenize_request(left + mask + right, add_special_tokens=True))
                for it in task.items()
                for left, right in [task.slot(it)]
            ]

        def ask_fills(answers: Answers) -> list[Attempt]:
            return self._fills(answers.of(TOKENS), mask_string(task, answers.first(SPECIALS)))

        return Rounds(Round(SPECIALS, ask_specials), Round(TOKENS, ask_inputs), Round(FILL, ask_fills))

    def _fills(self, inputs: Sequence[AttemptResult], mask: str) -> list[Attempt]:
        """Round 3: the top-1 prediction at the mask of every input that holds exactly one."""
        out = []
        for ar in inputs:
            if not ar.ok:
                continue
            try:
                ids, pos = mask_slot(Tokens.of(ar.response), mask)
            except (ValueError, KeyError, TypeError):
                continue  # the item fails, with the reason
            req = fill_mask_request(ids=ids, position=pos, top_k=1, choices=self.choices)
            out.append(Attempt(ar.attempt.meta[ITEM], 1, req, ar.attempt.meta))
        return out

    def read(self, task: Any, results: Sequence[AttemptResult]) -> Readout:
        items, names = task.items(), list(task.candidate_names)
        out, got = Readout.blank(len(items), len(names)), by_item(results)
        mask = mask_string(task, task.rounds().answers(results).first(SPECIALS))
        for i, it in enumerate(items):
            rs = got.get(it.item_id, [])
            fill = next((r for r in rs if r.attempt.request.kind == FILL_MASK), None)
            if fill is None:
                out.fail(i, problem=_problem(rs, mask))
            elif not fill.ok:
                out.fail(i)
            else:
                try:
                    top = FillMask.of(fill.response).top[0]
                    picked = task.pick(it, top)
                except (KeyError, IndexError, TypeError, AttributeError):
                    out.fail(i, bad=True)
                    continue
                out.ll[i] = [float(picked == n) for n in names]
                out.info[i] = {"pred_token": top.token}
        return out


def _problem(rs: list[AttemptResult], mask: str) -> str:
    """Why no fill-in was asked for an item: its ``tokenize`` answer's error, or why it has no single mask."""
    tk = rs[0] if rs else None
    if tk is None:
        return "no answer"
    if tk.ok:
        try:
            mask_slot(Tokens.of(tk.response), mask)
        except (ValueError, KeyError, TypeError) as exc:
            return str(exc)
    return tk.error or "no answer"


def mask_string(task: Any, specials: AttemptResult | None) -> str:
    """The tokenizer's mask string from the ``specials`` answer (UsageError when there is none)."""
    what = f"{task.name} --{task.measurement_option} {getattr(task.options, task.measurement_option)}"
    if specials is None or not specials.ok:
        why = specials.error if specials is not None else "no answer"
        raise UsageError(f"{what}: the model's special tokens are unknown ({why})")
    mask = Tokens.of(specials.response).specials.mask
    if not mask:
        raise UsageError(f"{what} needs a mask token, the model's tokenizer has none")
    return str(mask)
