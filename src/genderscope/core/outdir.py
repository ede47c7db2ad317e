"""``--out`` never silently replaces an earlier run: a folder that holds a run of another spec is refused
unless the caller says ``overwrite``.

The same spec in the same folder is a resume or a refresh (a rerun after Ctrl-C, a rerun answered from
the store) and goes ahead; so does an empty folder or one without run files.  The spec is compared
without ``label`` and ``use_cache`` (neither changes a number).  With ``overwrite``, files derived from
the old run that the new one would not rewrite (``report.html``) are removed, so nothing stale is left
beside the new results.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from genderscope.common.errors import UsageError

#: the files a run folder holds (attempts, results, manifest)
RUN_FILES = ("run.json", "results.json", "attempts.jsonl")
#: files written from a run folder that describe the old run once it is replaced
DERIVED_FILES = ("report.html",)
#: spec fields that change no number
_IGNORED = ("label", "use_cache")


def _comparable(spec: Any) -> dict[str, Any] | None:
    """A spec's JSON object without the fields that change no number (None when it is not an object)."""
    if not isinstance(spec, dict):
        return None
    return {k: v for k, v in spec.items() if k not in _IGNORED}


def recorded_spec(folder: Path) -> dict[str, Any] | None:
    """The run spec stored in ``folder/run.json`` (None: no readable spec there)."""
    try:
        data = json.loads((folder / "run.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return data.get("spec") if isinstance(data, dict) else None


def describe(spec: dict[str, Any] | None) -> str:
    """A recorded spec in a few words: ``gest on random, --limit 200``."""
    if not spec:
        return "a run without a readable run spec"
    tasks = ", ".join(str(t) for t in spec.get("tasks") or []) or "?"
    parts = [f"{tasks} on {spec.get('model', '?')}"]
    for key in ("limit", "trials", "seed", "max_tokens", "temperature"):
        if spec.get(key) is not None and not (key == "seed" and spec[key] == _default_seed()):
            parts.append(f"--{key.replace('_', '-')} {spec[key]}")
    return ", ".join(parts)


def _default_seed() -> int:
    from genderscope.core.seeds import DEFAULT_SEED

    return DEFAULT_SEED


def check_out_folder(out: str | Path, spec: Any, overwrite: bool) -> None:
    """Refuse ``out`` when it holds a run of another spec than ``spec`` (a :class:`RunSpec`), unless
    ``overwrite``; with ``overwrite``, remove :data:`DERIVED_FILES` of the replaced run."""
    folder = Path(out)
    if not folder.is_dir() or not any((folder / f).exists() for f in RUN_FILES):
        return
    old = recorded_spec(folder)
    if old is not None and _comparable(old) == _comparable(spec.to_json()):
        return
    if not overwrite:
        raise UsageError(
            f"--out {folder} holds an earlier run ({describe(old)}); give a new folder, or add "
            "--overwrite to replace it"
        )
    for name in DERIVED_FILES:
        (folder / name).unlink(missing_ok=True)


def check_out(out: str | Path | None, spec: Any, write: bool, overwrite: bool) -> None:
    """The one check of a run's ``--out`` (None: a new default folder, nothing to check): a folder that can be
    written (:func:`~genderscope.core.validate.writable_path`), and, when the run writes, not one holding
    another run (:func:`check_out_folder`)."""
    from genderscope.core.validate import writable_path

    if out is None:
        return
    writable_path("--out", out, folder=True)
    if write:
        check_out_folder(out, spec, overwrite)
