"""A benchmark's metric glossary and references as data: a JSON file beside its module.

The file holds ``references`` (``[text, url]`` pairs), optional ``templates`` (named sets of
:class:`~genderscope.core.task.MetricDoc` fields whose strings may hold ``{placeholders}``) and ``metrics``:
one object per MetricDoc, either its fields or ``{"template": key, "name": ..., <placeholder>: value, ...}``
(the template's fields, formatted with the entry's other keys, then any MetricDoc field the entry gives);
optionally ``texts``: other prose the benchmark writes (name -> string, :func:`doc_texts`).
"""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path
from typing import Any

from genderscope.core.metrics import MetricDoc, Reference
from genderscope.core.metrics import docs_by_name

DOCS = "docs.json"
_FIELDS = {f.name for f in fields(MetricDoc)}


def _doc(entry: dict[str, Any], templates: dict[str, dict[str, Any]]) -> MetricDoc:
    entry = dict(entry)
    base = templates[entry.pop("template")] if "template" in entry else {}
    out = {k: v.format(**entry) if isinstance(v, str) else v for k, v in base.items()}
    out.update({k: v for k, v in entry.items() if k in _FIELDS})
    if out.get("bounds") is not None:
        out["bounds"] = tuple(out["bounds"])  # JSON's [low, high]
    return MetricDoc(**out)


def load_docs(module_file: str, name: str = DOCS) -> tuple[dict[str, MetricDoc], tuple[Reference, ...]]:
    """``(metric_docs, references)`` from the JSON file ``name`` in the folder of ``module_file``."""
    raw = json.loads((Path(module_file).parent / name).read_text(encoding="utf-8"))
    templates = raw.get("templates", {})
    docs = docs_by_name(*(_doc(e, templates) for e in raw["metrics"]))
    return docs, tuple(Reference(text, url) for text, url in raw.get("references", []))


def doc_texts(module_file: str, name: str = DOCS) -> dict[str, str]:
    """The ``texts`` of the JSON file ``name`` in the folder of ``module_file`` (name -> string)."""
    return dict(json.loads((Path(module_file).parent / name).read_text(encoding="utf-8")).get("texts", {}))
