"""Short, unique run labels for the report and ``compare``: never an absolute path.

A run's label is the manifest's ``label`` (``genderscope run --label TEXT``) when set; otherwise the
model's short name (:func:`short_model_name`) plus, among runs of the same model, the options that tell
them apart (e.g. ``tiny-mlm (genda-lens)``).  Labels still equal after that get ``#2``, ``#3`` … in
order.  The full spec stays in the manifest section.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import PurePath
from typing import Any

from genderscope.core import lookup

#: quantisation / precision suffixes of model file names (``SmolLM2-135M-Instruct.Q4_1`` -> ``SmolLM2-…``)
_QUANT = re.compile(r"[.\-_](q\d[\w]*|iq\d[\w]*|f16|f32|bf16|fp16|fp32|int[48])$", re.IGNORECASE)
_SUFFIXES = (".gguf", ".safetensors", ".bin", ".jsonl", ".json", ".txt")
#: option values that do not distinguish a run (the defaults most options take)
_QUIET = {"default", "auto", "none", "", "false"}
#: options never worth a label (they do not change what is measured)
_IGNORED = {"device", "device_map", "dtype", "batch_tokens", "threads", "gen_batch_size", "concurrency"}


def short_model_name(spec: str) -> str:
    """A readable name for a model spec: file or folder name without path, extension or quantisation.

    ``hf-causal:/x/SmolLM2-135M-Instruct.Q4_1.gguf`` -> ``SmolLM2-135M-Instruct``;
    ``hf-mlm:runs/demo/tiny-mlm-model`` -> ``tiny-mlm``; ``openai:gpt-4o-mini`` -> ``gpt-4o-mini``;
    ``random:5`` -> ``random (seed 5)``; ``corpus:wikitext-2:valid`` -> ``wikitext-2 valid (corpus)``.
    """
    kind, _, target = spec.partition(":")
    if not target:
        return kind or "(unknown model)"
    if kind == "random":
        return f"random (seed {target})"
    if kind == "corpus":
        return " ".join(p for p in target.split(":") if p) + " (corpus)"
    if kind not in lookup.BACKENDS:  # what a command measured, e.g. bordia-awd-lstm:ptb:tiny:lambda_0
        return f"{kind} ({', '.join(p for p in target.split(':') if p)})"
    name = PurePath(target.rstrip("/\\")).name or target
    name = name.split("@")[0]
    for suf in _SUFFIXES:
        if name.lower().endswith(suf):
            name = name[: -len(suf)]
    name = _QUANT.sub("", name)
    if name.endswith("-model") and len(name) > len("-model"):
        name = name[: -len("-model")]
    return f"replay {name}" if kind == "replay" else name


def _options(run: Any, tasks: set[str]) -> dict[str, str]:
    """What may distinguish two runs of one model: backend options, the options of ``tasks``, counts."""
    m = run.manifest
    out: dict[str, str] = {}
    if m is None:
        return out
    if m.model:
        for k, v in (m.model.options or {}).items():
            if k not in _IGNORED:
                out[k] = str(v)
    for task, info in m.tasks.items():
        if task in tasks:
            for k, v in info.options.items():
                out[k] = str(v)
    for k in ("seed", "trials", "limit"):
        v = getattr(m, k, None)
        if v is not None:
            out[k] = str(v)
    return out


def _describe(key: str, value: str) -> str:
    if value.lower() in ("true", "yes"):
        return key
    if key in ("mode", "scoring", "parser", "template", "release") or not re.fullmatch(r"[-+.\deE]+", value):
        return value
    return f"{key}={value}"


def _distinguishing(runs: Sequence[Any], tasks: set[str]) -> list[list[str]]:
    """Per run, short descriptions of the fewest differing options (in priority order) that make the
    group's labels distinct; what is measured (mode, scoring, parser) comes first."""
    opts = [_options(r, tasks) for r in runs]
    keys: list[str] = []
    for o in opts:
        for k in o:
            if k not in keys:
                keys.append(k)
    differing = [k for k in keys if len({o.get(k, "") for o in opts}) > 1]
    differing.sort(key=lambda k: (k not in ("mode", "scoring", "parser"), keys.index(k)))

    def words(o: dict[str, str], chosen: list[str]) -> tuple[str, ...]:
        return tuple(_describe(k, o[k]) for k in chosen if o.get(k, "").lower() not in _QUIET)

    chosen: list[str] = []
    for k in differing:
        before = len({words(o, chosen) for o in opts})
        if len({words(o, chosen + [k]) for o in opts}) > before:
            chosen.append(k)
        if len({words(o, chosen) for o in opts}) == len(opts):
            break
    return [list(words(o, chosen)) for o in opts]


def assign_labels(runs: Sequence[Any]) -> list[str]:
    """Set ``run.row_label`` (the summary row: model name plus distinguishing options) and ``run.label``
    (unique among ``runs``) on each run, and return the labels in order.

    Runs of one model that share no task (the demo runs GEST and WinoBias separately on one model) share
    a row label and so one summary row; their run labels add the task names.
    """
    own = [str(getattr(r.manifest, "label", None) or "") if r.manifest is not None else "" for r in runs]
    names = [short_model_name(r.model) for r in runs]
    rows = list(own)
    groups: dict[str, list[int]] = {}
    for i, n in enumerate(names):
        if not own[i]:
            groups.setdefault(n, []).append(i)
    for name, idx in groups.items():
        seen: set[str] = set()
        shared: set[str] = set()
        for i in idx:
            shared |= seen & set(runs[i].tasks)
            seen |= set(runs[i].tasks)
        conflicting = [i for i in idx if shared & set(runs[i].tasks)]
        extra = _distinguishing([runs[i] for i in conflicting], shared) if len(conflicting) > 1 else []
        for i in idx:
            rows[i] = name
        for i, words in zip(conflicting, extra):
            rows[i] = f"{name} ({', '.join(words)})" if words else name
    # still equal and sharing a task: number them
    count: dict[str, int] = {}
    for i in range(len(runs)):
        clash = [
            j
            for j in range(i)
            if rows[j].split(" #")[0] == rows[i] and set(runs[j].tasks) & set(runs[i].tasks)
        ]
        if clash:
            count[rows[i]] = count.get(rows[i], 1) + 1
            rows[i] = f"{rows[i]} #{count[rows[i]]}"
    labels = []
    for i, r in enumerate(runs):
        lab = rows[i]
        if rows.count(lab) > 1:
            lab = f"{lab} · {', '.join(r.tasks) or r.path.name}"
        labels.append(lab)
    for i, lab in enumerate(labels):  # last resort: identical task lists too
        if labels.count(lab) > 1:
            labels[i] = f"{lab} #{labels[: i + 1].count(lab)}"
    for r, row, lab in zip(runs, rows, labels):
        r.row_label, r.label = row, lab
    return labels
