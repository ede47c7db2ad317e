"""The reference tools of genderscope's offline scorers, each in its own venv (test rig only, not in the
wheel): VADER (``vaderSentiment``), HateSonar (``hatesonar``), HELM (``crfm-helm``'s ``BiasMetric``) and
Inspect evals (``inspect-evals``' BOLD ``sentiment_scorer``).

:func:`provision` makes ``$GENDERSCOPE_REF_DIR/ref-<tool>`` (default ``/tmp``) with ``python3 -m venv``
and pip (idempotent: ``ready.json`` records what was installed):

* ``ref-vader``: ``vaderSentiment==3.3.2``;
* ``ref-hatesonar``: ``hatesonar==0.1.0`` with its declared dependencies, plus an ``en_US.UTF-8`` locale
  compiled with ``localedef`` into the venv (``LOCPATH``): HateSonar's ``Sonar()`` cannot start without
  that locale, and many containers lack it;
* ``ref-helm``: ``crfm-helm==0.5.16`` with ``--no-deps`` (its full install pulls torch, spaCy,
  transformers...) plus the packages ``helm.benchmark.metrics.bias_metrics`` imports, and ``NLTK_DATA``
  holding Punkt's English model copied from genderscope's data registry (HELM would download it);
* ``ref-inspect``: ``inspect-evals==0.26.0`` with its declared dependencies, ``inspect-ai==0.3.285`` (what
  pip resolves for it) and ``vaderSentiment==3.3.2``.  ``import inspect_evals.bold.bold`` needs
  ``datasets`` (hence pyarrow and pandas) besides inspect-ai, so a ``--no-deps`` install would save only
  jinja2, pillow, toml and hf_xet: the declared set it is.  It runs with the hub switched off
  (``HF_HUB_OFFLINE``): the script builds Inspect's scorer, never the ``bold()`` task (which loads a
  dataset from the hub).

:func:`run` scores texts in a tool's venv and returns its numbers (JSON over a pipe).

    PYTHONPATH=src python tests/reference/scorers_venvs.py provision [vader hatesonar helm inspect]
    PYTHONPATH=src python tests/reference/scorers_venvs.py compare      # print both sides' numbers
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

PINS: dict[str, dict[str, Any]] = {
    "vader": {"packages": ["vaderSentiment==3.3.2"], "no_deps": []},
    "hatesonar": {"packages": ["hatesonar==0.1.0"], "no_deps": []},
    "helm": {
        "packages": [
            "nltk==3.10.4",
            "numpy",
            "filelock",
            "zstandard",
            "pyhocon",
            "pyyaml",
            "colorlog",
            "sqlitedict",
            "retrying",
            "mako",
            "dacite",
            "cattrs",
        ],
        "no_deps": ["crfm-helm==0.5.16"],
    },
    "inspect": {
        "packages": ["inspect-evals==0.26.0", "inspect-ai==0.3.285", "vaderSentiment==3.3.2"],
        "no_deps": [],
    },
}


class ReferenceUnavailable(RuntimeError):
    """A reference venv cannot be made or used here (the message says why, in one line)."""


def root() -> Path:
    return Path(os.environ.get("GENDERSCOPE_REF_DIR", "/tmp"))


def venv(tool: str) -> Path:
    return root() / f"ref-{tool}"


def _pip(target: Path, args: list[str]) -> None:
    proc = subprocess.run(
        [str(target / "bin" / "python"), "-m", "pip", "install", "-q", *args],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    if proc.returncode:
        raise ReferenceUnavailable(f"pip install {' '.join(args)} failed: {proc.stderr.strip()[-300:]}")


def _locale_dir(target: Path) -> Path:
    return target / "locales"


def _compile_locale(target: Path) -> None:
    out = _locale_dir(target)
    if (out / "en_US.UTF-8").is_dir():
        return
    if shutil.which("localedef") is None:
        raise ReferenceUnavailable(
            "localedef not found: cannot compile the en_US.UTF-8 locale HateSonar needs"
        )
    out.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(
        ["localedef", "-i", "en_US", "-f", "UTF-8", str(out / "en_US.UTF-8")], capture_output=True, text=True
    )
    if proc.returncode not in (0, 1) or not (out / "en_US.UTF-8").is_dir():  # 1: warnings only
        raise ReferenceUnavailable(f"localedef en_US.UTF-8 failed: {proc.stderr.strip()[-200:]}")


def _nltk_data(target: Path) -> Path:
    return target / "nltk_data"


def _copy_punkt(target: Path) -> None:
    from genderscope.data.registry import DataRegistry
    from genderscope.scorers.tokens import PUNKT_FILES, PUNKT_PREFIX

    registry = DataRegistry()
    dest = _nltk_data(target) / "tokenizers" / "punkt_tab" / "english"
    dest.mkdir(parents=True, exist_ok=True)
    for name in PUNKT_FILES:
        shutil.copyfile(registry.path(PUNKT_PREFIX + name), dest / name)


def provision(tool: str) -> Path:
    """The venv of ``tool`` (made on first use)."""
    target = venv(tool)
    pins = PINS[tool]
    ready = target / "ready.json"
    if ready.is_file() and json.loads(ready.read_text()) == pins:
        return target
    if not target.is_dir():
        proc = subprocess.run([sys.executable, "-m", "venv", str(target)], capture_output=True, text=True)
        if proc.returncode:
            raise ReferenceUnavailable(f"python -m venv {target} failed: {proc.stderr.strip()[-200:]}")
    _pip(target, pins["packages"])
    if pins["no_deps"]:
        _pip(target, ["--no-deps", *pins["no_deps"]])
    if tool == "hatesonar":
        _compile_locale(target)
    if tool == "helm":
        _copy_punkt(target)
    ready.write_text(json.dumps(pins))
    return target


def available(tool: str) -> str | None:
    """None when ``tool``'s venv is ready, else why not (one line)."""
    ready = venv(tool) / "ready.json"
    if not ready.is_file():
        make = f"python tests/reference/scorers_venvs.py provision {tool}"
        return f"no reference venv {venv(tool)} (make it: {make})"
    if json.loads(ready.read_text()) != PINS[tool]:
        return f"{venv(tool)} was made with other pins; reprovision it"
    return None


# the scripts run inside the reference venvs: texts arrive as JSON on stdin, numbers leave on stdout
SCRIPTS = {
    "vader": """
import json, sys
from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer
a = SentimentIntensityAnalyzer()
texts = json.load(sys.stdin)
json.dump([a.polarity_scores(t)["compound"] for t in texts], sys.stdout)
""",
    "hatesonar": """
import json, sys
from hatesonar import Sonar
sonar = Sonar()
texts = json.load(sys.stdin)
out = []
for t in texts:
    r = sonar.ping(text=t)
    out.append([r["top_class"], [float(c["confidence"]) for c in r["classes"]]])
json.dump(out, sys.stdout)
""",
    "helm": """
import json, sys
from helm.benchmark.metrics.bias_metrics import BiasMetric
texts = json.load(sys.stdin)
out = {}
for cat in ("gender", "race"):
    rep = BiasMetric("representation", cat)
    out[f"representation_{cat}"] = rep.evaluate_demographic_representation(texts)
    for target in ("adjective", "profession"):
        m = BiasMetric("associations", cat, target)
        out[f"associations_{cat}_{target}"] = m.evaluate_stereotypical_associations(texts)
from nltk.tokenize import word_tokenize
out["tokens"] = [word_tokenize(t.lower()) for t in texts]
import importlib.metadata as md
out["versions"] = {p: md.version(p) for p in ("crfm-helm", "nltk", "numpy")}
json.dump(out, sys.stdout, default=float)
""",
    "inspect": """
import asyncio, json, sys
import importlib.metadata as md
from inspect_ai.model import ModelName, ModelOutput
from inspect_ai.scorer import SampleScore, Target, mean, stderr
from inspect_ai.solver import TaskState
from inspect_evals.bold.bold import sentiment_scorer

texts = json.load(sys.stdin)
score = sentiment_scorer()

async def one(i, text):
    output = ModelOutput.from_content(model="reference/text", content=text)
    state = TaskState(ModelName("reference/text"), i, 1, "", [], output=output)
    return await score(state, Target(""))

async def every():
    return [await one(i, t) for i, t in enumerate(texts)]

scores = asyncio.run(every())
samples = [SampleScore(score=s, sample_id=i) for i, s in enumerate(scores)]
out = {
    "values": [s.value for s in scores],
    "answers": [s.answer for s in scores],
    "mean": mean()(samples),
    "stderr": stderr()(samples),
    "versions": {p: md.version(p) for p in ("inspect-evals", "inspect-ai", "vaderSentiment")},
}
json.dump(out, sys.stdout, default=float)
""",
}


def run(tool: str, texts: list[str], timeout: float = 1800) -> Any:
    """``tool``'s own numbers on ``texts`` (run in its venv)."""
    why = available(tool)
    if why:
        raise ReferenceUnavailable(why)
    target = venv(tool)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    if tool == "hatesonar":
        env["LOCPATH"] = str(_locale_dir(target))
    if tool == "helm":
        env["NLTK_DATA"] = str(_nltk_data(target))
    if tool == "inspect":  # the scorer needs no hub; nothing may reach for one
        env.update(HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1")
    proc = subprocess.run(
        [str(target / "bin" / "python"), "-c", SCRIPTS[tool]],
        input=json.dumps(texts),
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=str(target),
    )
    if proc.returncode:
        raise ReferenceUnavailable(f"{tool} reference run failed: {proc.stderr.strip()[-400:]}")
    return json.loads(proc.stdout)


def _main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("provision", "compare"):
        print(__doc__)
        return 2
    if argv[0] == "provision":
        for tool in argv[1:] or list(PINS):
            print(tool, provision(tool))
        return 0
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import scorer_texts

    texts = scorer_texts.corpus()
    print(json.dumps(scorer_texts.compare_all(texts), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
