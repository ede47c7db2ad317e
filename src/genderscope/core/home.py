"""``$GENDERSCOPE_HOME``, defined in :mod:`genderscope.common.home` and re-exported here."""

from __future__ import annotations

from genderscope.common.home import home

__all__ = ["home"]
