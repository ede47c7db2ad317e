"""``honest`` against the ``honest`` package itself (PyPI ``honest`` 0.2.1, MilaNLProc) on the same
completions: genderscope runs a tiny masked LM (top-k fills) and a tiny causal LM (k sampled
continuations) over the mirror's templates, and the package, in its own venv and pointed at the same
template and HurtLex files (``honest_reference.py``), scores the completions genderscope read.  Every HONEST
score per set, identity group and group × HurtLex category must be equal.  A second check: genderscope's
fills are the ``honest`` README's recipe (transformers' ``fill-mask`` pipeline, ``token_str.strip()``).

The reference venv: ``$GENDERSCOPE_HONEST_VENV`` (default ``/tmp/ref-honest``), made with
``python3 -m venv /tmp/ref-honest && /tmp/ref-honest/bin/pip install honest==0.2.1``; without it the
comparison is skipped, saying so.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.reference, pytest.mark.timeout(1800)]

VENV = Path(os.environ.get("GENDERSCOPE_HONEST_VENV", "/tmp/ref-honest"))
RUNNER = Path(__file__).resolve().parent / "honest_reference.py"
K_MLM, K_CAUSAL = 10, 2
#: HurtLex lemmas per language put into the tiny models' vocabularies (so that some completions hurt)
LEMMAS = 120


@pytest.fixture(scope="module")
def ref_python() -> Path:
    py = VENV / "bin" / "python"
    fix = f"python3 -m venv {VENV} && {VENV}/bin/pip install honest==0.2.1"
    if not py.exists():
        pytest.skip(f"reference: no honest venv at {VENV} ({fix})")
    if subprocess.run([str(py), "-c", "import honest.honest"], capture_output=True).returncode != 0:
        pytest.skip(f"reference: {VENV} has no working honest package ({fix})")
    pytest.importorskip("unidecode", reason="the package's accents: pip install 'genderscope[honest]'")
    return py


def _vocabulary(data_registry: Any) -> list[str]:
    """Template words of every set, HurtLex lemmas of each language (some capitalised, as a cased model
    may write them), so that random weights give hurtful and harmless completions."""
    from genderscope.data.hurtlex import dataset_name, read_entries
    from genderscope.demo_models import words_of
    from genderscope.tasks.honest.data import LANGUAGES, SETS, dataset_name as template_file

    texts = []
    for s, langs in SETS.items():
        for lang in langs:
            texts += data_registry.path(template_file(s, lang)).read_text(encoding="utf-8").splitlines()
    words = words_of(texts)
    for lang in LANGUAGES:
        lemmas = [
            e.lemma for e in read_entries(data_registry.path(dataset_name(lang))) if e.level == "conservative"
        ]
        single = [w for w in dict.fromkeys(lemmas) if w.isalpha()][:LEMMAS]
        words += single + [w.capitalize() for w in single[:10]]
    return sorted(set(words))


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    pytest.importorskip("transformers")
    from genderscope.data.registry import DataRegistry
    from genderscope.demo_models import build_tiny_causal, build_tiny_mlm

    root = tmp_path_factory.mktemp("honest_models")
    words = _vocabulary(DataRegistry())
    pieces = ("##s", "##.", "##,", "##!")
    return {
        "mlm": build_tiny_mlm(root / "mlm", words, continuation_pieces=pieces),
        "causal": build_tiny_causal(root / "causal", words + [p[2:] for p in pieces]),
    }


def _genderscope(model: str, out: Path, **options: Any) -> tuple[dict[str, Any], dict[str, list[list[str]]]]:
    """The honest task's results block and, per set key, each template's completions (template order)."""
    import genderscope

    genderscope.run("honest", model, out=out, no_cache=True, n_boot=0, **options)
    block = json.loads((out / "results.json").read_text())["tasks"]["honest"]
    by_item: dict[str, dict[int, list[str]]] = defaultdict(dict)
    for line in (out / "attempts.jsonl").read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        if "completions" in rec:
            by_item[rec["item_id"]][rec["trial"]] = rec["completions"]
    sets: dict[str, list[list[str]]] = defaultdict(list)
    for item in sorted(by_item):
        s, lang, _ = item.split("/")
        key = f"{lang}_qnq" if s == "queer_nonqueer" else lang
        trials = by_item[item]
        sets[key].append([c for t in sorted(trials) for c in trials[t]])
    return block, dict(sets)


def _reference(py: Path, sets: dict[str, list[list[str]]]) -> dict[str, Any]:
    from genderscope.tasks.honest.data import QUEER, queer_side

    mirror = os.environ["GENDERSCOPE_DATA_MIRROR"]
    job = []
    for key, completions in sets.items():
        queer = key.endswith("_qnq")
        entry: dict[str, Any] = {
            "set": QUEER if queer else "binary",
            "language": key[:2],
            "completions": completions,
        }
        if queer:
            cats = [
                "queer",
                "queer_gender",
                "queer_gender_pronoun",
                "queer_gender_xenogender",
                "queer_orientation",
                "nonqueer",
                "nonqueer_gender",
                "nonqueer_orientation",
            ]
            entry["pools"] = {
                side: [c for c in cats if queer_side(c) == side] for side in ("queer", "nonqueer")
            }
        job.append(entry)
    run = subprocess.run(
        [str(py), str(RUNNER)],
        input=json.dumps({"mirror": mirror, "sets": job}),
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout)
    return {key: got for key, got in zip(sets, out["sets"])} | {"versions": out["versions"]}


def _compare(block: dict[str, Any], ref: dict[str, Any], mode: str) -> list[str]:
    """Every mismatch between genderscope's scores and the package's (empty: equal)."""
    metrics = {k: v["value"] for k, v in block["metrics"].items()}
    cells = {(r["set"], r["group"], r["category"]): r["honest"] for r in block["categories"]}
    bad = []
    for key, got in ref.items():
        if key == "versions":
            continue
        assert got["mode"] == mode, (key, got["mode"])
        pairs = [(f"honest_{key}", got["honest"])]
        for g, v in got["groups"].items():
            name = g if not key.endswith("_qnq") or g in ("queer", "nonqueer") else f"identity_{g}"
            pairs.append((f"honest_{key}_{name}", v))
        for cell, v in got["cells"].items():
            g, c = cell.split("/")
            g = f"identity_{g}" if key.endswith("_qnq") else g
            pairs.append((f"cell {key} {g} {c}", v))
        for name, want in pairs:
            have = cells[tuple(name.split()[1:])] if name.startswith("cell ") else metrics[name]
            if have is None or abs(have - want) > 1e-12:
                bad.append(f"{name}: genderscope {have!r}, honest {want!r}")
    return bad


def _summary(block: dict[str, Any]) -> str:
    m = block["metrics"]
    sets = ", ".join(f"{s['set']}: {s['hurtful']}/{s['completions']}" for s in block["sets"])
    gaps = ", ".join(f"{k} {m[k]['value']:.4f}" for k in m if k.startswith("gap_"))
    return f"hurtful/completions {sets}; {gaps}"


def test_masked_lm_fills_score_as_the_honest_package(
    ref_python: Path, models: dict[str, Path], tmp_path: Path
) -> None:
    block, sets = _genderscope(f"hf-mlm:{models['mlm']}", tmp_path / "mlm", k=K_MLM)
    assert block["parameters"]["accents"].startswith("unidecode"), block["parameters"]
    ref = _reference(ref_python, sets)
    assert [len(v) for v in sets.values()] == [len(ref[k]["templates"]) for k in sets]
    assert block["counts"]["hurtful"] > 0
    assert _compare(block, ref, "word") == []
    print("masked LM:", _summary(block), ref["versions"])


def test_causal_lm_samples_score_as_the_honest_package(
    ref_python: Path, models: dict[str, Path], tmp_path: Path
) -> None:
    block, sets = _genderscope(
        f"hf-causal:{models['causal']}", tmp_path / "causal", k=K_CAUSAL, languages="en", max_tokens=6
    )
    ref = _reference(ref_python, sets)
    assert block["counts"]["hurtful"] > 0
    assert _compare(block, ref, "sentence") == []
    print("causal LM:", _summary(block), ref["versions"])


def test_fills_are_the_readme_pipeline(models: dict[str, Path], tmp_path: Path) -> None:
    """genderscope's completions of a masked LM = the honest README's ``fill['token_str'].strip()`` of
    transformers' fill-mask pipeline, template by template (every 25th English template)."""
    from transformers import pipeline

    from genderscope.data.registry import DataRegistry
    from genderscope.tasks.honest.data import BINARY, load_templates

    block, sets = _genderscope(
        f"hf-mlm:{models['mlm']}", tmp_path / "mlm", k=K_MLM, languages="en", queer=False
    )
    fill = pipeline("fill-mask", model=str(models["mlm"]), top_k=K_MLM)
    templates = load_templates(DataRegistry(), BINARY, "en")
    for i in range(0, len(templates), 25):
        want = [f["token_str"].strip() for f in fill(templates[i].masked(fill.tokenizer.mask_token))]
        assert sets["en"][i] == want, (templates[i].text, sets["en"][i], want)
