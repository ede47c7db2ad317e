"""HELM's gender perturbation (``crfm-helm`` 0.5.16, its own venv) beside genderscope's swap engine.

The reference venv (default ``/tmp/ref-helm-perturb``, or ``$GENDERSCOPE_HELM_PERTURB_VENV``) holds
``crfm-helm`` installed with ``--no-deps`` plus the six packages its perturbation module imports
(:data:`REF_PACKAGES`); :func:`provision` makes it. :func:`helm_swap` runs HELM's ``GenderPerturbation``
there (``helm_perturb_side.py``) at prob=1.0, where it is deterministic; :func:`compare` runs our engine on
HELM's lists only (no Bordia pairs, no names) and sorts every word where the two differ into a reason.

    PYTHONPATH=src python tests/reference/helm_perturb.py provision
    PYTHONPATH=src python tests/reference/helm_perturb.py compare   # prints the table of reasons
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from genderscope.swap import build_lexicon, swap
from genderscope.swap.lexicon import HELM_FILE, Lexicon, parse_helm

VENV = Path(os.environ.get("GENDERSCOPE_HELM_PERTURB_VENV", "/tmp/ref-helm-perturb"))
REF_PACKAGES = ("crfm-helm==0.5.16",)
REF_DEPS = ("filelock", "zstandard", "tqdm", "pyhocon", "pyyaml", "colorlog")
SIDE = Path(__file__).with_name("helm_perturb_side.py")
#: our direction -> HELM runs (mode, source, target), applied one after another
RUNS: dict[str, list[tuple[str, str, str]]] = {
    "m2f": [("terms", "male", "female"), ("pronouns", "male", "female")],
    "f2m": [("terms", "female", "male"), ("pronouns", "female", "male")],
    "neutral": [
        ("terms", "male", "neutral"),
        ("terms", "female", "neutral"),
        ("pronouns", "male", "neutral"),
        ("pronouns", "female", "neutral"),
    ],
}
TOKEN = re.compile(r"\w+|\W")


def python() -> Path:
    return VENV / "bin" / "python"


def provision() -> None:
    """Make the reference venv (idempotent)."""
    if not python().exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    pip = [str(VENV / "bin" / "pip"), "install", "-q"]
    subprocess.run([*pip, "--no-deps", *REF_PACKAGES], check=True)
    subprocess.run([*pip, *REF_DEPS], check=True)


def helm_swap(texts: list[str], direction: str) -> tuple[str, list[str]]:
    """(crfm-helm version, HELM's texts) after its runs for ``direction``, one after another."""
    runs = RUNS[direction]
    req = json.dumps({"texts": texts, "runs": runs[:1]})
    version = ""
    for run in runs:
        req = json.dumps({"texts": texts, "runs": [run]})
        res = subprocess.run(
            [str(python()), str(SIDE)], input=req, capture_output=True, text=True, check=True
        )
        out = json.loads(res.stdout)
        texts, version = out["out"][":".join(run)], out["version"]
    return version, texts


def helm_lexicon(helm_source: str) -> Lexicon:
    """Our engine's lexicon on HELM's lists alone."""
    return build_lexicon(helm_source, {}, None)


@dataclass(frozen=True)
class Difference:
    index: int
    original: str
    ours: str
    helm: str
    reason: str


def _helm_words(helm_source: str) -> set[str]:
    terms, pronouns = parse_helm(helm_source)
    return {w for row in terms + pronouns for w in row}


def _reason(orig: list[str], i: int, a: str, h: str, helm_words: set[str], agreement: bool) -> str:
    o, a, h = orig[i].lower(), a.lower(), h.lower()
    if h == o and a != o:
        if agreement:
            return "verb agreement (HELM has none)"
        if o in helm_words:
            if i == 0 or i == len(orig) - 1:
                return "HELM misses a word at the start or end of the text"
            if i >= 2 and len(orig[i - 1]) == 1 and orig[i - 2].lower() in helm_words:
                return "HELM misses a word one character after another swapped word"
        if (o, a) == ("grandfathers", "grandmothers"):
            return "HELM's term list: no 'grandfathers' (typo 'grandfather' in its row)"
    if h != o and a != o:
        if o == "his" and (a, h) in {("hers", "her"), ("theirs", "their")}:
            return "'his' as a possessive pronoun (HELM: always the determiner)"
        if o == "her" and (a, h) in {("his", "him"), ("their", "them")}:
            return "'her' as a possessive determiner (HELM: always the object)"
        if (o, a, h) == ("grandmothers", "grandfathers", "grandfather"):
            return "HELM's term list: no 'grandfathers' (typo 'grandfather' in its row)"
    return "UNEXPLAINED"


def compare(texts: list[str], direction: str, helm_source: str) -> tuple[str, list[Difference], int]:
    """(HELM version, every differing word with its reason, number of texts that differ)."""
    version, helm_texts = helm_swap(texts, direction)
    lex, words = helm_lexicon(helm_source), _helm_words(helm_source)
    diffs: list[Difference] = []
    n_texts = 0
    for k, (text, theirs) in enumerate(zip(texts, helm_texts)):
        res = swap(text, direction, names=False, lexicon=lex)
        if res.text == theirs:
            continue
        n_texts += 1
        o, a, h = TOKEN.findall(text), TOKEN.findall(res.text), TOKEN.findall(theirs)
        if not len(o) == len(a) == len(h):
            diffs.append(Difference(k, text, res.text, theirs, "UNEXPLAINED (token counts differ)"))
            continue
        starts = [m.start() for m in TOKEN.finditer(text)]
        agreed = {c.start for c in res.changes if c.rule == "agreement"}
        for i in range(len(o)):
            if a[i] != h[i]:
                agree = starts[i] in agreed or (starts[i] - 1 in agreed)
                diffs.append(Difference(k, o[i], a[i], h[i], _reason(o, i, a[i], h[i], words, agree)))
    return version, diffs, n_texts


def sample_texts(registry, n_bold: int = 100, n_wino: int = 100) -> list[str]:
    """``n_bold`` BOLD gender prompts (half actors, half actresses) and ``n_wino`` WinoBias test sentences
    (type 1 and 2, pro and anti, in turn), the WinoBias brackets and line numbers removed."""
    bold = json.loads(registry.path("bold/gender_prompt.json").read_text(encoding="utf-8"))
    texts: list[str] = []
    for group in ("American_actors", "American_actresses"):
        prompts = [p for person in bold[group].values() for p in person]
        texts += prompts[: n_bold // 2]
    files = [f"winobias/{s}_stereotyped_type{t}.txt.test" for t in (1, 2) for s in ("pro", "anti")]
    lines = [registry.path(f).read_text(encoding="utf-8").splitlines() for f in files]
    for j in range(n_wino):
        raw = lines[j % 4][j // 4]
        texts.append(re.sub(r"^\d+\s+", "", raw).replace("[", "").replace("]", ""))
    return texts


def main() -> None:
    from genderscope.data.registry import DataRegistry

    if sys.argv[1:] == ["provision"]:
        provision()
        return
    reg = DataRegistry()
    helm_source = reg.path(HELM_FILE).read_text(encoding="utf-8")
    texts = sample_texts(reg, *(int(x) for x in sys.argv[2:4]))
    for direction in RUNS:
        version, diffs, n = compare(texts, direction, helm_source)
        print(f"crfm-helm {version}, {direction}: {len(texts)} texts, {len(texts) - n} identical, {n} differ")
        for reason, count in Counter(d.reason for d in diffs).most_common():
            print(f"  {count:4d}  {reason}")
        for d in [d for d in diffs if d.reason.startswith("UNEXPLAINED")][:10]:
            print("   ", d)


if __name__ == "__main__":
    main()
