"""Counterfactual gender swaps of prompts: a library (no task, backend or CLI imports).

Public API::

    from genderscope.swap import read_prompts, Prompt, swap, Swap, Change, fill_template

- :func:`read_prompts` reads JSONL, CSV/TSV or plain text (one prompt a line) into :class:`Prompt` items;
  a malformed file raises ``DataError`` with one line naming file, line, field and the fix.
- :func:`swap` swaps pronouns, gendered terms and first names in one direction (``both``, ``m2f``,
  ``f2m``, ``neutral``) and returns a :class:`Swap`: the new text, every :class:`Change`, and the reason the
  prompt is flagged (None when it is not). A prompt with nothing to swap comes back with no changes.
- :func:`fill_template` fills ``{name}``, ``{pronoun}``, ``{possessive}`` … for one gender.

User docs: ``docs/generation-swaps.md``; decisions: ``docs/decisions/gen-swap.md``.
"""

from __future__ import annotations

from genderscope.swap.engine import DIRECTIONS, Change, Swap, match_case, swap
from genderscope.swap.lexicon import Lexicon, Term, build_lexicon, default_lexicon, name_pairs
from genderscope.swap.prompts import Prompt, read_prompts
from genderscope.swap.templates import PLACEHOLDERS, fill_template

__all__ = [
    "DIRECTIONS",
    "PLACEHOLDERS",
    "Change",
    "Lexicon",
    "Prompt",
    "Swap",
    "Term",
    "build_lexicon",
    "default_lexicon",
    "fill_template",
    "match_case",
    "name_pairs",
    "read_prompts",
    "swap",
]
