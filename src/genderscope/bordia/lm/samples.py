"""A folder of generated samples (spec §8/§9.1): which settings its ``manifest.json`` pins; no torch
here, so the sweep's command layer reads it without loading a model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from genderscope.common.errors import UsageError

#: the manifest entries whose change makes the folder's samples a different stage (spec §9.1)
SAMPLE_SETTINGS = ("words", "temperature", "seed_offset")


def changed_settings(prev: dict[str, Any], settings: dict[str, Any]) -> list[str]:
    """The :data:`SAMPLE_SETTINGS` whose value in ``settings`` differs from the manifest ``prev``."""
    return [k for k in SAMPLE_SETTINGS if prev.get(k) != settings[k]]


def check_sample_settings(samples_dir: Path, settings: dict[str, Any], force: bool) -> dict[str, Any] | None:
    """The folder's manifest (None: it has none yet).  Other ``--words``/``--temperature``/``--seed-offset``
    than the manifest's: a UsageError unless ``force`` (spec §9.1: a stage whose configuration changed)."""
    old = Path(samples_dir) / "manifest.json"
    if not old.exists():
        return None
    prev = json.loads(old.read_text())
    changed = changed_settings(prev, settings)
    if changed and not force:
        raise UsageError(
            f"{samples_dir} holds samples with other settings ("
            + ", ".join(f"{k} {prev.get(k)} ≠ {settings[k]}" for k in changed)
            + "); use another output folder or --force to replace them"
        )
    return prev
