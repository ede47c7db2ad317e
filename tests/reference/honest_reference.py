"""The ``honest`` package (PyPI ``honest`` 0.2.1, MilaNLProc) scoring given completions, offline: run by the
reference venv's Python (never imports genderscope).

``honest`` reads HurtLex and its templates from GitHub at run time; here ``pandas.read_csv`` inside
``honest.honest`` is wrapped so that each of its URLs reads the data mirror's file instead (the HurtLex
URL ``…/MilaNLProc/hurtlex/master/lexica/XX/1.2/hurtlex_XX.tsv`` -> ``MIRROR/hurtlex/hurtlex_XX.tsv``), and
the templates are read with ``templates(path=MIRROR/honest/<set>/<lang>_template.tsv)``.

stdin: ``{"mirror": DIR, "sets": [{"set", "language", "completions": [[str] * k per template, in the
order of templates()], "pools": {name: [identity categories]}}]}``; stdout: per set ``{"mode": "word" or
"sentence", "honest": the package's score, "groups": {identity category or pool: HONEST}, "cells":
{"CATEGORY/CODE": HONEST}, "templates": [template_masked]}``.

Per group, the package's own code runs on that group's templates alone (``honest_dataframe`` on the
subset: its score is the group's HONEST).  Per group and HurtLex category: in word mode the package
notebooks' ``honest_df.groupby('category')[codes].sum() / (count × k)``; in sentence mode the per-sentence
category counts of ``honest_score_inner`` on the group's completions / (templates × k), because
``honest_dataframe`` pairs the i-th template with the i-th *sentence* there (one list entry per sentence,
not per template), so its per-template columns do not belong to their templates.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import honest.honest as ref
import pandas as pd

_read_csv = pd.read_csv
_HURTLEX_URL = re.compile(
    r"^https://raw\.githubusercontent\.com/MilaNLProc/hurtlex/master/lexica/([A-Z]+)/1\.2/"
)


def _local_read_csv(mirror: Path):
    def read(source, *args, **kwargs):
        if isinstance(source, str) and source.startswith("https://"):
            m = _HURTLEX_URL.match(source)
            if not m:
                raise RuntimeError(f"unexpected download in honest: {source}")
            source = mirror / "hurtlex" / f"hurtlex_{m.group(1)}.tsv"
        return _read_csv(source, *args, **kwargs)

    return read


def _mode(completions: list[list[str]]) -> str:
    return "word" if len(completions[0][0].split(" ")) == 1 else "sentence"


def score_set(mirror: Path, entry: dict) -> dict:
    lang, name, completions = entry["language"], entry["set"], entry["completions"]
    evaluator = ref.HonestEvaluator(lang)
    path = mirror / "honest" / name / f"{lang}_template.tsv"
    templates = evaluator.templates(data_set="all", path=str(path))
    keys = list(templates)
    k = len(completions[0])
    score, frame = evaluator.honest_dataframe(completions, {t: dict(v) for t, v in templates.items()})
    codes = sorted(evaluator.categories)
    groups, cells = {}, {}
    mode = _mode(completions)
    for g in dict.fromkeys(templates[t]["category"] for t in keys):
        idx = [i for i, t in enumerate(keys) if templates[t]["category"] == g]
        sub = {keys[i]: dict(templates[keys[i]]) for i in idx}
        groups[g] = float(evaluator.honest(([completions[i] for i in idx]), sub))
        if mode == "word":
            rows = frame[frame["category"] == g]
            for c in codes:
                cells[f"{g}/{c}"] = float(rows[c].sum() / (rows[c].count() * k))
        else:
            inner = evaluator.honest_score_inner([completions[i] for i in idx])
            for c in codes:
                cells[f"{g}/{c}"] = float(sum(d[c] for d in inner) / (len(idx) * k))
    for pool, members in entry.get("pools", {}).items():
        idx = [i for i, t in enumerate(keys) if templates[t]["category"] in members]
        sub = {keys[i]: dict(templates[keys[i]]) for i in idx}
        groups[pool] = float(evaluator.honest([completions[i] for i in idx], sub))
    return {"mode": mode, "honest": float(score), "groups": groups, "cells": cells, "templates": keys}


def main() -> None:
    job = json.load(sys.stdin)
    mirror = Path(job["mirror"])
    ref.pd.read_csv = _local_read_csv(mirror)
    out = [score_set(mirror, entry) for entry in job["sets"]]
    from importlib.metadata import version

    versions = {p: version(p) for p in ("honest", "pandas", "numpy", "Unidecode")}
    json.dump({"sets": out, "versions": versions}, sys.stdout)


if __name__ == "__main__":
    main()
