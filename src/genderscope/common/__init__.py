"""Leaf helpers that both :mod:`genderscope.core` and :mod:`genderscope.data` use: the user-facing
errors, ``$GENDERSCOPE_HOME`` and the config file.  This package imports no other genderscope package,
so that ``data`` need not import ``core`` (``core`` imports ``data``; see docs/architecture.md)."""
