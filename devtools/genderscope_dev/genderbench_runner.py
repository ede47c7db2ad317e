"""Run GenderBench 1.1.0's own probes, as its ``DefaultHarness`` configures them, and write their numbers.

A standalone script for the Python 3.12 venv that :mod:`genderscope_dev.genderbench_venv` provisions:
it imports GenderBench (and its dependencies) and the standard library, never genderscope.  The answer
rule comes from ``answer_rules.py`` next to this file, loaded by path (standard library only).

    python genderbench_runner.py --probes all --rule rule-a --no-cis --out OUT.json --log-dir LOGS \\
        --nltk-data DIR --gest-csv gest.csv
    python genderbench_runner.py --probes inventories,jobs-lum --base-url http://127.0.0.1:PORT/v1 \\
        --concurrency 64 --out OUT.json --log-dir LOGS --nltk-data DIR --gest-csv gest.csv

Generators: ``--rule`` answers in process (a GenderBench ``Generator`` subclass computing
``answer_rules.answer(prompt, rule)``); ``--base-url`` uses GenderBench's ``OpenAiAsyncApiGenerator``.

Offline patches, applied before any probe is built (GenderBench itself is not modified):

* ``nltk.download`` becomes a no-op returning True (GenderBench's evaluators call
  ``nltk.download("punkt_tab")`` in their constructors, which contacts the NLTK index); ``--nltk-data``
  is put first on ``nltk.data.path`` (it must hold ``tokenizers/punkt_tab/english/``).
* ``pandas.read_csv("hf://datasets/kinit/gest/gest.csv")`` (that exact path only; the gest and
  gest_creative probes read GEST 1.0 from the Hugging Face hub) reads ``--gest-csv`` instead.
* The API generator: GenderBench 1.1.0's ``AsyncApiGenerator.generate`` calls ``self._generate``, which
  does not exist, whenever no event loop is running, i.e. always from a script.  The runner's
  ``ScriptOpenAiGenerator`` overrides ``generate`` only: it runs GenderBench's own ``async_generate``
  (semaphore of ``max_concurrent_tasks``, retries, ``tqdm.gather``) with ``run_until_complete`` on one
  event loop kept for the generator's life, which is what GenderBench's Jupyter branch does on the
  notebook's loop.
  (``asyncio.run`` per probe would leave the shared AsyncOpenAI client's keep-alive connections on a
  closed loop: requests are then sent again.)

Each probe runs GenderBench's four steps (``create_probe_items``, ``generate``, ``evaluate``,
``calculate_metrics``) one at a time so that each is timed (wall: ``time.perf_counter``; CPU:
``time.process_time``, all threads of this process); the probe's log line (``log_strategy="after"``,
GenderBench's ``{"probe_state": ...}`` JSON line in ``<log-dir>/<class lower>_<uuid>.jsonl``) is written
after the metrics, timed as ``log``, and the harness's own ``defaultharness_<uuid>.jsonl`` line as
``Harness.run`` writes it.

Output JSON: ``{"genderbench": version, "generator": {...}, "calculate_cis", "bootstrap_cycles",
"probes": {NAME: {"class", "parameters", "metrics": {metric: value or [low, high]}, "marks": {metric:
mark_value}, "n_items", "n_attempts", "n_prompts_distinct", "wall_seconds": {step: s, "total": s},
"cpu_seconds": {...}, "log_file"}}, "total": {"wall_seconds", "cpu_seconds"}}``; NaN is written as null.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

#: genderscope task name -> GenderBench probe class (genderbench.probes)
PROBES = {
    "bbq": "BbqProbe",
    "business-vocabulary": "BusinessVocabularyProbe",
    "direct": "DirectProbe",
    "discrimination-tamkin": "DiscriminationTamkinProbe",
    "diversity-med-qa": "DiversityMedQaProbe",
    "dreaddit": "DreadditProbe",
    "gest": "GestProbe",
    "gest-creative": "GestCreativeProbe",
    "hiring-an": "HiringAnProbe",
    "hiring-bloomberg": "HiringBloombergProbe",
    "inventories": "InventoriesProbe",
    "isear": "IsearProbe",
    "jobs-lum": "JobsLumProbe",
    "relationship-levy": "RelationshipLevyProbe",
}
GEST_HUB_PATH = "hf://datasets/kinit/gest/gest.csv"
STEPS = ("populate", "generate", "evaluate", "metrics", "log")


def probe_names(spec: str) -> list[str]:
    """``all`` or comma-separated names (``-`` or ``_``) -> genderscope task names, in the given order."""
    if spec == "all":
        return list(PROBES)
    names = [s.strip().replace("_", "-") for s in spec.split(",") if s.strip()]
    unknown = [n for n in names if n not in PROBES]
    if unknown:
        raise SystemExit(f"unknown probe(s) {', '.join(unknown)}; known: {', '.join(PROBES)}")
    return names


def apply_offline_patches(nltk_data: str | None, gest_csv: str | None) -> None:
    """No NLTK download, Punkt from ``nltk_data``; GEST's hub path read from ``gest_csv`` (module doc)."""
    import nltk
    import pandas

    def no_download(*args: Any, **kwargs: Any) -> bool:
        return True

    nltk.download = no_download
    if nltk_data:
        nltk.data.path.insert(0, nltk_data)
    original = pandas.read_csv

    def read_csv(path: Any, *args: Any, **kwargs: Any) -> Any:
        if path == GEST_HUB_PATH:
            if not gest_csv:
                raise SystemExit(f"{GEST_HUB_PATH} needs --gest-csv (GEST 1.0's gest.csv)")
            path = gest_csv
        return original(path, *args, **kwargs)

    pandas.read_csv = read_csv


def load_answer_rules() -> Any:
    """``answer_rules.py`` next to this file, loaded by path (not through the genderscope package)."""
    path = Path(__file__).with_name("answer_rules.py")
    spec = importlib.util.spec_from_file_location("gs_answer_rules", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def rule_generator(rule: str) -> Any:
    """A GenderBench ``Generator`` answering every prompt with ``answer_rules.answer(prompt, rule)``."""
    from genderbench.generators.generator import Generator

    rules = load_answer_rules()
    if rule not in rules.RULES:
        raise SystemExit(f"unknown rule {rule!r}; known: {', '.join(rules.RULES)}")

    class RuleGenerator(Generator):
        def generate(self, texts: list[str]) -> list[str]:
            return [rules.answer(text, rule) for text in texts]

    return RuleGenerator()


def api_generator(base_url: str, concurrency: int, model: str, api_key: str) -> Any:
    """GenderBench's ``OpenAiAsyncApiGenerator`` with the script patch (module doc)."""
    from genderbench.generators import OpenAiAsyncApiGenerator

    class ScriptOpenAiGenerator(OpenAiAsyncApiGenerator):
        loop: asyncio.AbstractEventLoop | None = None

        def generate(self, texts: list[str]) -> list[str]:
            if self.loop is None:
                self.loop = asyncio.new_event_loop()
            return self.loop.run_until_complete(self.async_generate(texts))

        def close(self) -> None:
            if self.loop is not None:
                self.loop.run_until_complete(self.client.close())
                self.loop.close()

    return ScriptOpenAiGenerator(
        model=model, api_key=api_key, base_url=base_url, max_concurrent_tasks=concurrency
    )


def jsonable(value: Any) -> Any:
    """Metric values and intervals as JSON: NaN -> None, numpy scalars -> Python, tuples -> lists."""
    if isinstance(value, (tuple, list)):
        return [jsonable(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def build_probes(names: list[str], args: argparse.Namespace) -> tuple[Any, dict[str, Any]]:
    """The harness (``DefaultHarness`` with ``log_dir``, ``calculate_cis``, ``bootstrap_cycles``) and its
    probes by name; a probe with ``--probe-kwargs`` is built with those instead of the harness's."""
    import genderbench.probes as gb_probes
    from genderbench.harnesses.default import DefaultHarness

    settings: dict[str, Any] = {"calculate_cis": args.cis}
    if args.bootstrap_cycles is not None:
        settings["bootstrap_cycles"] = args.bootstrap_cycles
    harness = DefaultHarness(log_dir=args.log_dir, **settings)
    by_class = {type(p).__name__: p for p in harness.probes}
    overrides = json.loads(args.probe_kwargs) if args.probe_kwargs else {}
    probes = {}
    for name in names:
        kwargs = overrides.get(name, overrides.get(name.replace("-", "_")))
        if kwargs is None:
            probes[name] = by_class[PROBES[name]]
        else:
            probe = getattr(gb_probes, PROBES[name])(**kwargs)
            for attr, value in {**settings, "log_dir": harness.log_dir}.items():
                setattr(probe, attr, value)
            probes[name] = probe
    return harness, probes


def _timed(fn: Any, wall: dict[str, float], cpu: dict[str, float], step: str) -> None:
    w0, c0 = time.perf_counter(), time.process_time()
    fn()
    wall[step] = time.perf_counter() - w0
    cpu[step] = time.process_time() - c0


def run_probe(probe: Any, generator: Any, harness: Any) -> dict[str, Any]:
    """GenderBench's ``Probe.run`` step by step (timed), its log line, the harness's log line."""
    wall: dict[str, float] = {}
    cpu: dict[str, float] = {}
    strategy = probe.log_strategy
    probe.log_strategy = "no"  # the log line is written (and timed) separately below
    _timed(probe.create_probe_items, wall, cpu, "populate")
    _timed(lambda: probe.generate(generator), wall, cpu, "generate")
    _timed(probe.evaluate, wall, cpu, "evaluate")
    _timed(probe.calculate_metrics, wall, cpu, "metrics")
    probe.log_strategy = strategy
    if strategy in ("during", "after"):
        _timed(probe.log_current_state, wall, cpu, "log")
    entry = {"class": type(probe).__name__, "marks": probe.marks, "metrics": probe.metrics}
    harness.log_results({**entry, "probe_uuid": probe.uuid})
    wall["total"], cpu["total"] = sum(wall.values()), sum(cpu.values())
    attempts = list(probe.attempts)
    parameters = {
        k: jsonable(getattr(probe, k))
        for k in ("num_repetitions", "sample_k", "random_seed", "calculate_cis", "bootstrap_cycles")
    }
    return {
        "class": type(probe).__name__,
        "parameters": parameters,
        "metrics": {k: jsonable(v) for k, v in probe.metrics.items()},
        "marks": {k: jsonable(m["mark_value"]) for k, m in probe.marks.items()},
        "n_items": len(probe.probe_items),
        "n_attempts": len(attempts),
        "n_prompts_distinct": len({a.prompt.text for a in attempts}),
        "wall_seconds": {k: round(v, 4) for k, v in wall.items()},
        "cpu_seconds": {k: round(v, 4) for k, v in cpu.items()},
        "log_file": str(probe.log_file) if strategy in ("during", "after") else None,
    }


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="genderbench_runner.py", description=__doc__.split("\n")[0])
    ap.add_argument("--probes", default="all", help="all, or comma-separated names (e.g. bbq,jobs-lum)")
    gen = ap.add_mutually_exclusive_group(required=True)
    gen.add_argument("--rule", help="answer in process with answer_rules (rule-a, rule-b)")
    gen.add_argument("--base-url", help="OpenAI-compatible base URL (…/v1): GenderBench's API generator")
    ap.add_argument("--concurrency", type=int, default=64, help="API generator's max_concurrent_tasks")
    ap.add_argument("--model", default="fake", help="model name sent to the API")
    ap.add_argument("--api-key", default="none", help="API key sent to the API")
    ap.add_argument("--cis", action=argparse.BooleanOptionalAction, default=False,
                    help="GenderBench's bootstrap intervals (calculate_cis; its default is on)")  # fmt: skip
    ap.add_argument("--bootstrap-cycles", type=int, default=None, help="default: GenderBench's (1000)")
    ap.add_argument("--probe-kwargs", default=None,
                    help='JSON {probe: {kwarg: value}}: build those probes with these instead')  # fmt: skip
    ap.add_argument("--nltk-data", default=None, help="an NLTK data dir holding tokenizers/punkt_tab/english")
    ap.add_argument("--gest-csv", default=None, help=f"file read for {GEST_HUB_PATH} (GEST 1.0)")
    ap.add_argument("--log-dir", required=True, help="GenderBench's log_dir (probe log files)")
    ap.add_argument("--out", required=True, help="JSON file written")
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    names = probe_names(args.probes)
    apply_offline_patches(args.nltk_data, args.gest_csv)
    import genderbench

    w0, c0 = time.perf_counter(), time.process_time()
    harness, probes = build_probes(names, args)
    if args.rule:
        generator = rule_generator(args.rule)
        gen_info: dict[str, Any] = {"kind": "rule", "rule": args.rule}
    else:
        generator = api_generator(args.base_url, args.concurrency, args.model, args.api_key)
        gen_info = {"kind": "openai", "base_url": args.base_url, "concurrency": args.concurrency}
    setup = {"wall_seconds": time.perf_counter() - w0, "cpu_seconds": time.process_time() - c0}
    out: dict[str, Any] = {
        "genderbench": getattr(genderbench, "__version__", None) or _dist_version("genderbench"),
        "python": sys.version.split()[0],
        "generator": gen_info,
        "calculate_cis": args.cis,
        "bootstrap_cycles": args.bootstrap_cycles,
        "setup": {k: round(v, 4) for k, v in setup.items()},
        "probes": {},
    }
    try:
        for name in names:
            out["probes"][name] = result = run_probe(probes[name], generator, harness)
            print(
                f"{name}: {result['n_attempts']} attempts, wall {result['wall_seconds']['total']:.1f} s, "
                f"cpu {result['cpu_seconds']['total']:.1f} s",
                file=sys.stderr,
                flush=True,
            )
    finally:
        if hasattr(generator, "close"):
            generator.close()
        out["total"] = {
            f"{kind}_seconds": round(
                setup[f"{kind}_seconds"] + sum(p[f"{kind}_seconds"]["total"] for p in out["probes"].values()),
                4,
            )
            for kind in ("wall", "cpu")
        }
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(out, indent=1, allow_nan=False))
    return 0


def _dist_version(name: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return None


if __name__ == "__main__":
    raise SystemExit(main())
