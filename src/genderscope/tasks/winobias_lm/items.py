"""The items of ``winobias-lm``: one per (condition, label, line pair), its sentence around the pronoun
slot, and the gender group of a top-1 fill-in."""

from __future__ import annotations

import unicodedata
from dataclasses import replace

from genderscope.common.errors import UsageError
from genderscope.core.primitives import Prediction
from genderscope.data.winobias_conditions import Condition, adjectives_for, condition_id, insert_adjectives
from genderscope.data.winobias_records import WinoBiasLine, WinoBiasPair, WinoBiasSet
from genderscope.data.winobias_tables import LABELS, PRONOUN_GENDER
from genderscope.tasks.scored.items import Choice, ScoredItem
from genderscope.tasks.scored.top1 import BOUNDARY_PIECES

_SLOT = "\x00"


def slot_text(line: WinoBiasLine, adj1: str | None, adj2: str | None) -> tuple[str, str]:
    """(left, right) of the adjective-inserted sentence around the (single) pronoun span."""
    ((s, e),) = line.pronoun_ranges
    placeholder = _SLOT * (e - s)  # same length: the mention offsets stay valid
    marked = replace(line, sentence=line.sentence[:s] + placeholder + line.sentence[e:])
    text = insert_adjectives(marked, adj1, adj2)
    k = text.index(placeholder)
    return text[:k], text[k + len(placeholder) :]


def build_items(
    ws: WinoBiasSet, conds: list[Condition], placement: str, prefix: str, check: bool
) -> tuple[list[ScoredItem], dict[str, tuple[str, str]]]:
    """(the items: conditions, then pro/anti, then line pairs; each item's (left, right) of its slot).
    Candidates: the sentence with the pair's female, then its male pronoun (``check``: a pair without one
    of each is a usage error); resampling unit: the line pair."""
    items = [_item(p, lab, c, placement, prefix, check) for c in conds for lab in LABELS for p in ws.pairs]
    return [it for it, _ in items], {it.item_id: slot for it, slot in items}


def _item(
    pair: WinoBiasPair, label: str, cond: Condition, placement: str, prefix: str, check: bool
) -> tuple[ScoredItem, tuple[str, str]]:
    line = pair.pro if label == "pro" else pair.anti
    a1, a2 = adjectives_for(line, cond, placement)
    left, right = slot_text(line, a1, a2)
    pronouns = (pair.pro.pronoun, pair.anti.pronoun)
    words = {PRONOUN_GENDER.get(p.lower(), "?"): p for p in pronouns}
    if check and set(words) != {"female", "male"}:
        raise UsageError(
            f"winobias-lm: line {pair.line}: the pro and anti pronouns ({', '.join(pronouns)}) are not one "
            "female and one male form; exclude the pair with --exclude"
        )
    fields = {"line": pair.line, "condition": cond.slug, "label": label, "gold": line.pronoun,
              "gold_group": line.pronoun_gender, "referent": line.referent, "adjective_entity1": a1,
              "adjective_entity2": a2, "input": left + "_" + right}  # fmt: skip
    texts = tuple(left + words.get(g, "") + right for g in ("female", "male"))
    item_id = f"{prefix}/{condition_id(cond, placement)}/{label}/{pair.line}"
    return ScoredItem(item_id, Choice("", texts), fields, f"{prefix}/{pair.line}"), (left, right)


def pronoun_group(top: Prediction) -> str:
    """male / female / other for a top-1 ``fill_mask`` prediction (its text, else decoded string, else
    token; a word continuation is other)."""
    if top.continuation:
        return "other"
    norm = (top.text if top.text is not None else top.decoded or top.token or "").strip()
    if norm[:1] in BOUNDARY_PIECES:
        norm = norm[1:]
    return PRONOUN_GENDER.get(unicodedata.normalize("NFC", norm).lower(), "other")
