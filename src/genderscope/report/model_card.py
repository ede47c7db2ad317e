"""Model-card output (``genderscope export --format model-card``): ``bias.md`` and the Hugging Face
``model-index`` YAML for the same numbers, one card per model.

``bias.md`` is a section to paste into a model card: the report's summary cells (test, headline metric,
value, 95% CI, evidence state, reading; :func:`genderscope.report.gate.state_cells`), the methods with
links (``Task.references``), the datasets with licences and sha256 (run.json and the data registry), the
versions and the exact command lines.  ``model-index.yaml`` holds ``model-index:`` for the card's YAML
front matter: one result per run and test (``task.type`` from the model kind, ``dataset.type``
``genderscope/<test>``), its metric's ``value`` (the point estimate, full precision) and ``args``
(``ci_low``, ``ci_high``, ``ci_level`` 0.95, ``state``).  An undefined value has no number to publish: it
is in ``bias.md`` only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from genderscope.common.errors import UsageError
from genderscope.core.paths import scrub_paths
from genderscope.report.gate import CheckedCell, state_cells
from genderscope.report.glossary import task_references
from genderscope.report.labels import short_model_name
from genderscope.report.runs import RunData, load_runs
from genderscope.core.textfmt import fmt

#: Hugging Face task type by model kind (anything else generates or scores text)
HF_TASK_TYPE = {"hf-mlm": "fill-mask"}
CARD_FILE = "bias.md"
INDEX_FILE = "model-index.yaml"
STATE_LEGEND = (
    "**biased**: the CI lies entirely on the stereotypical side of the no-bias value; "
    "**anti-stereotypical**: entirely on the other side; **no evidence**: the CI includes the no-bias "
    "value and is narrow; **not enough evidence**: undefined value, no CI, a CI too wide, too many "
    "unreadable answers or too few items (the reading says which); **descriptive**: the metric has no "
    "no-bias value."
)


@dataclass
class ModelCard:
    """One model's card: its runs and their summary cells (run order)."""

    model: str  # the model spec
    runs: list[RunData]
    cells: list[CheckedCell]

    @property
    def name(self) -> str:
        return short_model_name(self.model)


def _md(text: Any) -> str:
    """Text for a Markdown table cell (pipes escaped, one line)."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def _ci(c: CheckedCell) -> str:
    return f"[{fmt(c.ci_low)}, {fmt(c.ci_high)}]" if c.ci_low is not None and c.ci_high is not None else "–"


def group_cards(runs: list[RunData]) -> list[ModelCard]:
    """One card per model spec, in the order models first appear (labels as the report assigns them)."""
    cells = state_cells(runs)
    cards: dict[str, ModelCard] = {}
    for r in runs:
        card = cards.setdefault(r.model, ModelCard(r.model, [], []))
        card.runs.append(r)
        card.cells += [c for c in cells if c.run_dir == str(r.path)]
    return list(cards.values())


def _summary_lines(card: ModelCard) -> list[str]:
    several = len(card.runs) > 1
    head = (["run"] if several else []) + ["test", "metric", "value", "95% CI", "state", "reading"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for c in card.cells:
        row = ([c.run] if several else []) + [
            c.task,
            f"`{c.metric}`" if c.metric else "–",
            fmt(c.value),
            _ci(c),
            f"**{c.state}**",
            c.reading,
        ]
        lines.append("| " + " | ".join(_md(x) for x in row) + " |")
    return lines


def _methods_lines(card: ModelCard) -> list[str]:
    lines: list[str] = []
    for task in dict.fromkeys(t for r in card.runs for t in r.tasks):
        refs = task_references(task)
        links = "; ".join(f"[{ref.text}]({ref.url})" for ref in refs) or "no published reference"
        lines.append(f"* **{task}**: {links}")
    return lines


def language_table(runs: Sequence[Any]) -> dict[str, list[str]]:
    """Language (ISO 639-1) -> the tests that tested it, from each task's ``tested_languages`` in
    results.json (runs written before it was recorded: English)."""
    out: dict[str, list[str]] = {}
    for r in runs:
        for task, res in r.tasks.items():
            for lang in res.extra.get("tested_languages") or ["en"]:
                if task not in out.setdefault(lang, []):
                    out[lang].append(task)
    return dict(sorted(out.items()))


def _language_lines(card: ModelCard) -> list[str]:
    table = language_table(card.runs)
    return [f"* **{lang}**: {', '.join(tasks)}" for lang, tasks in table.items()]


def _dataset_lines(card: ModelCard) -> list[str]:
    from genderscope.data.licences import recorded_licences, restricted_notice
    from genderscope.data.registry import load_manifest

    known = load_manifest()
    used: dict[str, tuple[str, list[str]]] = {}
    licences: dict[str, str] = {}
    for r in card.runs:
        for task, tm in (r.manifest.tasks if r.manifest else {}).items():
            licences.update(recorded_licences(tm.datasets, tm.licences))
            for name, sha in tm.datasets.items():
                tasks = used.setdefault(name, (sha, []))[1]
                if task not in tasks:
                    tasks.append(task)
    if not used:
        return ["No dataset files recorded in run.json."]
    lines = ["| file | licence | sha256 | used by |", "|---|---|---|---|"]
    for name, (sha, tasks) in used.items():
        entry = known.get(name)
        source = f"[{name}]({entry.url})" if entry and entry.url else name
        lines.append(f"| {_md(source)} | {_md(licences[name])} | `{sha[:16]}…` | {_md(', '.join(tasks))} |")
    notice = restricted_notice(licences)
    return lines + (["", f"**Licences:** {_md(notice)}."] if notice else [])


def _version_lines(card: ModelCard) -> list[str]:
    lines: list[str] = []
    for r in card.runs:
        m = r.manifest
        if m is None:
            lines.append(f"* {r.label}: genderscope {r.results.genderscope_version or '?'} (no run.json)")
            continue
        pkgs = ", ".join(f"{k} {v}" for k, v in m.versions.items())
        fp = f"; model fingerprint `{m.model.fingerprint}`" if m.model and m.model.fingerprint else ""
        lines.append(f"* {r.label}: genderscope {m.genderscope_version}, {pkgs}; created {m.created}{fp}")
    return lines


def _command_lines(card: ModelCard) -> list[str]:
    cmds = list(dict.fromkeys(r.manifest.command for r in card.runs if r.manifest and r.manifest.command))
    return ["```sh", *cmds, "```"] if cmds else ["No command line recorded (runs made from Python)."]


def card_markdown(card: ModelCard) -> str:
    """``bias.md`` of one model."""
    parts = [
        f"## Gender bias evaluation: {card.name}",
        "",
        f"Measured with genderscope on `{_md(card.model)}` ({len(card.runs)} run"
        f"{'s' if len(card.runs) != 1 else ''}). Each row: the test's headline metric, its value and "
        "95% confidence interval, and the evidence state with its reading. " + STATE_LEGEND,
        "",
        *_summary_lines(card),
        "",
        "### Languages tested",
        "",
        *_language_lines(card),
        "",
        "### Methods",
        "",
        *_methods_lines(card),
        "",
        "### Datasets",
        "",
        *_dataset_lines(card),
        "",
        "### Versions",
        "",
        *_version_lines(card),
        "",
        "### Commands",
        "",
        *_command_lines(card),
        "",
    ]
    return "\n".join(parts)


def model_index(card: ModelCard) -> list[dict[str, Any]]:
    """The Hugging Face ``model-index`` of one model (the value of the ``model-index:`` key)."""
    results: list[dict[str, Any]] = []
    runs = {str(r.path): r for r in card.runs}
    for c in card.cells:
        if c.value is None:
            continue
        run = runs[c.run_dir]
        kind = run.manifest.model.kind if run.manifest and run.manifest.model else ""
        files = (
            list(run.manifest.tasks[c.task].datasets) if run.manifest and c.task in run.manifest.tasks else []
        )
        dataset: dict[str, Any] = {"type": f"genderscope/{c.task}", "name": c.task}
        if files:
            dataset["args"] = {"files": files}
        args: dict[str, Any] = {"ci_level": 0.95, "state": c.state}
        if c.ci_low is not None and c.ci_high is not None:
            args.update(ci_low=c.ci_low, ci_high=c.ci_high)
        label = f" ({c.run})" if len(card.runs) > 1 else ""
        results.append(
            {
                "task": {
                    "type": HF_TASK_TYPE.get(kind, "text-generation"),
                    "name": f"Gender bias: {c.task}{label}",
                },
                "dataset": dataset,
                "metrics": [
                    {
                        "type": c.metric,
                        "value": c.value,
                        "name": f"{c.metric} (95% CI {_ci(c)}; {c.state})",
                        "args": args,
                        "verified": False,
                    }
                ],
            }
        )
    return [{"name": card.name, "results": results}]


def index_yaml(card: ModelCard) -> str:
    """``model-index:`` YAML for a model card's front matter (needs PyYAML: the ``report`` extra)."""
    import yaml

    return yaml.safe_dump({"model-index": model_index(card)}, sort_keys=False, allow_unicode=True)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "model"


def export_model_cards(run_dirs: Sequence[str | Path], out: str | Path) -> list[Path]:
    """Write ``bias.md`` and ``model-index.yaml`` to ``out`` (one model) or ``out/<model>/`` (several);
    returns the files written.  Runs without a model (corpus-only: ``bordia score``) have no model card:
    they are left out, and a UsageError names them when nothing else is left."""
    runs = load_runs(list(run_dirs))
    models = [r for r in runs if r.manifest is None or r.manifest.model is not None]
    if not models:
        raise UsageError(
            f"no model run among {', '.join(str(r.path) for r in runs)}: a model card describes a model "
            "(corpus-only runs such as bordia score have none)"
        )
    cards = group_cards(models)
    written: list[Path] = []
    names: set[str] = set()
    for card in cards:
        target = Path(out)
        if len(cards) > 1:
            slug = _slug(card.name)
            while slug in names:
                slug += "_"
            names.add(slug)
            target = target / slug
        target.mkdir(parents=True, exist_ok=True)
        yaml_text = index_yaml(card)
        (target / CARD_FILE).write_text(scrub_paths(card_markdown(card)), encoding="utf-8")
        (target / INDEX_FILE).write_text(scrub_paths(yaml_text), encoding="utf-8")
        written += [target / CARD_FILE, target / INDEX_FILE]
    return written
