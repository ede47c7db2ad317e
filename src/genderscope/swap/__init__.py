"""Counterfactual gender swaps of prompts: a library (no task, backend or CLI imports).

Modules (import each name from where it is defined)::

    from genderscope.swap.prompts import read_prompts, Prompt
    from genderscope.swap.engine import swap, Swap, Change
    from genderscope.swap.templates import fill_template

- :func:`read_prompts <genderscope.swap.prompts.read_prompts>` reads JSONL, CSV/TSV or plain text (one
  prompt a line) into :class:`Prompt` items;
  a malformed file raises ``DataError`` with one line naming file, line, field and the fix.
- :func:`~genderscope.swap.engine.swap` swaps pronouns, gendered terms and first names in one direction
  (``both``, ``m2f``,
  ``f2m``, ``neutral``) and returns a :class:`Swap`: the new text, every :class:`Change`, and the reason the
  prompt is flagged (None when it is not). A prompt with nothing to swap comes back with no changes.
- :func:`~genderscope.swap.templates.fill_template` fills ``{name}``, ``{pronoun}``, ``{possessive}`` … for
  one gender.

User docs: ``docs/generation.md``; decisions: ``docs/decisions.md``.
"""
