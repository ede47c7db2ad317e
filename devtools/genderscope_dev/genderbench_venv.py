"""GenderBench 1.1.0 itself, in its own Python 3.12 venv, as the reference for genderscope's probes.

:func:`provision` installs ``genderbench==1.1.0`` from PyPI into a venv under
:func:`~genderscope_dev.engines.engines_dir` (the engines' recipe machinery: one folder per pinned
version, ``ready.json``, a file lock) and lays out an offline NLTK data folder there
(``nltk_data/tokenizers/punkt_tab/english/``, the four Punkt files from the data registry or mirror,
sha256-checked).  :func:`run_reference` runs :mod:`genderscope_dev.genderbench_runner` with that
venv's Python (the runner never imports genderscope), passing the NLTK folder and the registry's
``gest/gest.csv`` for GenderBench's hub path; the runner makes ``nltk.download`` a no-op, so nothing is
downloaded at run time.

    python -m genderscope_dev.genderbench_venv provision
    python -m genderscope_dev.genderbench_venv run --probes all --rule rule-a --out-dir OUT
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from genderscope_dev.engines import EngineRecipe, EngineUnavailable, _engine_env, _file_lock, provision

GENDERBENCH = EngineRecipe("genderbench", "3.12", ("genderbench==1.1.0",))
RUNNER = Path(__file__).with_name("genderbench_runner.py")

#: the Punkt English model GenderBench's evaluators use (``nltk.download("punkt_tab")``): data-mirror
#: name -> sha256 (from the llama-index-core 0.14.25 wheel, which bundles them; see the data MANIFEST)
PUNKT_DIR = "nltk/punkt_tab/english"
PUNKT_FILES = {
    f"{PUNKT_DIR}/abbrev_types.txt": "92a3e070f43d9b4c5534758ca40ad7343b04e7e29bfe0c2eb658a39445a4f779",
    f"{PUNKT_DIR}/collocations.tab": "8e2da1225e4dd2cc9dba261ee231ccb134859e21b46006e7f472c5ee269af0cf",
    f"{PUNKT_DIR}/ortho_context.tab": "4bbcca25ed3d3f06c02402abf8419b9f033b8adc06e7b482eca4e45f81a5dc4c",
    f"{PUNKT_DIR}/sent_starters.txt": "f3f8535483e1dba487241b764945168123bca3209a9645e59acd1225dc76edac",
}
GEST_CSV = "gest/gest.csv"  # GEST 1.0, what GenderBench reads from hf://datasets/kinit/gest/gest.csv


@dataclass(frozen=True)
class GenderBenchVenv:
    """A ready GenderBench venv: its Python, the offline NLTK data folder, the GEST 1.0 file."""

    venv: Path
    nltk_data: Path
    gest_csv: Path

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"


def data_file(name: str, sha256: str | None = None) -> Path:
    """A verified local copy of the data-mirror file ``name``: through the data registry when it pins the
    name, else from the mirror folder, checked against ``sha256``."""
    from genderscope.common.config import data_mirror
    from genderscope.common.errors import DataError
    from genderscope.data.registry import DataRegistry
    from genderscope.data.pins import sha256_file

    registry = DataRegistry()
    if name in registry.files:
        try:
            return registry.path(name)
        except DataError as exc:  # one line naming the file and the fix, as an unavailable engine
            raise EngineUnavailable(str(exc)) from None
    mirror = data_mirror()
    path = mirror / name if mirror else None
    if path is None or not path.is_file():
        raise EngineUnavailable(f"{name} is not in the data registry nor in the data mirror ({mirror})")
    if sha256 and sha256_file(path) != sha256:
        raise EngineUnavailable(f"{path}: sha256 differs from {sha256[:12]}…; restore the mirror's copy")
    return path


def install_nltk_data(target: Path) -> Path:
    """``target/tokenizers/punkt_tab/english/`` holding the four Punkt files (copied if missing)."""
    english = target / "tokenizers" / "punkt_tab" / "english"
    english.mkdir(parents=True, exist_ok=True)
    for name, digest in PUNKT_FILES.items():
        dest = english / Path(name).name
        if not dest.is_file():
            shutil.copyfile(data_file(name, digest), dest)
    return target


def provision_genderbench(quiet: bool = True) -> GenderBenchVenv:
    """The GenderBench venv, installed now if needed; raises EngineUnavailable (one line) without Python
    3.12 or without the Punkt and GEST files (checked before anything is installed)."""
    gest_csv = data_file(GEST_CSV)
    for name, digest in PUNKT_FILES.items():
        data_file(name, digest)
    venv = provision(GENDERBENCH, quiet=quiet)
    with _file_lock(venv.parent / f".{GENDERBENCH.key}.nltk.lock"):
        nltk_data = install_nltk_data(venv / "nltk_data")
    return GenderBenchVenv(venv, nltk_data, gest_csv)


def runner_command(
    gb: GenderBenchVenv,
    probes: Sequence[str],
    out: Path,
    log_dir: Path,
    rule: str | None = None,
    base_url: str | None = None,
    concurrency: int = 64,
    cis: bool = False,
    bootstrap_cycles: int | None = None,
    probe_kwargs: dict[str, dict[str, Any]] | None = None,
) -> list[str]:
    """The command line running GenderBench's probes with ``rule`` in process or against ``base_url``."""
    if (rule is None) == (base_url is None):
        raise ValueError("give exactly one of rule (in-process answers) and base_url (an OpenAI server)")
    cmd = [
        str(gb.python), str(RUNNER), "--probes", ",".join(probes), "--out", str(out),
        "--log-dir", str(log_dir), "--nltk-data", str(gb.nltk_data), "--gest-csv", str(gb.gest_csv),
        "--cis" if cis else "--no-cis",
    ]  # fmt: skip
    if rule is not None:
        cmd += ["--rule", rule]
    else:
        cmd += ["--base-url", str(base_url), "--concurrency", str(concurrency)]
    if bootstrap_cycles is not None:
        cmd += ["--bootstrap-cycles", str(bootstrap_cycles)]
    if probe_kwargs:
        cmd += ["--probe-kwargs", json.dumps(probe_kwargs)]
    return cmd


def run_reference(
    probes: Sequence[str],
    out_dir: Path,
    rule: str | None = None,
    base_url: str | None = None,
    quiet: bool = True,
    **options: Any,
) -> dict[str, Any]:
    """Run GenderBench on ``probes``; writes ``out_dir/genderbench.json`` and ``out_dir/logs/``, returns
    the JSON (see the runner's doc).  ``options``: ``concurrency``, ``cis``, ``bootstrap_cycles``,
    ``probe_kwargs``."""
    gb = provision_genderbench(quiet=quiet)
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / "genderbench.json"
    cmd = runner_command(gb, probes, out, out_dir / "logs", rule=rule, base_url=base_url, **options)
    env = _engine_env({"TQDM_DISABLE": "1"} if quiet else {})
    proc = subprocess.run(cmd, env=env, capture_output=quiet, text=True)
    if proc.returncode != 0:
        tail = (proc.stderr or "").strip().splitlines()[-5:] if quiet else []
        raise RuntimeError(f"GenderBench runner failed (exit {proc.returncode}): " + "\n".join(tail))
    return json.loads(out.read_text())


def _main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m genderscope_dev.genderbench_venv", description=__doc__.split("\n")[0]
    )
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("provision", help="install the GenderBench 1.1.0 venv (cached); prints its folder")
    r = sub.add_parser("run", help="run GenderBench's probes; writes OUT_DIR/genderbench.json and logs/")
    r.add_argument("--probes", default="all")
    r.add_argument("--out-dir", type=Path, required=True)
    how = r.add_mutually_exclusive_group(required=True)
    how.add_argument("--rule", help="in-process answers: rule-a or rule-b (genderscope_dev.answer_rules)")
    how.add_argument("--base-url", help="an OpenAI-compatible server (…/v1)")
    r.add_argument("--concurrency", type=int, default=64)
    r.add_argument("--cis", action=argparse.BooleanOptionalAction, default=False)
    r.add_argument("--bootstrap-cycles", type=int, default=None)
    args = ap.parse_args(argv)
    try:
        if args.cmd == "provision":
            gb = provision_genderbench(quiet=False)
            print(gb.venv)
            return 0
        probes = args.probes.split(",") if args.probes != "all" else ["all"]
        got = run_reference(
            probes, args.out_dir, rule=args.rule, base_url=args.base_url, quiet=False,
            concurrency=args.concurrency, cis=args.cis, bootstrap_cycles=args.bootstrap_cycles,
        )  # fmt: skip
    except EngineUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    rows = [(name, p["n_attempts"], p["wall_seconds"]["total"], p["cpu_seconds"]["total"])
            for name, p in got["probes"].items()]  # fmt: skip
    rows.append(("total", sum(r[1] for r in rows), got["total"]["wall_seconds"], got["total"]["cpu_seconds"]))
    for name, attempts, wall, cpu in rows:
        print(f"{name:22s} attempts {attempts:6d}  wall {wall:7.2f} s  cpu {cpu:7.2f} s")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    raise SystemExit(_main())
