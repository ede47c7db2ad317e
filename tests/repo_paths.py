"""Paths the tests read, wherever a test file sits under tests/: the repository root, tests/ and its
fixtures (a test computes none from its own ``__file__``)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
FIXTURES = TESTS / "fixtures"
