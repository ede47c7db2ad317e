"""``published:SYSTEM`` — translations an MT system made earlier, as their authors published them.

The GEST authors published the translations of four systems (``amazon_translate``, ``deepl``,
``google_translate``, ``nllb_3b``; kinit-sk/gest ``data/translations/<system>/<lang>/translations.csv``,
columns ``from``, ``to``; Apache-2.0), pinned in the data registry as
``gest/translations/<system>/<lang>/translations.csv``.  This backend answers the ``translate`` primitive
(:func:`genderscope.core.primitives.translate_request`: ``text``, ``source``, ``target``) with the system's
translation of ``text`` into ``target``, looked up by exact source text, so a translation study can be
re-run without any MT service.  It knows no task and answers no other kind.

* a language the system did not translate into: one line naming the languages it did (exit 2);
* a source text the file lacks: that attempt fails (``Outcome.error``, counted by the task), the run goes on;
"""

from __future__ import annotations

import csv
import hashlib
from typing import Any

from genderscope.common.errors import DataError, UsageError
from genderscope.core.backend import Backend, Emit, handles
from genderscope.core.primitives import TRANSLATE
from genderscope.core.requests import Job, Outcome
from genderscope.data.registry import DataRegistry, load_manifest

PREFIX = "gest/translations/"
FILE = "translations.csv"
#: the MT systems whose translations are published (the folder names of the GEST repository)
SYSTEMS = ("amazon_translate", "deepl", "google_translate", "nllb_3b")


def published_languages(system: str) -> dict[str, str]:
    """Target language -> logical dataset name of ``system``'s pinned translation files."""
    out = {}
    for name in load_manifest():
        if name.startswith(PREFIX) and name.endswith("/" + FILE):
            sys_, lang = name[len(PREFIX) :].split("/")[:2]
            if sys_ == system:
                out[lang] = name
    return dict(sorted(out.items()))


def read_translations(path: Any) -> dict[str, str]:
    """Source text -> translation of one ``from,to`` CSV (the first row wins for a repeated source)."""
    out: dict[str, str] = {}
    with open(path, encoding="utf-8", newline="") as fh:
        reader = csv.reader(fh)
        if next(reader, None) != ["from", "to"]:
            raise DataError(f"{path}:1: expected the header 'from,to' of a published translation file")
        for lineno, row in enumerate(reader, start=2):
            if len(row) != 2:
                raise DataError(f"{path}:{lineno}: expected 2 fields (from, to), got {len(row)}")
            out.setdefault(row[0], row[1])
    return out


class PublishedTranslationsBackend(Backend):
    kind = "published"
    description = (
        "published MT translations of GEST (published:amazon_translate|deepl|google_translate|nllb_3b); "
        "answers translate requests offline"
    )
    cacheable = False

    def __init__(self, target: str, options: Any):
        super().__init__(target, options)
        if target not in SYSTEMS:
            raise UsageError(
                f"unknown published MT system {target!r}; use published:SYSTEM with SYSTEM one of "
                + ", ".join(SYSTEMS)
            )
        self.system = target
        self.files = published_languages(target)
        self.registry = DataRegistry()
        self._tables: dict[str, dict[str, str]] = {}
        self.answered = 0
        self.missing: list[str] = []

    @property
    def fingerprint(self) -> str:
        manifest = load_manifest()
        pins = "".join(f"{name}\0{manifest[name].sha256}\n" for name in self.files.values())
        return f"published:{self.system}:{hashlib.sha256(pins.encode()).hexdigest()[:16]}"

    def table(self, language: str) -> dict[str, str]:
        """The system's translations into ``language`` (read once, sha256-checked by the registry)."""
        if language not in self._tables:
            if language not in self.files:
                raise UsageError(
                    f"published:{self.system} has no translations into {language!r}; it has "
                    + ", ".join(self.files)
                )
            self._tables[language] = read_translations(self.registry.path(self.files[language]))
        return self._tables[language]

    @handles(TRANSLATE)
    def translate(self, jobs: list[Job], emit: Emit) -> None:
        for job in jobs:
            p = job.request.payload
            if p["source"] != "en":
                raise UsageError(
                    f"published:{self.system} holds translations from English only, not from {p['source']!r}"
                )
            found = self.table(p["target"]).get(p["text"])
            if found is None:
                self.missing.append(job.item_id)
                why = f"published:{self.system} has no {p['target']} translation of {p['text']!r}"
                emit(job, Outcome(error=why))
            else:
                self.answered += 1
                emit(job, Outcome(response=found))

    def stats(self) -> dict[str, Any]:
        return {
            "system": self.system,
            "languages_read": sorted(self._tables),
            "answered": self.answered,
            "missing": len(self.missing),
            "missing_first": self.missing[:20],
        }
