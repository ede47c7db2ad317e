"""The questions of ``winobias-lm``: one item per (condition, label, line pair), its sentence around the
pronoun slot, and how the answers of the primitive requests become a predicted gender group."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, replace
from typing import Any, Iterator

from genderscope.common.errors import UsageError
from genderscope.core.primitives import Prediction, Tokens
from genderscope.data.winobias_tables import LABELS, PRONOUN_GENDER
from genderscope.data.winobias_records import WinoBiasLine, WinoBiasSet
from genderscope.data.winobias_conditions import (
    Condition,
    adjectives_for,
    condition_id,
    insert_adjectives,
)

GENDER = PRONOUN_GENDER
_SLOT = "\x00"
BOUNDARY_PIECES = ("\u2581", "\u0120")  # SentencePiece ▁ and byte-level Ġ standing alone

#: item fields copied into every attempts.jsonl record of the item
RECORD_KEYS = (
    "line",
    "condition",
    "label",
    "gold",
    "gold_group",
    "referent",
    "adjective_entity1",
    "adjective_entity2",
    "input",
)


@dataclass(frozen=True)
class Item:
    """One question: ``meta`` (indices c, s, l and the record fields) and the text around the slot."""

    item_id: str
    left: str
    right: str
    pronouns: tuple[str, str]  # the pair's (pro, anti) pronoun
    meta: dict[str, Any]

    @property
    def words(self) -> dict[str, str]:
        """Gender group -> the pair's pronoun of that gender."""
        return {GENDER.get(p.lower(), "?"): p for p in self.pronouns}


def slot_text(line: WinoBiasLine, adj1: str | None, adj2: str | None) -> tuple[str, str]:
    """(left, right) of the adjective-inserted sentence around the (single) pronoun span."""
    ((s, e),) = line.pronoun_ranges
    placeholder = _SLOT * (e - s)  # same length: the mention offsets stay valid
    marked = replace(line, sentence=line.sentence[:s] + placeholder + line.sentence[e:])
    text = insert_adjectives(marked, adj1, adj2)
    k = text.index(placeholder)
    return text[:k], text[k + len(placeholder) :]


def build_items(ws: WinoBiasSet, conds: list[Condition], placement: str, prefix: str) -> Iterator[Item]:
    """Items in attempt order: conditions, then pro/anti, then line pairs."""
    for ci, cond in enumerate(conds):
        cid = condition_id(cond, placement)
        for si, label in enumerate(LABELS):
            for li, pair in enumerate(ws.pairs):
                line = pair.pro if label == "pro" else pair.anti
                a1, a2 = adjectives_for(line, cond, placement)
                left, right = slot_text(line, a1, a2)
                meta = {
                    "c": ci,
                    "s": si,
                    "l": li,
                    "line": pair.line,
                    "condition": cond.slug,
                    "label": label,
                    "gold": line.pronoun,
                    "gold_group": line.pronoun_gender,
                    "referent": line.referent,
                    "adjective_entity1": a1,
                    "adjective_entity2": a2,
                    "input": left + "_" + right,
                }
                pronouns = (pair.pro.pronoun, pair.anti.pronoun)
                yield Item(f"{prefix}/{cid}/{label}/{pair.line}", left, right, pronouns, meta)


def candidate_words(item: Item) -> tuple[str, str]:
    """(female, male) pronoun of the item's pair; a pair without one of each is a usage error."""
    if set(item.words) != {"female", "male"}:
        raise UsageError(
            f"winobias-lm: line {item.meta['line']}: the pro and anti pronouns ({', '.join(item.pronouns)}) "
            "are not one female and one male form; exclude the pair with --exclude"
        )
    return item.words["female"], item.words["male"]


def mask_slot(answer: Tokens, mask: str) -> tuple[list[int], int]:
    """(ids, mask position) of the model input from a ``tokenize`` answer (special tokens added) for
    ``left + mask + right``: a boundary piece standing alone before the mask (SentencePiece ``▁``,
    byte-level ``Ġ``, what `` <mask>`` may encode to) is dropped, so the mask holds the whole word.
    ValueError unless the input holds exactly one mask token."""
    ids, toks = list(answer.ids), list(answer.tokens)
    n_mask = toks.count(mask)
    if n_mask != 1:
        raise ValueError(f"the encoded input has {n_mask} mask tokens, not 1")
    k = toks.index(mask)
    if k > 0 and toks[k - 1] in BOUNDARY_PIECES:
        del ids[k - 1]
        k -= 1
    return ids, k


def pronoun_group(top: Prediction) -> str:
    """male / female / other for a top-1 ``fill_mask`` prediction (its text, else decoded string, else
    token; a word continuation is other)."""
    if top.continuation:
        return "other"
    norm = (top.text if top.text is not None else top.decoded or top.token or "").strip()
    if norm[:1] in BOUNDARY_PIECES:
        norm = norm[1:]
    return GENDER.get(unicodedata.normalize("NFC", norm).lower(), "other")
