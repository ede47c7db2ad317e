"""Licences of the dataset files a run used, and the one-line flag for non-commercial / research-only terms.

The licence text of a file is its ``datasets.tsv`` row's (short, as in the mirror's MANIFEST). A run records
the licence of every registry file it read (run.json, ``dataset_licences``); reports of older runs look the
names up in the registry.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

#: the licence shown for a recorded input that is not a file of the data registry (a user's own corpus)
UNREGISTERED = "not in genderscope's data registry"

_NON_COMMERCIAL = ("-nc", "non-commercial", "noncommercial")
_RESEARCH_ONLY = ("research only", "research use", "fair use")


def restriction(licence: str) -> str | None:
    """``non-commercial`` (e.g. CC BY-NC-SA), ``research only`` (research-use or fair-use terms, no licence
    grant) or None when the licence text states neither."""
    low = licence.lower()
    if any(k in low for k in _NON_COMMERCIAL):
        return "non-commercial"
    if any(k in low for k in _RESEARCH_ONLY):
        return "research only"
    return None


def registry_licences(names: Iterable[str]) -> dict[str, str]:
    """Licence of each name (a logical name of the data registry, else :data:`UNREGISTERED`)."""
    from genderscope.data.registry import load_manifest

    known = load_manifest()
    return {n: known[n].license if n in known else UNREGISTERED for n in names}


def recorded_licences(datasets: Iterable[str], recorded: Mapping[str, str] | None) -> dict[str, str]:
    """Licence of each dataset a run used: the one run.json recorded, else the registry's (older runs)."""
    recorded = recorded or {}
    names = list(datasets)
    missing = [n for n in names if n not in recorded]
    looked_up = registry_licences(missing) if missing else {}
    return {n: recorded.get(n) or looked_up[n] for n in names}


def restricted_notice(licences: Mapping[str, str]) -> str | None:
    """One line naming the files used under non-commercial or research-only terms, grouped by licence
    (None when there are none), e.g. ``data under restricted terms (non-commercial): isear/… [CC BY-NC-SA
    3.0 (non-commercial)]; check the terms before commercial use or redistribution``."""
    by_licence: dict[str, list[str]] = {}
    kinds: list[str] = []
    for name, licence in licences.items():
        kind = restriction(licence)
        if kind is None:
            continue
        by_licence.setdefault(licence, []).append(name)
        if kind not in kinds:
            kinds.append(kind)
    if not by_licence:
        return None
    groups = "; ".join(f"{', '.join(names)} [{licence}]" for licence, names in by_licence.items())
    return (
        f"data under restricted terms ({', '.join(kinds)}): {groups}; "
        "check the terms before commercial use or redistribution of these results"
    )


def restricted_summary(licences: Mapping[str, str]) -> str | None:
    """The restricted files in a few words: ``7 data files under restricted terms (research only,
    non-commercial)`` (None when there are none); :func:`restricted_notice` names them."""
    kinds: list[str] = []
    n = 0
    for licence in licences.values():
        kind = restriction(licence)
        if kind is None:
            continue
        n += 1
        if kind not in kinds:
            kinds.append(kind)
    if not n:
        return None
    return f"{n} data file{'s' if n != 1 else ''} under restricted terms ({', '.join(kinds)})"
